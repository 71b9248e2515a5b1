"""Exact hypergeometric count intervals against brute-force inversion and exact coverage."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy.stats import hypergeom

from audit.coreset.intervals import (
    bonferroni_alpha,
    contrast_envelope,
    hypergeom_count_interval,
    hypergeom_count_intervals,
    round_outward,
)

ALPHAS = (0.05, 0.05 / 15, 0.3)


def _brute(N: int, n: int, x: int, alpha: float) -> tuple[int, int]:
    if n == 0:  # nothing drawn: scipy's distribution is undefined, every K is consistent
        return 0, N
    K = np.arange(N + 1)
    keep = K[(hypergeom.sf(x - 1, N, K, n) >= alpha / 2) & (hypergeom.cdf(x, N, K, n) >= alpha / 2)].tolist()
    assert keep == list(range(keep[0], keep[-1] + 1)), "brute-force set is not an interval"
    return keep[0], keep[-1]


@pytest.mark.parametrize("alpha", ALPHAS)
def test_matches_brute_force_for_every_N_up_to_12(alpha):
    for N in range(13):
        for n in range(N + 1):
            for x in range(n + 1):
                assert hypergeom_count_interval(N, n, x, alpha) == _brute(N, n, x, alpha), (N, n, x)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_exact_coverage_at_least_one_minus_alpha_for_every_K(alpha):
    for N in range(1, 13):
        for n in range(N + 1):
            intervals = list(zip(*hypergeom_count_intervals(N, n, np.arange(n + 1), alpha)))
            for K in range(N + 1):
                covered = Fraction(0)
                for x in range(max(0, n - (N - K)), min(n, K) + 1):
                    lo, hi = intervals[x]
                    if lo <= K <= hi:
                        covered += Fraction(comb(K, x) * comb(N - K, n - x), comb(N, n))
                assert covered >= 1 - Fraction(alpha), (N, n, K, float(covered))


def test_published_edge_cases():
    assert hypergeom_count_interval(100, 10, 0, 0.05)[1] > 0
    assert hypergeom_count_interval(100, 100, 64, 0.05) == (64, 64)
    assert hypergeom_count_interval(100, 0, 0, 0.05) == (0, 100)


def test_vectorised_form_equals_scalar_form():
    rng = np.random.default_rng(1)
    N = rng.integers(1, 5_000, 200)
    n = (rng.random(200) * N).astype(int)
    x = (rng.random(200) * (n + 1)).astype(int)
    lo, hi = hypergeom_count_intervals(N, n, x, 0.01)
    for i in range(0, 200, 17):
        assert (lo[i], hi[i]) == hypergeom_count_interval(int(N[i]), int(n[i]), int(x[i]), 0.01)


def test_bonferroni_and_helpers():
    assert bonferroni_alpha(0.05, 1, 5, 3) == pytest.approx(0.05 / 15)
    assert bonferroni_alpha(0.05, 2, 1, 0) == pytest.approx(0.025)
    lo, hi = round_outward(np.array([0.123456789]), np.array([0.123456789]), decimals=3)
    assert lo[0] == 0.123 and hi[0] == 0.124
    assert contrast_envelope((0.2, 0.5), (0.1, 0.3)) == pytest.approx((-0.1, 0.4))
    with pytest.raises(ValueError, match="0 <= x <= n"):
        hypergeom_count_intervals(np.array(5), np.array(2), np.array(3), 0.05)
