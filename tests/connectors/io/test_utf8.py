"""Per-row UTF-8 validity: the bisection finds exactly the rows Python's decoder rejects."""
from __future__ import annotations

import random

import numpy as np
import pyarrow as pa

from connectors.io.utf8 import encodable, invalid_rows, valid_strings


def python_mask(values: list[bytes | None]) -> np.ndarray:
    def bad(v: bytes | None) -> bool:
        if v is None:
            return False
        try:
            v.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    return np.array([bad(v) for v in values])


def test_invalid_rows_match_the_decoder_on_random_mixes():
    rng = random.Random(13)
    pool = [b"Japan ok", "Zürich".encode(), b"\xff", b"ok \xc3", "Italy \ud800".encode("utf-8", "surrogatepass"), b"", None]
    for n in (1, 2, 7, 100, 1000):
        values = [rng.choice(pool) for _ in range(n)]
        for kind in (pa.binary(), pa.large_binary()):
            arr = pa.array(values, kind)
            expected = python_mask(values)
            mask = invalid_rows(arr)
            assert (mask is None and not expected.any()) or np.array_equal(mask, expected)
            strings, bad = valid_strings(arr)
            assert strings.type == pa.string() and strings.validate(full=True) is None
            kept = [v.decode() if v is not None and not b else None for v, b in zip(values, expected)]
            assert strings.to_pylist() == kept and (bad is None) == (not expected.any())


def test_characters_split_between_values_are_invalid_in_each():
    """Bytes valid only together ("ü" cut between two values, empty and null values between) are
    invalid in both values: the cheap whole-buffer check must not take them for valid."""
    values = [b"a\xc3", b"\xbcb", b"ok", b"x\xe6\x9d", b"", None, b"\xb1y", "東".encode()]
    for kind in (pa.binary(), pa.large_binary()):
        for arr in (pa.array(values, kind), pa.array([b"pad", *values], kind).slice(1)):
            mask = invalid_rows(arr)
            assert mask is not None and np.array_equal(mask, python_mask(values))


def test_a_clean_array_is_checked_once_and_returned_as_is():
    arr = pa.array(["a", "b", None])
    strings, bad = valid_strings(arr)
    assert bad is None and strings is arr


def test_encodable():
    assert encodable("Zürich") and encodable(3) and encodable(None) and not encodable("Italy \ud800")
