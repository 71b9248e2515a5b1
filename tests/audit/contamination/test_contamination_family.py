"""The tested counts of the contamination audit against a table worked by hand: exact McNemar p-values, Holm
over one family (every model x r cell), the family-wise totals, and every figure of a model on its shared
questions (so a model's level is the baseline of each of its cells)."""
from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from audit.contamination.analysis import analyse

# Ten questions q1..q10, M = 2: per model the clean outcome, then r = 1 and r = 2 ("-": not scored).
#   B's r = 2 call for q10 timed out, C's clean call for q3 failed.
TABLE = {
    "A": ("0000000011", "1111111111", "1111111011"),
    "B": ("1111100000", "1111111000", "111000000-"),
    "C": ("10-0101010", "1111111100", "0101010101"),
}
# Shared questions (answered clean and in every noisy setting): A all 10; B q1..q9 (q10 lost at r = 2);
# C all but q3 (9). On them, clean -> noisy, wrong->correct (improve b) and correct->wrong (degrade c):
#   A r=1: b = 8 (q1..q8), c = 0      A r=2: b = 7 (q1..q7), c = 0
#   B r=1: b = 2 (q6, q7), c = 0      B r=2: b = 0, c = 2 (q4, q5)
#   C r=1: b = 4 (q2 q4 q6 q8), c = 1 (q9)      C r=2: b = 5 (q2 q4 q6 q8 q10), c = 4 (q1 q5 q7 q9)
# Exact two-sided McNemar, p = min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c, 1/2):
#   A1: 2 (1/2)^8 = 1/128 = 0.0078125           A2: 2 (1/2)^7 = 1/64 = 0.015625
#   B1: 2 (1/2)^2 = 0.5                          B2: 0.5
#   C1: 2 (1 + 5) / 32 = 0.375                   C2: 2 (1 + 9 + 36 + 84 + 126) / 512 = 1.0
P = {("A", 1): 1 / 128, ("A", 2): 1 / 64, ("B", 1): 0.5, ("B", 2): 0.5, ("C", 1): 0.375, ("C", 2): 1.0}
DISCORDANT = {("A", 1): (8, 0), ("A", 2): (7, 0), ("B", 1): (2, 0), ("B", 2): (0, 2), ("C", 1): (4, 1), ("C", 2): (5, 4)}
# Holm over the family of all 6 cells: sorted A1, A2, C1, B1, B2, C2, times 6, 5, 4, 3, 2, 1, running maximum, cap 1:
#   A1 6/128 = 0.046875, A2 5/64 = 0.078125, C1 4 x 0.375 -> 1, then 1, 1, 1.
HOLM = {("A", 1): 6 / 128, ("A", 2): 5 / 64, ("B", 1): 1.0, ("B", 2): 1.0, ("C", 1): 1.0, ("C", 2): 1.0}
# At alpha 0.05 only A1 is significantly above baseline: one in the whole run. (Holm within each r instead would
# give A1 3/128 = 0.023 and A2 3/64 = 0.047, "2 significant" -- a sum over two families that nothing controls.)
# Baselines on the shared questions: A 2/10 (q9, q10); B 5/9 (q1..q5; on every clean question it would be 5/10);
# C 4/9 (q1 q5 q7 q9; C has 9 clean answers anyway). Noisy accuracy on them:
#   A 10/10, 9/10; B 7/9, 3/9; C 7/9, 5/9.
BASELINE = {"A": 2 / 10, "B": 5 / 9, "C": 4 / 9}
ACCURACY = {("A", 1): 1.0, ("A", 2): 0.9, ("B", 1): 7 / 9, ("B", 2): 3 / 9, ("C", 1): 7 / 9, ("C", 2): 5 / 9}
N_SHARED = {"A": 10, "B": 9, "C": 9}


def table() -> pd.DataFrame:
    rows = []
    for model, outcomes in TABLE.items():
        for (condition, r), outcome in zip((("forward_full", 1), ("noisy_rewrite", 1), ("noisy_rewrite", 2)), outcomes):
            for i, c in enumerate(outcome):
                status = "answered" if c != "-" else ("failed" if condition == "forward_full" else "timeout")
                rows.append((f"q{i + 1}", model, condition, r, None if c == "-" else int(c), status))
    return pd.DataFrame(rows, columns=["question_id", "model", "condition", "r", "correct", "status"])


