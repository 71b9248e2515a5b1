"""The one item schema every benchmark becomes, and the pieces that convert a record into it.

Every benchmark becomes rows of ``ITEM_SCHEMA`` (id, benchmark, question, passage, instructions,
options, gold), the schema the convention audit and the model-based audits share. Gold answers
are the answer *texts* (the option a letter points to), because scorers and convention detectors
need text, not letters. Unmapped text fields are null; unmapped list fields are empty lists.

Bad input fails loudly, never by dropping rows unseen: a value of the wrong type names file, row and
column (``RowRef.error``). A row-level error carries its ``SKIP_REASONS`` code (``BenchmarkError.reason``)
so a reader under the skip policy counts it instead; a file-level error has none and always raises.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from connectors.io.read_report import InputError

ITEM_SCHEMA = pa.schema([
    ("id", pa.string()),
    ("benchmark", pa.string()),
    ("question", pa.string()),
    ("passage", pa.string()),
    ("instructions", pa.string()),
    ("options", pa.list_(pa.string())),
    ("gold", pa.list_(pa.string())),
])
TEXT_FIELDS = ("question", "passage", "instructions")
LIST_FIELDS = ("options", "gold")
BATCH_ROWS = 10_000


class BenchmarkError(InputError):
    """Bad benchmark input; the message names the file and, where known, the row and column.

    ``reason`` (a ``connectors.io.read_report.SKIP_REASONS`` code) marks an error confined to one row,
    which the skip policy may count instead of raising; ``None`` means the whole input is bad.
    """

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class BadRecord:
    """A record a reader could not produce, yielded in its place so later rows keep their numbers.

    ``unread`` is ``(start, stop, lines)`` when the reader gave up on a byte range it could not split
    into rows (counted as unread, not as one skipped row).
    """

    error: BenchmarkError
    unread: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class RowRef:
    """Where a record came from, so every conversion error can name file and row (0-based)."""

    source: str
    row: int

    def error(self, column: str, problem: str) -> BenchmarkError:
        reason = "missing_field" if problem == "missing" else "invalid_field"
        return BenchmarkError(f"{self.source}: row {self.row}, field {column!r}: {problem}", reason)


def text(record: dict[str, Any], column: str, ref: RowRef) -> str:
    """The string in ``record[column]``; anything else (missing, null, number) is an error."""
    if column not in record:
        raise ref.error(column, "missing")
    value = record[column]
    if not isinstance(value, str):
        raise ref.error(column, f"expected a string, got {type(value).__name__} {value!r:.60}")
    return value


def texts(record: dict[str, Any], column: str, ref: RowRef, sep: str | None = None) -> list[str]:
    """A list of strings from a list column, or from a string column split on ``sep``."""
    if column not in record:
        raise ref.error(column, "missing")
    value = record[column]
    if isinstance(value, str) and sep is not None:
        return [part.strip() for part in value.split(sep) if part.strip()]
    if not isinstance(value, (list, tuple)):
        raise ref.error(column, f"expected a list of strings, got {type(value).__name__} {value!r:.60}")
    for i, element in enumerate(value):
        if not isinstance(element, str):
            raise ref.error(column, f"element {i}: expected a string, got {type(element).__name__}")
    return list(value)


def pick(options: list[str], key: object, ref: RowRef, column: str,
         labels: Sequence[str] | None = None) -> str:
    """The option a gold key points to: a 0-based index, a digit string, or one of ``labels``."""
    if labels is not None:
        if key not in labels:
            raise ref.error(column, f"answer {key!r} is not one of the labels {list(labels)}")
        index = next(i for i, label in enumerate(labels) if label == key)
    elif isinstance(key, int) and not isinstance(key, bool):
        index = key
    elif isinstance(key, str) and key.strip().isdigit():
        index = int(key)
    else:
        raise ref.error(column, f"expected an option index, got {key!r:.60}")
    if not 0 <= index < len(options):
        raise ref.error(column, f"answer index {index} outside the {len(options)} options")
    return options[index]


@dataclass(frozen=True)
class Layout:
    """One raw layout of a benchmark: the columns it needs and how one record becomes an item.

    ``convert`` returns a dict with ``id`` (or None for a position-derived id) and any of the
    item fields; it raises through ``RowRef.error`` on bad values.
    """

    name: str
    columns: tuple[str, ...]
    convert: Callable[[dict[str, Any], RowRef], dict[str, Any]]


@dataclass(frozen=True)
class FieldMapping:
    """Source columns for each item field, for benchmarks without a preset.

    ``options``/``gold`` name one list column (or a string column split on ``list_sep``), or a
    tuple of scalar columns (``("A", "B", "C", "D")``). ``id=None`` derives ids from file and row.
    """

    question: str
    id: str | None = None
    passage: str | None = None
    instructions: str | None = None
    options: str | tuple[str, ...] | None = None
    gold: str | tuple[str, ...] | None = None
    list_sep: str | None = None

    def columns(self) -> tuple[str, ...]:
        cols: list[str] = []
        for value in (self.id, self.question, self.passage, self.instructions, self.options, self.gold):
            if isinstance(value, tuple):
                cols.extend(value)
            elif value:
                cols.append(value)
        return tuple(dict.fromkeys(cols))

    def layout(self) -> Layout:
        def convert(record: dict[str, Any], ref: RowRef) -> dict[str, Any]:
            item: dict[str, Any] = {"id": None if self.id is None else _id(record, self.id, ref)}
            for name in TEXT_FIELDS:
                column = getattr(self, name)
                if column:
                    item[name] = text(record, column, ref)
            for name in LIST_FIELDS:
                column = getattr(self, name)
                if isinstance(column, tuple):
                    item[name] = [text(record, c, ref) for c in column]
                elif column and isinstance(record.get(column), str) and self.list_sep is None:
                    item[name] = [text(record, column, ref)]
                elif column:
                    item[name] = texts(record, column, ref, self.list_sep)
            return item

        return Layout("mapping", self.columns(), convert)


def _id(record: dict[str, Any], column: str, ref: RowRef) -> str:
    """Ids may be numbers in the source (HellaSwag ``ind``); anything else is an error."""
    if column not in record:
        raise ref.error(column, "missing")
    value = record[column]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ref.error(column, f"expected a string or integer id, got {type(value).__name__}")
    return str(value)
