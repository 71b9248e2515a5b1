"""Vectorised clustered bootstrap against a naive per-replicate loop on the same draws."""

import itertools

import numpy as np
import pandas as pd
import pytest

from audit.stats.bootstrap import (
    BootstrapConfig,
    _inert_clusters,
    _replicates,
    cluster_bootstrap_mean,
    cluster_bootstrap_ratio,
    replicate_ratios,
    resample_indices,
)

RNG = np.random.default_rng(7)
CLUSTERS = np.array(["q3", "q1", "q1", "q2", "q3", "q3", "q4", "q5", "q5", "q5", "q5", "q6"])
VALUES = RNG.normal(size=len(CLUSTERS))


def naive_replicates(values, den, clusters, indices):
    """The textbook loop: rebuild each resample from whole clusters, then take sum(num)/sum(den)."""
    codes, _ = pd.factorize(pd.Series(clusters, dtype=object))
    out = []
    for row in indices:
        chosen = np.concatenate([np.flatnonzero(codes == c) for c in row])
        d = den[chosen].sum()
        out.append(values[chosen].sum() / d if d != 0 else np.nan)
    return np.array(out)


def test_vectorised_replicates_equal_naive_loop_on_same_indices():
    config = BootstrapConfig(n_replicates=300, seed=11)
    n_clusters = len(set(CLUSTERS))
    (indices,) = list(resample_indices(n_clusters, config))
    codes, _ = pd.factorize(pd.Series(CLUSTERS, dtype=object))
    sums = np.bincount(codes, weights=VALUES)[:, None]
    counts = np.bincount(codes).astype(float)[:, None]
    fast = replicate_ratios(sums, counts, indices)[:, 0]
    np.testing.assert_allclose(fast, naive_replicates(VALUES, np.ones_like(VALUES), CLUSTERS, indices), rtol=1e-12)


def test_interval_equals_naive_percentiles_and_contains_estimate():
    config = BootstrapConfig(n_replicates=500, seed=3)
    result = cluster_bootstrap_mean(VALUES, CLUSTERS, config)
    indices = np.random.default_rng(3).integers(0, 6, size=(500, 6))
    naive = naive_replicates(VALUES, np.ones_like(VALUES), CLUSTERS, indices)
    assert result.estimate == pytest.approx(VALUES.mean())
    assert (result.low, result.high) == pytest.approx(tuple(np.quantile(naive, [0.025, 0.975])))
    assert result.low <= result.estimate <= result.high
    assert (result.n_clusters, result.seed, result.n_undefined) == (6, 3, 0)


def test_chunked_draws_are_one_stream():
    config = BootstrapConfig(n_replicates=4500, seed=2026)
    chunks = list(resample_indices(1000, config))
    assert len(chunks) > 1
    np.testing.assert_array_equal(np.vstack(chunks), np.random.default_rng(2026).integers(0, 1000, size=(4500, 1000)))


def test_several_columns_share_draws_and_match_single_runs():
    num = np.column_stack([VALUES, VALUES**2])
    den = np.column_stack([np.ones_like(VALUES), (VALUES > 0).astype(float)])
    config = BootstrapConfig(n_replicates=400)
    both = cluster_bootstrap_ratio(num, den, CLUSTERS, config)
    for j in (0, 1):
        alone = cluster_bootstrap_ratio(num[:, j], den[:, j], CLUSTERS, config)[0]
        got = (both[j].estimate, both[j].low, both[j].high)
        assert got == pytest.approx((alone.estimate, alone.low, alone.high), rel=1e-12)
    assert both[1].estimate == pytest.approx((VALUES**2).sum() / (VALUES > 0).sum())


def exact_item_bootstrap(num, den):
    """Every one of the n**n equally likely item resamples: {ratio or None: probability}."""
    n = len(num)
    dist = {}
    for draw in itertools.product(range(n), repeat=n):
        d = sum(den[i] for i in draw)
        key = None if d == 0 else round(sum(num[i] for i in draw) / d, 12)
        dist[key] = dist.get(key, 0) + 1 / n**n
    return dist