def cell(summary, model: str, r: int) -> pd.Series:
    cells = summary.cells
    return cells[(cells["model"] == model) & (cells["r"] == r)].iloc[0]


def test_mcnemar_and_holm_over_one_family_equal_the_hand_values():
    s = analyse(table(), alpha=0.05)
    assert len(s.cells) == 6 and s.missing.empty
    for key, p in P.items():
        row = cell(s, *key)
        assert (row["improve"], row["degrade"]) == DISCORDANT[key]
        assert row["mcnemar_p"] == pytest.approx(p, abs=1e-15)
        b, c = DISCORDANT[key]
        assert row["mcnemar_p"] == pytest.approx(binomtest(b, b + c, 0.5).pvalue, abs=1e-15)
        assert row["holm_p"] == pytest.approx(HOLM[key], abs=1e-15)
    keys = list(P)
    assert multipletests([P[k] for k in keys], method="holm")[1] == pytest.approx([HOLM[k] for k in keys], abs=1e-15)
    assert [key for key in keys if cell(s, *key)["significant"]] == [("A", 1)]


def test_family_wise_totals_and_point_estimates_are_counted_apart():
    s = analyse(table(), alpha=0.05)
    per_r = s.per_r.set_index("r")
    # point estimates (gain > 0, no test): A, B and C at r = 1; A and C at r = 2 (B lost)
    assert per_r["n_violators"].tolist() == [3, 2]
    assert per_r["n_significant"].tolist() == [1, 0]
    models = s.per_model.set_index("model")
    assert models.loc[["A", "B", "C"], "breadth"].tolist() == [2, 1, 2]
    assert models.loc[["A", "B", "C"], "significant_above_baseline"].tolist() == [1, 0, 0]
    sig = s.to_dict()["significance"]
    assert (sig["family_size"], sig["significant_above_baseline"], sig["above_baseline_point_estimate"]) == (6, 1, 5)
    assert sig["correction"] == "Holm" and sig["alpha"] == 0.05 and "every model × r cell" in sig["family"]
    assert per_r["mean_excess_violators"].tolist() == pytest.approx([(0.8 + 2 / 9 + 3 / 9) / 3, (0.7 + 1 / 9) / 2], abs=1e-12)
    # improve - degrade summed over models: r = 1: 8 + 2 + 3 = 13; r = 2: 7 - 2 + 1 = 6; slope over two r: 6 - 13
    assert per_r["net"].tolist() == [13, 6] and s.trend.slope == pytest.approx(-7.0, abs=1e-12)


def test_a_models_level_is_the_baseline_of_each_of_its_cells():
    s = analyse(table())
    models = s.per_model.set_index("model")
    for model, baseline in BASELINE.items():
        assert models.loc[model, "clean_accuracy"] == pytest.approx(baseline, abs=1e-12)
        assert models.loc[model, "n_shared"] == N_SHARED[model]
        for r in (1, 2):
            row = cell(s, model, r)
            assert row["n"] == N_SHARED[model]
            assert row["baseline"] == pytest.approx(baseline, abs=1e-12)
            assert row["accuracy"] == pytest.approx(ACCURACY[(model, r)], abs=1e-12)
            assert row["gain"] == pytest.approx(ACCURACY[(model, r)] - baseline, abs=1e-12)
    # every clean answer, for comparison: B's q10 was answered clean (wrong), but lost at r = 2
    assert models.loc[["A", "B", "C"], "clean_accuracy_all"].tolist() == pytest.approx([0.2, 0.5, 4 / 9], abs=1e-12)
    assert models.loc[["A", "B", "C"], "n_clean"].tolist() == [10, 10, 9]
    view = s.level_vs_credibility
    assert view["model"].tolist() == ["B", "C", "A"] and view["level"].tolist() == pytest.approx([5 / 9, 4 / 9, 0.2])
