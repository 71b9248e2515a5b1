"""The convention-detection stage: an item batch in, one row per signal out.

All text fields of a batch (question, passage, instructions, every option and gold answer) are
laid out as one flat Arrow string array, so each detector runs once per batch over one array:
RE2 prefilters and one Aho-Corasick pass, instead of per-item Python. ``ConventionDetector`` is the
stateful stage (the automaton is built once, in ``__init__``) that a Ray actor or task calls.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.conventions import dates, times, units
from audit.conventions.choices import FIELDS
from audit.conventions.signals import SIGNAL_SCHEMA, Hit
from audit.conventions.spelling import SpellingDetector

_REGEX_DETECTORS = (dates.find_dates, times.find_times, units.find_units)
# One RE2 pass picks the strings any regex detector could match (~3% of them); each detector's
# own prefilter then runs on that small subset only.
_ANY_PREFILTER = "|".join(f"(?:{m.PREFILTER})" for m in (dates, times, units))


@dataclass(frozen=True)
class DetectorConfig:
    """Which fields to scan and whether lexical pairs (gasoline/petrol) count."""

    fields: tuple[str, ...] = FIELDS
    include_lexical: bool = False

    def __post_init__(self) -> None:
        unknown = [f for f in self.fields if f not in FIELDS]
        if unknown or not self.fields:
            raise ValueError(f"fields must be a non-empty subset of {FIELDS}, got {self.fields}")


DEFAULT_CONFIG = DetectorConfig()


@dataclass(frozen=True)
class FlatTexts:
    """Every scanned string of a batch with the item row, field and list element it came from."""

    texts: pa.StringArray
    row: np.ndarray
    field: np.ndarray  # index into DetectorConfig.fields
    element: np.ndarray


def flatten_fields(items: pa.Table | pa.RecordBatch, fields: tuple[str, ...]) -> FlatTexts:
    """Lay the fields out as one string array; null texts and null lists contribute nothing."""
    texts, rows, codes, elements = [], [], [], []
    for code, name in enumerate(fields):
        column = items.column(name)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if pa.types.is_list(column.type):
            flat = pc.list_flatten(column)
            row = pc.list_parent_indices(column).to_numpy()
            starts = column.offsets.to_numpy()[:-1] - column.offsets[0].as_py()
            element = np.arange(len(flat)) - np.repeat(starts, pc.list_value_length(column).fill_null(0).to_numpy())
        else:
            flat, row, element = column, np.arange(len(column)), np.zeros(len(column), dtype=np.int64)
        keep = pc.is_valid(flat).to_numpy(zero_copy_only=False)
        texts.append(flat.filter(pa.array(keep)).cast(pa.string()))
        rows.append(row[keep])
        elements.append(element[keep])
        codes.append(np.full(int(keep.sum()), code))
    return FlatTexts(
        texts=pa.concat_arrays(texts),
        row=np.concatenate(rows), field=np.concatenate(codes), element=np.concatenate(elements),
    )


class ConventionDetector:
    """Finds every convention signal (spelling, lexical, dates, times, units) in item batches."""

    def __init__(self, config: DetectorConfig = DEFAULT_CONFIG) -> None:
        self.config = config
        self._spelling = SpellingDetector(config.include_lexical)

    def hits(self, texts: pa.StringArray) -> list[Hit]:
        """All detectors over one flat string array."""
        hits = self._spelling.find(texts)
        mask = pc.fill_null(pc.match_substring_regex(texts, _ANY_PREFILTER), False)
        subset, positions = texts.filter(mask), pc.indices_nonzero(mask).to_numpy()
        for find in _REGEX_DETECTORS:
            hits.extend(h._replace(unit=int(positions[h.unit])) for h in find(subset))
        return hits

    def __call__(self, items: pa.Table | pa.RecordBatch) -> pa.Table:
        """``SIGNAL_SCHEMA`` rows for an ``ITEM_SCHEMA`` batch, ordered by row, field, offset."""
        flat = flatten_fields(items, self.config.fields)
        hits = self.hits(flat.texts)
        if not hits:
            return SIGNAL_SCHEMA.empty_table()
        unit_index = np.fromiter((h.unit for h in hits), dtype=np.int64, count=len(hits))
        rows = flat.row[unit_index]
        fields = np.asarray(self.config.fields, dtype=object)[flat.field[unit_index]]
        strings = flat.texts.take(pa.array(unit_index)).to_pylist()
        repeats = [False] * len(hits)
        if "options" in self.config.fields:  # a repeat counts once, where the options have it
            options = items.column("options")
            for i, (name, row, string) in enumerate(zip(fields, rows.tolist(), strings)):
                if name == "gold":
                    repeats[i] = string in (options[row].as_py() or ())
        table = pa.table({
            "benchmark": items.column("benchmark").take(pa.array(rows)),
            "item_id": items.column("id").take(pa.array(rows)),
            "row": pa.array(rows, pa.int32()),
            "field": pa.array(fields.tolist(), pa.string()),
            "element": pa.array(flat.element[unit_index], pa.int32()),
            "start": pa.array([h.start for h in hits], pa.int32()),
            "end": pa.array([h.end for h in hits], pa.int32()),
            "text": pa.array([s[h.start:h.end] for s, h in zip(strings, hits)], pa.string()),
            "category": pa.array([h.category for h in hits], pa.string()),
            "variety": pa.array([h.variety for h in hits], pa.string()),
            "detail": pa.array([h.detail for h in hits], pa.string()),
            "repeats_option": pa.array(repeats, pa.bool_()),
        }, schema=SIGNAL_SCHEMA)
        order = np.lexsort((table.column("start").to_numpy(), flat.element[unit_index], flat.field[unit_index], rows))
        return table.take(pa.array(order))
