"""Text benchmarks (JSONL, JSON, CSV, Parquet, Hugging Face datasets on disk) in one item schema.

Every benchmark becomes rows of ``ITEM_SCHEMA`` (id, benchmark, question, passage, instructions,
options, gold), the schema the convention audit and the later model-based audits share. A
benchmark is read either through a preset (``connectors/benchmark_presets.py``: the real layouts
of MMLU, ARC, TruthfulQA, ...) or through a ``FieldMapping`` naming the source columns.

Bad input fails loudly, before or while reading, never by dropping rows: a mapped column that the
file lacks is reported (file and column) before any row is converted, a value of the wrong type
names file, row and column, and an empty benchmark or duplicate id is an error.

Gold answers are the answer *texts* (the option a letter points to), because scorers and
convention detectors need text, not letters. Unmapped text fields are null; unmapped list fields
are empty lists.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from connectors.fs import expand

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
FORMATS = ("jsonl", "json", "csv", "parquet", "hf", "text")  # see benchmark_presets.read_records
_EXTENSIONS = (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet", ".pq", ".arrow",
               ".txt", ".gz", ".bz2")
BATCH_ROWS = 10_000


class BenchmarkError(ValueError):
    """Bad benchmark input; the message names the file and, where known, the row and column."""


@dataclass(frozen=True)
class RowRef:
    """Where a record came from, so every conversion error can name file and row (0-based)."""

    source: str
    row: int

    def error(self, column: str, problem: str) -> BenchmarkError:
        return BenchmarkError(f"{self.source}: row {self.row}, field {column!r}: {problem}")


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
        index = list(labels).index(key)
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


@dataclass(frozen=True)
class BenchmarkSpec:
    """What to read: input path(s) or glob(s), and a preset name or a field mapping (not both).

    ``name`` fills the ``benchmark`` column (default: the preset name, else the first file's
    stem). ``split`` picks a split of a Hugging Face ``DatasetDict`` folder. ``format`` overrides
    the guess from the extension.
    """

    input: str | tuple[str, ...]
    preset: str | None = None
    mapping: FieldMapping | None = None
    name: str | None = None
    split: str | None = None
    format: str | None = None
    encoding: str = "utf-8"

    def __post_init__(self) -> None:
        if (self.preset is None) == (self.mapping is None):
            raise BenchmarkError(f"{self.input}: give exactly one of preset= or mapping=")
        if self.preset is not None and self.preset not in _presets():
            raise BenchmarkError(f"unknown preset {self.preset!r}; known: {sorted(_presets())}")
        if self.format is not None and self.format not in FORMATS:
            raise BenchmarkError(f"{self.input}: unknown format {self.format!r}; known: {FORMATS}")

    @property
    def inputs(self) -> tuple[str, ...]:
        return (self.input,) if isinstance(self.input, str) else tuple(self.input)

    def layouts(self) -> tuple[Layout, ...]:
        return _presets()[self.preset].layouts if self.preset else (self.mapping.layout(),)  # type: ignore[union-attr]

    def benchmark_name(self) -> str:
        return self.name or self.preset or Path(self.inputs[0].rstrip("/")).name.split(".")[0]

    def read_records(self, path: str) -> tuple[list[str], Iterator[dict]]:
        """(column names, records) of one input file, through the preset's reader if it has one."""
        from connectors.benchmark_presets import read_records

        preset = _presets()[self.preset] if self.preset else None
        return read_records(path, self.format, preset, self.split, self.encoding)


def _presets() -> dict:
    """The preset table, imported late: presets build on this module's helpers."""
    from connectors.benchmark_presets import PRESETS

    return PRESETS


def benchmark_files(spec: BenchmarkSpec) -> list[str]:
    """Input files in order; an HF dataset folder stays one input."""
    out: list[str] = []
    for item in spec.inputs:
        if _is_hf_folder(item):
            out.append(item)
        else:
            out.extend(ref.url for ref in expand(item, _EXTENSIONS))
    return out


def _is_hf_folder(url: str) -> bool:
    """A ``save_to_disk`` folder (``Dataset`` or ``DatasetDict``): read as one input."""
    fs, path = fsspec.core.url_to_fs(url)
    return fs.isdir(path) and (fs.exists(f"{path}/state.json") or fs.exists(f"{path}/dataset_dict.json"))


def iter_file_batches(spec: BenchmarkSpec, path: str, batch_size: int = BATCH_ROWS,
                      rows: tuple[int, int | None] = (0, None),
                      seen: dict[str, str] | None = None) -> Iterator[pa.RecordBatch]:
    """``ITEM_SCHEMA`` batches of one input file, converting only rows ``[start, stop)``.

    Why a row range: a distributed job splits a large file into item ranges, one task each;
    rows outside the range are read but not converted, and ids and error messages keep the
    file's own row numbers. ``seen`` (id -> "file row N") lets a caller check ids across files.
    """
    from connectors.benchmark_presets import guess_format

    seen = {} if seen is None else seen
    if spec.mapping is not None and (spec.format or guess_format(path)) == "parquet":
        yield from _parquet_mapping_batches(spec, path, batch_size, rows, seen)
        return
    columns, records = spec.read_records(path)
    if not columns:  # an empty file: no rows, nothing to check
        return
    layout = choose_layout(spec.layouts(), columns, path)
    name, stem = spec.benchmark_name(), _stem(path)
    start, stop = rows
    batch: list[dict[str, Any]] = []
    for row, record in enumerate(records):
        if stop is not None and row >= stop:
            break
        if row >= start:
            batch.append(_convert(layout, record, RowRef(path, row), name, stem, seen))
        if len(batch) == batch_size:
            yield _to_batch(batch)
            batch = []
    if batch:
        yield _to_batch(batch)


