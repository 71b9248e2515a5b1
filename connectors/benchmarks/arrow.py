"""Parquet with a field mapping, straight into the item schema: no per-row Python.

Why: converting records one by one (``FieldMapping.layout``) runs at ~50,000 items/s, slower than
the convention detectors themselves; a benchmark dump in Parquet whose mapped columns already
have the right types (strings, lists of strings, integer or string ids) needs only column
selection and casts. Anything else (a null, a list with a null element, a number where text is
expected, a string that is not UTF-8, a ``list_sep`` to split on) returns ``None`` and the caller
converts that batch row by row, which accepts or rejects it with the exact file/row/field message. So this path changes
speed only, never results or errors.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connectors.benchmarks.schema import ITEM_SCHEMA, LIST_FIELDS, TEXT_FIELDS, FieldMapping
from connectors.io.utf8 import invalid_rows


def _string(column: pa.Array) -> pa.Array | None:
    """The column as ``string`` when it holds valid UTF-8 strings without nulls, else ``None``."""
    kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)) or column.null_count:
        return None
    column = column.cast(pa.string())
    return None if invalid_rows(column) is not None else column


def _string_list(column: pa.Array) -> pa.Array | None:
    """A list-of-strings column without null lists or null elements, as ``list<string>``."""
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)) or column.null_count:
        return None
    values = _string(pc.list_flatten(column))
    if values is None:
        return None
    offsets = pc.subtract(column.offsets, column.offsets[0]).cast(pa.int32())
    return pa.ListArray.from_arrays(offsets, values)


def _columns_as_list(columns: list[pa.Array]) -> pa.Array:
    """Scalar columns A, B, C, D as one list per row ``[A, B, C, D]``."""
    n, k = len(columns[0]), len(columns)
    values = pa.concat_arrays(columns).take(pa.array((np.arange(k) * n + np.arange(n)[:, None]).ravel()))
    return pa.ListArray.from_arrays(pa.array(np.arange(0, n * k + 1, k, dtype=np.int32)), values)


def _list_field(batch: pa.RecordBatch, column: str | tuple[str, ...] | None, list_sep: str | None) -> pa.Array | None:
    n = batch.num_rows
    if not column:
        return pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, dtype=np.int32)), pa.array([], pa.string()))
    if isinstance(column, tuple):
        parts = [_string(batch.column(c)) for c in column]
        return None if any(p is None for p in parts) else _columns_as_list(parts)
    values = batch.column(column)
    single = _string(values)
    if single is not None:  # one string is a one-element list, unless it is to be split
        return None if list_sep is not None else pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32)), single)
    return _string_list(values)


def _ids(batch: pa.RecordBatch, column: str | None, stem: str, first_row: int) -> pa.Array | None:
    n = batch.num_rows
    positions = pa.array([f"{stem}:{first_row + i}" for i in range(n)], pa.string())
    if column is None:
        return positions
    values = batch.column(column)
    if pa.types.is_integer(values.type) and not values.null_count:
        return values.cast(pa.string())
    values = _string(values)
    if values is None:
        return None
    empty = pc.equal(pc.utf8_length(values), 0)
    return pc.if_else(empty, positions, values) if pc.any(empty).as_py() else values  # "" falls back to file:row


def arrow_items(batch: pa.RecordBatch, mapping: FieldMapping, benchmark: str, stem: str, first_row: int) -> pa.RecordBatch | None:
    """An ``ITEM_SCHEMA`` batch of ``batch`` (rows ``first_row`` on), or ``None`` to convert row by row."""
    columns = {"id": _ids(batch, mapping.id, stem, first_row),
               "benchmark": pa.array([benchmark] * batch.num_rows, pa.string())}
    for name in TEXT_FIELDS:
        source = getattr(mapping, name)
        columns[name] = _string(batch.column(source)) if source else pa.nulls(batch.num_rows, pa.string())
    for name in LIST_FIELDS:
        columns[name] = _list_field(batch, getattr(mapping, name), mapping.list_sep)
    if any(c is None for c in columns.values()):
        return None
    return pa.RecordBatch.from_arrays([columns[f.name] for f in ITEM_SCHEMA], schema=ITEM_SCHEMA)
