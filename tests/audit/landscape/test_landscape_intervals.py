"""Intervals of the landscape table: MPD's item bootstrap and accuracy's Wilson interval."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.landscape.mpd import mpd, mpd_bootstrap, mpd_exact
from audit.landscape.summary import summarize
from audit.stats.bootstrap import BootstrapConfig, resample_indices
from audit.stats.proportions import wilson_interval


def test_bootstrap_replicates_equal_the_mpd_of_each_resample_across_blocks():
    pts = np.random.default_rng(7).random((150, 2))
    config = BootstrapConfig(25, seed=3)
    value, draws = mpd_bootstrap(pts, config, block=40)
    naive = [mpd_exact(pts[idx]) for chunk in resample_indices(len(pts), config) for idx in chunk]
    assert value == pytest.approx(mpd_exact(pts), rel=1e-12)
    assert draws == pytest.approx(naive, rel=1e-10)


def test_exact_mpd_has_a_seeded_interval_that_is_not_a_point():
    pts = np.random.default_rng(2).random((200, 2))
    est = mpd(pts, replicates=100, seed=9)
    assert est.exact and est.ci_low < est.value < est.ci_high and est.replicates == 100
    assert est == mpd(pts, replicates=100, seed=9)
    # the interval's width is that of the MPD's sampling spread over items: about 4 sd of 100 fresh samples
    fresh = [mpd_exact(np.random.default_rng(s).random((200, 2))) for s in range(100, 140)]
    assert 0.5 < (est.ci_high - est.ci_low) / (3.92 * np.std(fresh)) < 2


def test_wilson_interval_hand_value_and_statsmodels():
    low, high = wilson_interval(8, 10)
    assert (low, high) == pytest.approx((0.4901625, 0.9433178), abs=1e-6)  # Wilson (1927) for 8 of 10 at 95%
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(20, 20)[1] == 1.0
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    for x, n in ((3, 17), (95, 100), (512, 1000)):
        assert wilson_interval(x, n) == pytest.approx(proportion.proportion_confint(x, n, method="wilson"), abs=1e-12)


def test_summary_rows_carry_the_accuracy_interval():
    rows = pd.DataFrame({"benchmark": "b", "perturbation": "none", "model": "m", "id": [f"q{i}" for i in range(10)],
                         "source_id": [f"q{i}" for i in range(10)], "variant": 0, "k": 4, "gold": 0,
                         "pred": [0] * 8 + [1, 2], "correct": [1.0] * 8 + [0.0] * 2,
                         "ptop1": np.linspace(0.3, 0.9, 10), "hnorm": np.linspace(0.1, 0.8, 10), "error": None})
    row = summarize(rows).iloc[0]
    assert row["accuracy"] == 0.8
    assert (row["accuracy_ci_low"], row["accuracy_ci_high"]) == pytest.approx(wilson_interval(8, 10))
    assert row["mpd_ci_low"] < row["mpd"] < row["mpd_ci_high"]
