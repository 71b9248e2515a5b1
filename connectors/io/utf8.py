"""UTF-8 validity per row, without per-row Python on clean data.

Why: Parquet and CSV readers hand string columns over unchecked, and one invalid value makes every
later compute kernel (trim, regex, the resolver) fail the whole batch, so a shard was lost for one
bad row. Arrow has no per-row validity kernel, but validating an array is a fast whole-buffer check:
a clean batch costs one check, and a batch with ``k`` bad values is bisected in ``O(k log n)`` checks
of ever smaller slices, so the bad rows are found and counted while the rest is kept.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _as_string_view(arr: pa.Array) -> pa.Array:
    if pa.types.is_binary(arr.type):
        return arr.view(pa.string())
    if pa.types.is_large_binary(arr.type):
        return arr.view(pa.large_string())
    return arr


def _is_valid(arr: pa.Array) -> bool:
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _bad_positions(arr: pa.Array, offset: int, out: list[int]) -> None:
    if _is_valid(arr):
        return
    if len(arr) == 1:
        out.append(offset)
        return
    half = len(arr) // 2
    _bad_positions(arr.slice(0, half), offset, out)
    _bad_positions(arr.slice(half), offset + half, out)


def invalid_rows(arr: pa.Array) -> np.ndarray | None:
    """A boolean mask of the values of a string or binary array that are not valid UTF-8; ``None`` when all are."""
    view = _as_string_view(arr)
    if _is_valid(view):
        return None
    bad: list[int] = []
    _bad_positions(view, 0, bad)
    mask = np.zeros(len(arr), dtype=bool)
    mask[bad] = True
    return mask


def valid_strings(arr: pa.Array) -> tuple[pa.Array, np.ndarray | None]:
    """(the values as ``string`` with invalid ones nulled, mask of the invalid ones or ``None``)."""
    view = _as_string_view(arr)
    mask = invalid_rows(view)
    if mask is not None:
        view = pc.if_else(pa.array(mask), pa.scalar(None, view.type), view)
    return (view.cast(pa.string()) if pa.types.is_large_string(view.type) else view), mask


def encodable(value: object) -> bool:
    """False for a Python string Arrow cannot store: one holding a lone surrogate (JSON ``"\\ud800"``)."""
    if not isinstance(value, str):
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