@pytest.mark.parametrize(
    ("num", "den"),
    [
        ([1, 0, 0, 0, 0], [2, 1, 0, 0, 0]),  # a share: items without signals are inert (num = den = 0)
        ([1, 0, 1, 0, 0], [1, 1, 1, 1, 1]),  # a coverage: inert items have num = 0, den = 1
    ],
)
def test_inert_item_shortcut_matches_exact_bootstrap_distribution(num, den):
    """The shortcut draws only active items; its replicate distribution must be the exact one."""
    config = BootstrapConfig(n_replicates=40_000, seed=9)
    num_sums, den_sums = np.array(num, float)[:, None], np.array(den, float)[:, None]
    assert _inert_clusters(num_sums, den_sums)[0].mean() >= 0.5  # the shortcut path is the one taken
    replicates = _replicates(num_sums, den_sums, config)[:, 0]
    exact = exact_item_bootstrap(num, den)
    observed = {}
    for value in replicates:
        key = None if np.isnan(value) else round(float(value), 12)
        observed[key] = observed.get(key, 0) + 1 / len(replicates)
    assert set(observed) <= set(exact)
    for key, probability in exact.items():
        assert observed.get(key, 0.0) == pytest.approx(probability, abs=0.01), key
    result = cluster_bootstrap_ratio(num, den, np.arange(len(num)), config)[0]
    assert result.n_undefined == int(np.isnan(replicates).sum())
    assert result.n_undefined / config.n_replicates == pytest.approx(exact.get(None, 0.0), abs=0.01)


def test_share_bootstrap_estimate_and_undefined_replicates():
    result = cluster_bootstrap_ratio([1.0, 0, 0, 0], [2.0, 0, 0, 0], np.arange(4), BootstrapConfig(n_replicates=1000, seed=5))[0]
    assert (result.estimate, result.low, result.high) == (0.5, 0.5, 0.5)
    assert 250 < result.n_undefined < 380  # (3/4)**4 = 0.316 of resamples miss item 0


def test_degenerate_cases():
    single = cluster_bootstrap_mean([1.0, 3.0], ["only", "only"], BootstrapConfig(n_replicates=50))
    assert (single.estimate, single.low, single.high) == (2.0, 2.0, 2.0)
    constant = cluster_bootstrap_mean(np.full(20, 0.25), np.arange(20), BootstrapConfig(n_replicates=50))
    assert constant.low == constant.high == 0.25
    share = cluster_bootstrap_mean([1, 0, 0, 1], np.arange(4), BootstrapConfig(n_replicates=2000))
    assert 0.0 <= share.low <= 0.5 <= share.high <= 1.0
    with pytest.raises(ValueError, match="empty"):
        cluster_bootstrap_mean([], [])
    with pytest.raises(ValueError, match="non-finite value at row 1"):
        cluster_bootstrap_mean([1.0, np.nan], ["a", "b"])
    with pytest.raises(ValueError, match="cluster label missing at row 1"):
        cluster_bootstrap_mean([1.0, 2.0], ["a", None])
    with pytest.raises(ValueError, match="den has shape"):
        cluster_bootstrap_ratio(np.ones((3, 2)), np.ones(3), ["a", "b", "c"])
    with pytest.raises(ValueError, match="n_replicates"):
        BootstrapConfig(n_replicates=0)


def test_default_seed_10k_replicates_1k_questions():
    """Defaults as the issue asks (speed is measured by bench/bench_scorers.py, not here)."""
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(1000), 4)
    values = rng.normal(size=clusters.size)
    result = cluster_bootstrap_mean(values, clusters)
    assert (result.n_replicates, result.seed, result.n_clusters) == (10_000, 2026, 1000)
    # same seed, same interval
    assert cluster_bootstrap_mean(values, clusters) == result