def _stem(path: str) -> str:
    return Path(path.rstrip("/")).name.split(".")[0]


def _convert(layout: Layout, record: Any, ref: RowRef, name: str, stem: str, seen: dict[str, str]) -> dict[str, Any]:
    """One record as an item dict; its id (or ``file:row``) must be new in ``seen``."""
    if not isinstance(record, dict):
        raise BenchmarkError(f"{ref.source}: row {ref.row}: expected an object, got {type(record).__name__}")
    try:
        item = layout.convert(record, ref)
    except KeyError as exc:
        raise ref.error(str(exc.args[0]), "missing") from exc
    item_id = item.get("id") or f"{stem}:{ref.row}"
    _claim(seen, item_id, ref)
    return {**item, "id": item_id, "benchmark": name}


def _claim(seen: dict[str, str], item_id: str, ref: RowRef) -> None:
    if item_id in seen:
        raise ref.error("id", f"duplicate id {item_id!r} (first seen in {seen[item_id]})")
    seen[item_id] = f"{ref.source} row {ref.row}"


def _parquet_mapping_batches(spec: BenchmarkSpec, path: str, batch_size: int, rows: tuple[int, int | None],
                             seen: dict[str, str]) -> Iterator[pa.RecordBatch]:
    """Parquet with a field mapping: only the mapped columns are read, batch by batch, and typed
    columns go straight into the item schema (``benchmark_arrow``); a batch it cannot take is
    converted row by row, which gives the same items or the same error."""
    from connectors.benchmark_arrow import arrow_items

    mapping = spec.mapping
    layout = mapping.layout()  # type: ignore[union-attr]
    name, stem = spec.benchmark_name(), _stem(path)
    start, stop = rows
    with fsspec.open(path, "rb") as handle:
        parquet = pq.ParquetFile(handle)
        choose_layout((layout,), parquet.schema_arrow.names, path)
        offset = 0
        for raw in parquet.iter_batches(batch_size=batch_size, columns=list(layout.columns)):
            first, offset = offset, offset + raw.num_rows
            lo, hi = max(start, first), offset if stop is None else min(offset, stop)
            if hi <= lo:
                if stop is not None and first >= stop:
                    break
                continue
            raw = raw.slice(lo - first, hi - lo)
            items = arrow_items(raw, mapping, name, stem, lo)  # type: ignore[arg-type]
            if items is None:
                items = _to_batch([_convert(layout, r, RowRef(path, lo + i), name, stem, seen)
                                   for i, r in enumerate(raw.to_pylist())])
            else:
                for i, item_id in enumerate(items.column("id").to_pylist()):
                    _claim(seen, item_id, RowRef(path, lo + i))
            yield items


def iter_benchmark_batches(spec: BenchmarkSpec, batch_size: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """Yield ``ITEM_SCHEMA`` batches of at most ``batch_size`` items, file by file.

    The layout is chosen per file from its columns before any row is converted; duplicate ids
    across the whole input and an input without items raise ``BenchmarkError``.
    """
    seen: dict[str, str] = {}
    total = 0
    for path in benchmark_files(spec):
        for batch in iter_file_batches(spec, path, batch_size, seen=seen):
            total += batch.num_rows
            yield batch
    if total == 0:
        raise BenchmarkError(f"{', '.join(spec.inputs)}: benchmark {spec.benchmark_name()!r} has no items")


def read_benchmark(spec: BenchmarkSpec) -> pa.Table:
    """The whole benchmark as one ``ITEM_SCHEMA`` table (benchmarks are small; see the iterator)."""
    return pa.Table.from_batches(list(iter_benchmark_batches(spec)), schema=ITEM_SCHEMA)


def choose_layout(layouts: Sequence[Layout], columns: Sequence[str], source: str) -> Layout:
    """The first layout whose columns the file has; else an error naming the missing columns."""
    for layout in layouts:
        if all(c in columns for c in layout.columns):
            return layout
    wanted = "; ".join(
        f"{layout.name}: missing {[c for c in layout.columns if c not in columns]}" for layout in layouts
    )
    raise BenchmarkError(f"{source}: mapped field(s) not found ({wanted}); file has columns {list(columns)}")


def _to_batch(rows: list[dict[str, Any]]) -> pa.RecordBatch:
    arrays = []
    for field in ITEM_SCHEMA:
        default = [] if field.name in LIST_FIELDS else None
        arrays.append(pa.array([r.get(field.name, default) for r in rows], field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=ITEM_SCHEMA)
