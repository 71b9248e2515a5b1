"""Contamination statistics against hand-computed values, scipy/statsmodels, and the 12-model reference fixture."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from audit.contamination.analysis import analyse
from audit.contamination.cells import paired
from audit.contamination.outcomes import check_outcomes
from audit.contamination.significance import holm, mcnemar_exact
from audit.contamination.trend import improve_degrade_trend
from audit.stats.bootstrap import BootstrapConfig, resample_indices
from tests.fixtures.contamination import reference_study as ref

# Three models, five questions, M = 3: clean outcome, then r = 1, 2, 3 (question q1..q5 left to right).
HAND = {
    "A": ("11000", "11100", "10000", "01110"),
    "B": ("11110", "11110", "11111", "00111"),
    "C": ("00001", "11001", "10000", "11101"),
}


def hand_table() -> pd.DataFrame:
    rows = []
    for model, (clean, *noisy) in HAND.items():
        rows += [(f"q{i + 1}", model, "forward_full", 1, int(c)) for i, c in enumerate(clean)]
        for r, outcome in enumerate(noisy, start=1):
            rows += [(f"q{i + 1}", model, "noisy_rewrite", r, int(c)) for i, c in enumerate(outcome)]
    return pd.DataFrame(rows, columns=["question_id", "model", "condition", "r", "correct"])


def cell(summary, model: str, r: int) -> pd.Series:
    cells = summary.cells
    return cells[(cells["model"] == model) & (cells["r"] == r)].iloc[0]


def test_cells_match_hand_counts():
    s = analyse(hand_table())
    # (model, r): improve, degrade, gain, exact McNemar p = min(1, 2 P(X <= min) | X ~ Bin(b + c, 1/2))
    expected = {
        ("A", 1): (1, 0, 0.2, 1.0), ("A", 2): (0, 1, -0.2, 1.0), ("A", 3): (2, 1, 0.2, 1.0),
        ("B", 1): (0, 0, 0.0, 1.0), ("B", 2): (1, 0, 0.2, 1.0), ("B", 3): (1, 2, -0.2, 1.0),
        ("C", 1): (2, 0, 0.4, 0.5), ("C", 2): (1, 1, 0.0, 1.0), ("C", 3): (3, 0, 0.6, 0.25),
    }
    assert len(s.cells) == 9
    for (model, r), (improve, degrade, gain, p) in expected.items():
        row = cell(s, model, r)
        assert (row["n"], row["improve"], row["degrade"]) == (5, improve, degrade)
        assert row["gain"] == pytest.approx(gain, abs=1e-12)
        assert row["gain"] == pytest.approx((improve - degrade) / 5, abs=1e-12)
        assert bool(row["violation"]) == (gain > 0)
        assert row["excess"] == pytest.approx(max(gain, 0.0), abs=1e-12)
        assert row["mcnemar_p"] == pytest.approx(p, abs=1e-12)
    assert cell(s, "C", 2)["gain"] == 0 and not cell(s, "C", 2)["violation"]  # equal counts: no violation
    # Holm over the one family of all 9 cells: the smallest p, C's 0.25 at r = 3, times 9 is above 1, so every
    # adjusted value is 1 (a per-r family would have given it 0.25 x 3 = 0.75, and controlled nothing once added over r)
    assert s.cells["holm_p"].tolist() == [1.0] * 9 and not s.cells["significant"].any()
    assert s.identity_max_residual < 1e-12


def test_per_model_table_matches_hand_breadth_and_excess():
    s = analyse(hand_table())
    table = s.per_model.set_index("model")
    assert table.loc[["A", "B", "C"], "clean_accuracy"].tolist() == pytest.approx([0.4, 0.8, 0.2])
    assert table.loc[["A", "B", "C"], "breadth"].tolist() == [2, 1, 2]
    assert table.loc[["A", "B", "C"], "settings"].tolist() == [3, 3, 3]
    assert table.loc[["A", "B", "C"], "max_excess"].tolist() == pytest.approx([0.2, 0.2, 0.6])
    assert table.loc[["A", "B", "C"], "mean_excess"].tolist() == pytest.approx([0.2, 0.2, 0.5])
    assert table.loc[["A", "B", "C"], "mean_gain"].tolist() == pytest.approx([0.2 / 3, 0.0, 1.0 / 3])
    assert table.loc[["A", "B", "C"], "significant_above_baseline"].tolist() == [0, 0, 0]
    view = s.level_vs_credibility
    assert view["model"].tolist() == ["B", "A", "C"]  # by level, highest first
    assert view["level"].tolist() == pytest.approx([0.8, 0.4, 0.2])
    assert view["breadth"].tolist() == [1, 2, 2] and view["mean_excess"].tolist() == pytest.approx([0.2, 0.2, 0.5])


def test_per_r_counts_and_both_excess_means():
    s = analyse(hand_table())
    table = s.per_r.set_index("r")
    assert table["n_models"].tolist() == [3, 3, 3]
    assert table["n_violators"].tolist() == [2, 1, 2]
    assert table["mean_excess_all_models"].tolist() == pytest.approx([0.6 / 3, 0.2 / 3, 0.8 / 3])
    assert table["mean_excess_violators"].tolist() == pytest.approx([0.3, 0.2, 0.4])
    assert table["improve"].tolist() == [3, 2, 6] and table["degrade"].tolist() == [0, 2, 3]
    assert table["net"].tolist() == [3, 0, 3]
    assert s.reversal == {"first_r": 1, "sustained_from_r": 3}
    # D = (3, 0, 3) over r = (1, 2, 3): slope (3 - 3) / 2 = 0
    assert s.trend.slope == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("improve,degrade", [(0, 0), (1, 0), (0, 7), (3, 3), (2, 9), (12, 5), (40, 21), (150, 112)])
def test_mcnemar_equals_exact_binomial_test(improve, degrade):
    p = mcnemar_exact(improve, degrade)
    if improve + degrade:
        assert p == pytest.approx(binomtest(improve, improve + degrade, 0.5).pvalue, rel=1e-12, abs=1e-15)
    else:
        assert p == 1.0
    table = [[5, degrade], [improve, 5]]  # rows: clean correct/wrong; columns: noisy correct/wrong
    assert p == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12, abs=1e-15)


def test_mcnemar_small_case_by_hand():
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(1, 4) == pytest.approx(2 * 6 / 32)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_holm_equals_statsmodels_and_skips_nan():
    rng = np.random.default_rng(5)
    p = rng.uniform(0, 0.2, size=12)
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1])
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])  # by hand: x3, x2 (max), x1 -> 0.04
    with_nan = holm([0.01, np.nan, 0.04])
    assert math.isnan(with_nan[1]) and with_nan[[0, 2]].tolist() == pytest.approx([0.02, 0.04])


def test_reference_fixture_reproduces_published_margins():
    s = analyse(ref.reference_outcomes())
    table = s.per_r.set_index("r")
    assert s.m == 9 and len(s.models) == 12 and s.n_questions == 100
    assert tuple(table["improve"]) == ref.IMPROVE
    assert tuple(table["degrade"]) == ref.DEGRADE
    assert tuple(table["n_violators"]) == ref.VIOLATORS
    # over violators as published (0.066 and 0.086 rounded); over all 12 models a different figure
    assert table.loc[8, "mean_excess_violators"] == pytest.approx(0.066, abs=1e-12)
    assert table.loc[9, "mean_excess_violators"] == pytest.approx(69 / 800, abs=1e-12)
    assert round(table.loc[9, "mean_excess_violators"], 3) == pytest.approx(0.086, abs=6e-4)
    assert table.loc[8, "mean_excess_all_models"] == pytest.approx(66 / 1200, abs=1e-12)
    breadth = s.per_model["breadth"]
    assert breadth.min() == 1 and breadth.max() == 9
    assert sorted(breadth, reverse=True) == [9, 9, 8, 7, 6, 5, 5, 4, 3, 3, 2, 1]
    # improve < degrade up to r = 4, narrowly above at r = 5, below at 6-7, above from r = 8
    assert s.reversal == {"first_r": 5, "sustained_from_r": 8}
    assert s.identity_max_residual < 1e-12
    net = np.array(ref.IMPROVE) - np.array(ref.DEGRADE)
    # by hand: sum (r - 5)(D_r) / sum (r - 5)^2 = 603 / 60
    assert s.trend.slope == pytest.approx(603 / 60, abs=1e-9)
    assert np.polyfit(np.arange(1, 10), net, 1)[0] == pytest.approx(s.trend.slope)
    assert s.trend.low < s.trend.slope < s.trend.high and s.trend.excludes_zero
    assert s.missing.empty and s.status_totals["answered"] == 12 * 100 * 10


def test_trend_interval_equals_naive_resampling_of_questions():
    """Each replicate redraws questions (all of a question's rows together) and refits the slope from scratch."""
    table = ref.reference_outcomes(seed=3)
    pairs = paired(table)
    config = BootstrapConfig(n_replicates=300, seed=11)
    trend = improve_degrade_trend(pairs, config)
    # the trend's clusters are the question ids in sorted order; replay the same index stream
    diffs = pairs.assign(d=pairs["noisy"] - pairs["clean"]).groupby(["question_id", "r"])["d"].sum().unstack("r").sort_index()
    slopes = []
    for idx in np.vstack(list(resample_indices(len(diffs), config))):
        d_r = diffs.iloc[idx].sum(axis=0)
        slopes.append(np.polyfit(d_r.index.to_numpy(float), d_r.to_numpy(float), 1)[0])
    low, high = np.quantile(slopes, [0.025, 0.975])
    assert trend.low == pytest.approx(low, abs=1e-9) and trend.high == pytest.approx(high, abs=1e-9)
    assert trend.n_questions == 100 and trend.seed == 11
    assert improve_degrade_trend(pairs, config) == trend  # seeded: same interval again


def test_trend_undefined_with_a_single_setting():
    table = check_outcomes(hand_table())
    assert improve_degrade_trend(paired(table[table["r"] == 1])) is None


def test_missing_cell_is_reported_and_left_out():
    table = hand_table()
    table = table[~((table["model"] == "B") & (table["r"] == 2) & (table["condition"] == "noisy_rewrite"))]
    s = analyse(table)
    assert s.missing.to_dict("records") == [{"model": "B", "r": 2, "reason": "no rows"}]
    row = s.per_model.set_index("model").loc["B"]
    assert (row["settings"], row["breadth"], row["missing_settings"]) == (2, 0, [2])
    assert math.isnan(row["max_excess"]) and math.isnan(row["mean_excess"])
    r2 = s.per_r.set_index("r").loc[2]
    assert (r2["n_models"], r2["n_violators"]) == (2, 0)  # B was the only violator at r = 2
    assert r2["mean_excess_all_models"] == 0.0 and math.isnan(r2["mean_excess_violators"])
    assert len(s.cells) == 8
    assert s.to_dict()["missing"] == [{"model": "B", "r": 2, "reason": "no rows"}]


def test_expected_m_beyond_the_table_lists_every_absent_setting():
    s = analyse(hand_table(), m=4)
    assert s.missing[["model", "r"]].values.tolist() == [["A", 4], ["B", 4], ["C", 4]]
    assert s.per_r.set_index("r").loc[4, "n_models"] == 0
    with pytest.raises(ValueError, match="beyond the expected M = 2"):
        analyse(hand_table(), m=2)


def test_categories_are_counted_and_only_scored_rows_enter_the_statistics():
    table = hand_table()
    table["status"] = "answered"
    table["answer"] = None
    a_r3 = (table["model"] == "A") & (table["r"] == 3) & (table["condition"] == "noisy_rewrite")
    # q4 was the improvement of A at r = 3: make it unparsable (scored wrong), q1 (the degrade) time out
    table.loc[a_r3 & (table["question_id"] == "q4"), ["status", "correct", "answer"]] = ["unparsable", None, "I think it is B"]
    table.loc[a_r3 & (table["question_id"] == "q1"), ["status", "correct"]] = ["timeout", None]
    table.loc[a_r3 & (table["question_id"] == "q5"), ["status", "correct"]] = ["empty_router", None]
    c_clean = (table["model"] == "C") & (table["condition"] == "forward_full") & (table["question_id"] == "q2")
    table.loc[c_clean, ["status", "correct"]] = ["failed", None]
    extra = pd.DataFrame([("q6", m, c, 1, None, "no_options", None) for m in "ABC" for c in ("forward_full", "noisy_rewrite")],
                         columns=table.columns)
    s = analyse(pd.concat([table, extra], ignore_index=True))
    assert s.status_totals == {"answered": 56, "unparsable": 1, "empty_router": 1, "failed": 1, "timeout": 1, "no_options": 6}
    cats = s.categories.set_index(["model", "condition", "r"])
    assert cats.loc[("A", "noisy_rewrite", 3), ["answered", "unparsable", "timeout", "empty_router", "no_options", "absent"]].tolist() \
        == [2, 1, 1, 1, 0, 1]  # q6 (no options) has rows at r = 1 only
    assert cats.loc[("A", "noisy_rewrite", 1), ["no_options", "absent"]].tolist() == [1, 0]
    a3 = cell(s, "A", 3)  # scored q2 (1 -> 1), q3 (0 -> 1), q4 unparsable (0 -> 0): one improve, no degrade
    assert (a3["n"], a3["improve"], a3["degrade"]) == (3, 1, 0)
    assert a3["baseline"] == pytest.approx(1 / 3) and a3["accuracy"] == pytest.approx(2 / 3)
    c1 = cell(s, "C", 1)  # q2's clean call failed: that question leaves every pair of C
    assert c1["n"] == 4 and (c1["improve"], c1["degrade"]) == (1, 0)
    assert s.per_model.set_index("model").loc["C", "n_clean"] == 4
    assert s.n_questions == 6


def test_summary_is_plain_json():
    import json

    s = analyse(ref.reference_outcomes())
    data = json.loads(json.dumps(s.to_dict(), allow_nan=False))
    assert [row["n_violators"] for row in data["per_r"]] == list(ref.VIOLATORS)
    assert data["trend"]["r_values"] == list(range(1, 10))


def test_a_table_whose_noisy_calls_all_failed_reports_instead_of_crashing():
    rows = [("q1", "m", "forward_full", 1, 1, "answered"), ("q1", "m", "noisy_rewrite", 1, None, "failed"),
            ("q1", "m", "noisy_rewrite", 2, None, "timeout")]
    s = analyse(pd.DataFrame(rows, columns=["question_id", "model", "condition", "r", "correct", "status"]))
    assert s.cells.empty and s.trend is None and s.reversal == {"first_r": None, "sustained_from_r": None}
    assert s.missing["r"].tolist() == [1, 2] and s.missing["reason"].str.startswith("no scored rows").all()
    assert s.per_r["n_models"].tolist() == [0, 0]
    assert s.per_model.loc[0, "missing_settings"] == [1, 2] and s.per_model.loc[0, "clean_accuracy"] == 1.0
    with pytest.raises(ValueError, match="no noisy_rewrite rows"):
        analyse(pd.DataFrame(rows[:1], columns=["question_id", "model", "condition", "r", "correct", "status"]))
