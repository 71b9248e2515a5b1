"""The byte path of the normalizer (``audit.geo.normalize._normalize_ascii``) as one compiled pass.

Why compiled: the same result from Arrow kernels took a byte translation into a Python ``bytes``, a
whitespace split into a list array and two joins, five passes and four copies of every caption, about
half of what resolving a caption with the ``paper`` lexicon cost. One loop per record writes the
normalized bytes once. numba ships as wheels (its LLVM included), so this needs no compiler on a
user's machine; the machine code is cached beside this file, so a worker compiles it once, not per
process.

The rule, for each record: ``SEP``, then its bytes through ``table`` with every run of spaces written
as one ``SEP``, then ``SEP``; exactly what a whitespace split and a join with ``SEP`` give once every
ASCII byte that is no letter or digit is a space (the split keeps the empty tokens a leading or
trailing run leaves, so such a run is a separator like any other).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

_SPACE = 32


@njit(cache=True, nogil=True)
def normalize_pass(data, offsets, table, out, out_offsets) -> int:
    """Write every record of ``data``/``offsets`` normalized into ``out`` (sized ≥ 2·bytes + 4·records:
    a byte becomes at most a separator, and each record gains two); fills ``out_offsets``, returns
    the bytes written."""
    w = 0
    for i in range(len(offsets) - 1):
        out_offsets[i] = w
        out[w] = _SPACE
        out[w + 1] = _SPACE
        w += 2
        in_run = False
        for j in range(offsets[i], offsets[i + 1]):
            c = table[data[j]]
            if c == _SPACE:
                if not in_run:
                    out[w] = _SPACE
                    out[w + 1] = _SPACE
                    w += 2
                    in_run = True
            else:
                out[w] = c
                w += 1
                in_run = False
        out[w] = _SPACE
        out[w + 1] = _SPACE
        w += 2
    out_offsets[len(offsets) - 1] = w
    return w


def normalize_bytes(data: np.ndarray, offsets: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(normalized bytes, their int32 offsets) of the records ``offsets`` delimits in ``data``."""
    n = len(offsets) - 1
    size = 2 * int(offsets[-1] - offsets[0]) + 4 * n
    if size > np.iinfo(np.int32).max:
        raise ValueError(f"{n} records would normalize to more than 2 GiB; normalize them in smaller batches")
    out = np.empty(max(size, 1), dtype=np.uint8)
    out_offsets = np.empty(n + 1, dtype=np.int32)
    written = normalize_pass(data, offsets, table, out, out_offsets)
    return out[:written], out_offsets


@njit(cache=True, nogil=True)
def _digit_pass(data, offsets, out) -> None:
    for i in range(len(offsets) - 1):
        for j in range(offsets[i], offsets[i + 1]):
            if 48 <= data[j] <= 57:
                out[i] = True
                break


def string_buffers(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, int32 offsets) of a ``string`` array's records, read in place (no copy; slices respected)."""
    n = len(texts)
    offsets_buf, data_buf = texts.buffers()[1:3]
    offsets = np.frombuffer(offsets_buf, dtype=np.int32, count=n + 1, offset=texts.offset * 4)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None and data_buf.size else np.zeros(1, np.uint8)
    return data, offsets


def rows_with_digit(texts: pa.Array) -> np.ndarray:
    """Which records of a ``string`` array hold an ASCII digit: the address formats' cheap first test (every
    postal code has one, few captions do), a pass that stops at a record's first digit."""
    data, offsets = string_buffers(texts)
    out = np.zeros(len(texts), dtype=np.bool_)
    _digit_pass(data, offsets, out)
    return out
