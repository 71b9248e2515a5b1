"""The refinement path must reproduce np.percentile (default 'linear') bit for bit."""

import numpy as np
import pytest

from audit.coreset.percentile import (
    count_below,
    exact_percentiles,
    float_ordinal,
    ordinal_float,
    percentile_ranks,
    percentiles_over_blocks,
    values_in_buckets,
)
from audit.coreset.strata import difficulty


def _split(values: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    cuts = np.sort(rng.integers(0, len(values) + 1, size=rng.integers(0, 6)))
    return np.split(values, cuts)


QS = [[33, 67], [0, 100], [25, 50, 75], [1, 99.5], [12.5, 33.3, 66.6, 90]]


@pytest.mark.parametrize("seed", range(40))
def test_random_data_with_ties_matches_numpy_exactly(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    kind = seed % 4
    if kind == 0:  # heavy ties on a coarse grid
        values = rng.integers(0, 7, n) / 6.0
    elif kind == 1:  # difficulty of probabilities, mostly confident
        values = difficulty(rng.beta(0.3, 3.0, n))
    elif kind == 2:  # continuous
        values = rng.normal(0, 1, n)
    else:  # one value repeated with a few others
        values = np.where(rng.random(n) < 0.9, 0.25, rng.random(n))
    for q in QS + [rng.uniform(0, 100, 3).tolist()]:
        # tiny bins and fetch limit force several refinement passes and the single-float exit
        got = percentiles_over_blocks(_split(values, rng), q, bins=3, fetch_limit=2)
        assert np.array_equal(got, np.percentile(values, q)), (n, q)


def test_large_table_converges_in_few_passes_and_matches():
    rng = np.random.default_rng(7)
    values = difficulty(rng.beta(0.2, 5.0, 300_000))
    blocks = np.array_split(values, 13)
    assert np.array_equal(percentiles_over_blocks(blocks, [33, 67], fetch_limit=1000), np.percentile(values, [33, 67]))


def test_ranks_follow_numpy_virtual_index():
    below, above, gamma = percentile_ranks(11, [0, 33, 50, 100])
    assert below.tolist() == [0, 3, 5, 10]
    assert above.tolist() == [1, 4, 6, 10]
    assert gamma[1] == pytest.approx(0.3)


def test_bad_percentiles_and_empty_input_raise():
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        percentile_ranks(10, [101])
    with pytest.raises(ValueError, match="at least one value"):
        percentiles_over_blocks([np.array([])], [50])


def test_point_mass_at_zero_resolves_in_few_passes_without_fetching():
    # confident scorers give difficulty exactly 0 for many rows: a point mass at the lower end
    rng = np.random.default_rng(3)
    values = np.where(rng.random(200_000) < 0.6, 0.0, rng.random(200_000))
    blocks = np.array_split(values, 5)
    passes, fetched = [], []

    def counts(edges):
        passes.append(len(edges))
        return sum(count_below(b, edges) for b in blocks)

    def fetch(lo, hi):
        out = np.concatenate([values_in_buckets(b, lo, hi) for b in blocks])
        fetched.append(len(out))
        return out

    got = exact_percentiles(counts, fetch, len(values), [33, 67], values.min(), values.max(), fetch_limit=100)
    assert np.array_equal(got, np.percentile(values, [33, 67]))
    assert len(passes) <= 6  # ceil(64 / log2(4096)) passes at most
    assert sum(fetched) <= 2 * 100


def test_float_ordinal_is_monotone_and_invertible():
    x = np.array([-np.finfo(float).max, -1.0, -5e-324, 0.0, 5e-324, 0.25, np.nextafter(0.25, 1), 1e308])
    o = float_ordinal(x)
    assert np.all(np.diff(o) > 0)
    assert o[3] == 0 and o[4] == 1 and o[6] - o[5] == 1
    assert np.array_equal(ordinal_float(o), x)
    assert float_ordinal(np.array([-0.0]))[0] == 0
