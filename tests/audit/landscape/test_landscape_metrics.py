"""Landscape points and MPD against values computed by hand and by brute force."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from audit.landscape.metrics import accuracy, hnorm_correlations, landscape_points, model_averaged_points
from audit.landscape.mpd import mpd, mpd_exact, mpd_sampled


def _point(probs):
    with np.errstate(divide="ignore"):
        row = landscape_points([list(np.log(probs))]).iloc[0]
    return row


def test_uniform_options_give_ptop1_one_over_k_and_full_residual_entropy():
    row = _point([0.25, 0.25, 0.25, 0.25])
    assert row.ptop1 == pytest.approx(0.25)
    assert row.hnorm == pytest.approx(1.0)  # q = (1/3, 1/3, 1/3): entropy log 3 / log 3
    assert row.pred == 0 and row.error is None


def test_one_hot_has_zero_residual_mass_so_hnorm_is_zero():
    row = _point([0.0, 1.0, 0.0, 0.0])  # log 0 = -inf for the three others
    assert (row.ptop1, row.hnorm, row.pred) == (1.0, 0.0, 1)


def test_two_way_tie_takes_the_first_as_top_and_the_residual_is_concentrated():
    row = _point([0.5, 0.0, 0.5, 0.0])
    assert row.ptop1 == pytest.approx(0.5) and row.pred == 0
    assert row.hnorm == pytest.approx(0.0)  # q = (0, 1, 0)


def test_k2_hnorm_is_zero_by_definition():
    row = _point([0.7, 0.3])
    assert row.ptop1 == pytest.approx(0.7) and row.hnorm == 0.0


def test_hand_value_with_renormalised_labels():
    # label log-probs whose mass is 0.5 in total: p = (0.4, 0.3, 0.2, 0.1) after the softmax
    row = landscape_points([[math.log(0.2), math.log(0.15), math.log(0.1), math.log(0.05)]]).iloc[0]
    q = np.array([0.3, 0.2, 0.1]) / 0.6
    assert row.ptop1 == pytest.approx(0.4)
    assert row.hnorm == pytest.approx(-(q * np.log(q)).sum() / math.log(3))


def test_tiny_residual_keeps_its_shape_instead_of_underflowing():
    row = landscape_points([[0.0, -800.0, -800.0, -800.0]]).iloc[0]
    assert row.ptop1 == 1.0 and row.hnorm == pytest.approx(1.0)


def test_unreadable_rows_get_a_reason_and_others_are_unaffected():
    points = landscape_points([[-1.0, float("nan"), -2.0], [-1.0, -2.0], [-1.0], [float("-inf"), float("-inf")]])
    assert list(points["error"]) == ["NaN log-probs", None, "fewer than two option log-probs", "every option has log-prob -inf"]
    assert np.isnan(points["ptop1"][0]) and points["ptop1"][1] == pytest.approx(1 / (1 + math.exp(-1)))


def test_accuracy():
    assert accuracy([0, 1, 2, 3], [0, 1, 0, 0]) == 0.5


def test_mpd_exact_equals_brute_force_in_several_blocks():
    rng = np.random.default_rng(3)
    pts = rng.random((537, 2))
    brute = np.mean([np.hypot(*(pts[i] - pts[j])) for i in range(len(pts)) for j in range(i + 1, len(pts))])
    assert mpd_exact(pts, block=64) == pytest.approx(brute, rel=1e-12)
    assert mpd_exact(pts) == pytest.approx(brute, rel=1e-12)


def test_mpd_hand_value_and_degenerate_inputs():
    pts = np.array([[0, 0], [1, 0], [0, 1]], dtype=float)
    assert mpd_exact(pts) == pytest.approx((1 + 1 + math.sqrt(2)) / 3)
    assert math.isnan(mpd_exact(pts[:1]))
    with pytest.raises(ValueError, match="NaN"):
        mpd_exact(np.array([[0.0, np.nan], [1.0, 0.0]]))


def test_sampled_ci_covers_the_exact_value_at_its_nominal_rate():
    rng = np.random.default_rng(11)
    pts = np.column_stack([rng.beta(2, 1, 400), rng.beta(1, 3, 400)])
    exact = mpd_exact(pts)
    covered = [(e := mpd_sampled(pts, pairs=4000, seed=s)).ci_low <= exact <= e.ci_high for s in range(200)]
    # 95% intervals: 200 draws cover ~190; fewer than 180 would be a 1-in-10^4 event
    assert sum(covered) >= 180
    one = mpd_sampled(pts, pairs=4000, seed=5)
    assert one == mpd_sampled(pts, pairs=4000, seed=5)  # seeded
    assert one.ci_low < one.value < one.ci_high and not one.exact


def test_mpd_switches_to_sampling_beyond_the_exact_limit():
    pts = np.random.default_rng(0).random((300, 2))
    exact = mpd(pts, exact_limit=300)
    sampled = mpd(pts, exact_limit=299, pairs=200_000, seed=1)
    assert exact.exact and exact.pairs == 300 * 299 // 2
    assert not sampled.exact and sampled.ci_low <= exact.value <= sampled.ci_high


def _points_frame():
    rng = np.random.default_rng(2)
    rows = []
    base = rng.random(30)
    for model, noise in (("m1", 0.0), ("m2", 0.05), ("m3", 0.3)):
        h = np.clip(base + noise * rng.standard_normal(30), 0, 1)
        rows += [{"source_id": f"q{i}", "model": model, "ptop1": 0.5, "hnorm": h[i], "error": None} for i in range(30)]
    return pd.DataFrame(rows)


def test_hnorm_correlations_equal_scipy_per_model_pair():
    frame = _points_frame()
    table = hnorm_correlations(frame)
    assert list(zip(table.model_a, table.model_b)) == [("m1", "m2"), ("m1", "m3"), ("m2", "m3")]
    wide = frame.pivot(index="source_id", columns="model", values="hnorm")
    row = table.iloc[1]
    assert row.pearson == pytest.approx(stats.pearsonr(wide["m1"], wide["m3"]).statistic)
    assert row.spearman == pytest.approx(stats.spearmanr(wide["m1"], wide["m3"]).statistic)
    assert table.pearson[0] > table.pearson[1]  # m2 is m1 plus less noise than m3
    assert (table.n_items == 30).all()


def test_model_averaged_points_skip_unreadable_rows():
    frame = pd.DataFrame([
        {"source_id": "a", "model": "m1", "ptop1": 0.9, "hnorm": 0.2, "error": None},
        {"source_id": "a", "model": "m2", "ptop1": 0.5, "hnorm": 0.6, "error": None},
        {"source_id": "a", "model": "m3", "ptop1": np.nan, "hnorm": np.nan, "error": "NaN log-probs"},
    ])
    out = model_averaged_points(frame).iloc[0]
    assert (out.ptop1, out.hnorm, out.n_models) == (pytest.approx(0.7), pytest.approx(0.4), 2)
