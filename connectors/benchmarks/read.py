"""Reading benchmarks into ``ITEM_SCHEMA`` batches, file by file or by item range.

The layout is chosen per file from its columns before any row is converted (a mapped column the
file lacks is reported with the file and column); an empty benchmark is an error naming the files.
A bad row (not JSON, wrong width, a field of the wrong type, a duplicate id) raises an error naming
file, row and field, or, under ``on_bad_row="skip"``, is counted in the ``ReadReport`` by reason and
left out. A file bad as a whole (cut short, not the format its name says) always raises
``BenchmarkError`` naming it; a failing byte source raises ``ReadIOError``.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from connectors.benchmarks.arrow import arrow_items
from connectors.benchmarks.formats import arrow_rows, guess_format
from connectors.benchmarks.schema import (
    BATCH_ROWS,
    ITEM_SCHEMA,
    LIST_FIELDS,
    TEXT_FIELDS,
    BadRecord,
    BenchmarkError,
    Layout,
    RowRef,
)
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.io.fs import expand, open_input, store_problem
from connectors.io.read_report import InputError, OnBadRow, ReadReport, RowFaults, input_errors
from connectors.io.utf8 import encodable

_EXTENSIONS = (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet", ".pq", ".arrow",
               ".txt", ".gz", ".bz2")


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
    try:
        fs, path = fsspec.core.url_to_fs(url)
        return fs.isdir(path) and (fs.exists(f"{path}/state.json") or fs.exists(f"{path}/dataset_dict.json"))
    except Exception as exc:  # the first touch of a store: its setup problems named as ``expand`` names them
        problem = store_problem(url, exc)
        if problem is None:
            raise
        raise InputError(problem) from None


def iter_file_batches(spec: BenchmarkSpec, path: str, batch_size: int = BATCH_ROWS,
                      rows: tuple[int, int | None] = (0, None),
                      seen: dict[str, str] | None = None, *, on_bad_row: OnBadRow = "raise",
                      report: ReadReport | None = None) -> Iterator[pa.RecordBatch]:
    """``ITEM_SCHEMA`` batches of one input file, converting only rows ``[start, stop)``.

    Why a row range: a distributed job splits a large file into item ranges, one task each;
    rows outside the range are read but not converted, and ids and error messages keep the
    file's own row numbers. ``seen`` (id -> "file row N") lets a caller check ids across files.
    ``report`` (required with ``on_bad_row="skip"``) counts the rows of the range: ``rows_in``
    (yielded and skipped), skips by reason with the first messages, and unread byte ranges.
    """
    seen = {} if seen is None else seen
    faults = RowFaults(on_bad_row, report)
    with input_errors(path, BenchmarkError):
        if spec.mapping is not None and (spec.format or guess_format(path)) == "parquet":
            batches = _parquet_mapping_batches(spec, path, batch_size, rows, seen, faults)
        else:
            batches = _record_batches(spec, path, batch_size, rows, seen, faults)
        for batch in batches:
            if report is not None:
                report.rows_in += batch.num_rows
            yield batch


def _record_batches(spec: BenchmarkSpec, path: str, batch_size: int, rows: tuple[int, int | None],
                    seen: dict[str, str], faults: RowFaults) -> Iterator[pa.RecordBatch]:
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
        if row < start:
            continue
        if isinstance(record, BadRecord):
            _bad_record(record, faults)
            continue
        try:
            batch.append(_convert(layout, record, RowRef(path, row), name, stem, seen))
        except BenchmarkError as exc:
            if exc.reason is None:
                raise
            faults(exc.reason, exc)
        if len(batch) == batch_size:
            yield _to_batch(batch)
            batch = []
    if batch:
        yield _to_batch(batch)


def _bad_record(record: BadRecord, faults: RowFaults) -> None:
    if record.unread is None or faults.policy == "raise":
        faults(record.error.reason or "malformed_row", record.error)
        return
    start, stop, lines = record.unread
    faults.report.add_unread(start, stop, lines, why=str(record.error))  # type: ignore[union-attr]


def _stem(path: str) -> str:
    return Path(path.rstrip("/")).name.split(".")[0]


def _convert(layout: Layout, record: Any, ref: RowRef, name: str, stem: str, seen: dict[str, str]) -> dict[str, Any]:
    """One record as an item dict; its id (or ``file:row``) must be new in ``seen``."""
    if not isinstance(record, dict):
        raise BenchmarkError(f"{ref.source}: row {ref.row}: expected an object, got {type(record).__name__}", "not_an_object")
    try:
        item = layout.convert(record, ref)
    except KeyError as exc:
        raise ref.error(str(exc.args[0]), "missing") from exc
    for field in (*TEXT_FIELDS, *LIST_FIELDS):
        values = item.get(field)
        for value in values if isinstance(values, list) else [values]:
            if not encodable(value):
                raise BenchmarkError(f"{ref.source}: row {ref.row}, field {field!r}: a lone surrogate, not UTF-8", "invalid_utf8")
    item_id = item.get("id") or f"{stem}:{ref.row}"
    _claim(seen, item_id, ref)
    return {**item, "id": item_id, "benchmark": name}


def _claim(seen: dict[str, str], item_id: str, ref: RowRef) -> None:
    if item_id in seen:
        raise BenchmarkError(f"{ref.source}: row {ref.row}, field 'id': duplicate id {item_id!r} (first seen in "
                             f"{seen[item_id]})", "duplicate_id")
    seen[item_id] = f"{ref.source} row {ref.row}"


def _parquet_mapping_batches(spec: BenchmarkSpec, path: str, batch_size: int, rows: tuple[int, int | None],
                             seen: dict[str, str], faults: RowFaults) -> Iterator[pa.RecordBatch]:
    """Parquet with a field mapping: only the mapped columns are read, batch by batch, and typed
    columns go straight into the item schema (``connectors.benchmarks.arrow``); a batch it cannot take is
    converted row by row, which gives the same items or the same error."""
    mapping = spec.mapping
    layout = mapping.layout()  # type: ignore[union-attr]
    name, stem = spec.benchmark_name(), _stem(path)
    start, stop = rows
    with open_input(path, compression=None) as handle:
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
                converted = []
                for i, record in enumerate(arrow_rows(raw, path, lo)):
                    try:
                        if isinstance(record, BadRecord):
                            raise record.error
                        converted.append(_convert(layout, record, RowRef(path, lo + i), name, stem, seen))
                    except BenchmarkError as exc:
                        if exc.reason is None:
                            raise
                        faults(exc.reason, exc)
                items = _to_batch(converted)
            else:
                keep = []
                for i, item_id in enumerate(items.column("id").to_pylist()):
                    try:
                        _claim(seen, item_id, RowRef(path, lo + i))
                        keep.append(True)
                    except BenchmarkError as exc:
                        faults(exc.reason, exc)  # type: ignore[arg-type]
                        keep.append(False)
                items = items if all(keep) else items.filter(pa.array(keep))
            if items.num_rows:
                yield items


def iter_benchmark_batches(spec: BenchmarkSpec, batch_size: int = BATCH_ROWS, *, on_bad_row: OnBadRow = "raise",
                           report: ReadReport | None = None) -> Iterator[pa.RecordBatch]:
    """Yield ``ITEM_SCHEMA`` batches of at most ``batch_size`` items, file by file.

    The layout is chosen per file from its columns before any row is converted; duplicate ids
    across the whole input and an input without items raise ``BenchmarkError`` (under
    ``on_bad_row="skip"`` duplicates are counted in ``report`` instead; an input with no usable
    item still raises).
    """
    seen: dict[str, str] = {}
    total = 0
    for path in benchmark_files(spec):
        for batch in iter_file_batches(spec, path, batch_size, seen=seen, on_bad_row=on_bad_row, report=report):
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
        default: list | None = [] if field.name in LIST_FIELDS else None
        arrays.append(pa.array([r.get(field.name, default) for r in rows], field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=ITEM_SCHEMA)
