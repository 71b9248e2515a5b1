"""The normalizer: the ASCII byte path gives exactly what the definition's Unicode kernels give."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from audit.geo.normalize import _normalize_kernels, normalize_array, normalize_cased_array, normalize_text

ALPHABET = list("abcXYZ09 ,.-'\t\n\r\x0b!_") + ["é", "—", "’", "東", "ß", "İ", "\u00a0", "ﬁ", "Ⅻ", "\u0301"]


def random_texts(seed: int, n: int = 5000) -> list[str | None]:
    rng = random.Random(seed)
    return [None if rng.random() < 0.05 else "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14))) for _ in range(n)]


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fast_path_equals_the_definition_on_random_text(seed, lower):
    texts = pa.array(random_texts(seed), pa.string())
    fast = normalize_array if lower else normalize_cased_array
    for arr in (texts, texts.slice(37, 1200), texts.slice(4999), pa.chunked_array([texts.slice(0, 10), texts.slice(10, 20)])):
        got = fast(arr)
        got.validate(full=True)
        want = _normalize_kernels(arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr, lower, False)
        assert got.to_pylist() == want.to_pylist()


def test_separator_runs_and_ends(real_captions):
    assert normalize_text("Paris, FRANCE!") == "  paris  france    "
    assert normalize_text(",Lyon") == "    lyon  "
    assert normalize_text("") == "    "
    assert normalize_text("São Paulo—Brazil") == "  são  paulo  brazil  "
    assert normalize_cased_array(pa.array(["New  York\tCity", None])).to_pylist() == ["  New  York  City  ", None]
    texts = pa.array(real_captions, pa.string())
    assert normalize_array(texts).to_pylist() == _normalize_kernels(texts, True, False).to_pylist()
