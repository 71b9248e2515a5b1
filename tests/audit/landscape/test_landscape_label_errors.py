"""The cross-model label-error score and its ranking figures, against hand values and scipy."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact, hypergeom

from audit.landscape.label_errors import (
    add_sums,
    average_precision,
    estimate_gold_accuracy,
    model_sums,
    one_hot,
    posterior,
    precision_at_k,
    precision_recall_curve,
    probabilities,
    ranking_report,
    score_answers,
    score_items,
)


def _answers(preds: dict[str, list[int]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "source_id": f"q{i}", "pred": p} for m, ps in preds.items() for i, p in enumerate(ps)])


def test_posterior_equals_the_one_coin_model_by_hand():
    # three models of accuracy 0.9 on a 4-option item, gold A (0): two say B, one says A; pi = 0.8
    log_ev = sum(model_sums(one_hot([p], 4), [0], [4], 0.9)["log_evidence"] for p in (1, 1, 0))
    post = posterior(log_ev, np.array([0]), np.array([4]), 0.8)[0]
    a, o = 0.9, 0.1 / 3
    unnorm = np.array([0.8 * a * o * o, 0.2 / 3 * a * a * o, 0.2 / 3 * o ** 3, 0.2 / 3 * o ** 3])
    assert post == pytest.approx(unnorm / unnorm.sum(), rel=1e-12)


def test_soft_answers_reduce_to_hard_ones_and_mix_by_their_probability():
    hard = model_sums(one_hot([2], 3), [0], [3], 0.8)["log_evidence"]
    soft = model_sums(probabilities([[-50.0, -50.0, 0.0]], 3), [0], [3], 0.8)["log_evidence"]
    assert soft == pytest.approx(hard, abs=1e-12)
    half = model_sums(np.array([[0.5, 0.5, 0.0]]), [0], [3], 0.8)["log_evidence"][0]
    assert half == pytest.approx(np.log([0.5 * 0.8 + 0.5 * 0.1, 0.5 * 0.8 + 0.5 * 0.1, 0.1]))


def test_agreement_on_one_other_option_outranks_scattered_misses_that_the_count_ties():
    # q0: three of four models agree on B against gold A; q1: three miss, each differently; then 40 items every
    # model gets right, and 8 that one model each misses (models that are good, not infallible)
    n = 50
    preds = {f"m{j}": [1, [1, 2, 3][j]] + [0] * 40 + [1 if i // 2 == j else 0 for i in range(8)] for j in range(3)}
    preds["m3"] = [0, 0] + [0] * 40 + [1 if i // 2 == 3 else 0 for i in range(8)]
    items = pd.DataFrame({"source_id": [f"q{i}" for i in range(n)], "gold": 0, "k": 4})
    table = score_answers(_answers(preds), items).table.set_index("source_id")
    assert table.loc["q0", "n_wrong"] == table.loc["q1", "n_wrong"] == 3
    assert table.loc["q0", "score"] > 0.5 > table.loc["q1", "score"] > table.loc["q42", "score"] > table.loc["q2", "score"]
    assert table.loc["q0", "agreed_option"] == 1 and table.loc["q0", "agreed_votes"] == 3
    assert table.loc["q0", "agreed_mass"] == pytest.approx(0.75) and table.loc["q0", "mean_gold_prob"] == pytest.approx(0.25)
    assert list(table.index[:2]) == ["q0", "q1"] and table.loc["q0", "flagged"] and not table.loc["q1", "flagged"]


def test_a_strong_models_disagreement_counts_for_more_than_a_weak_ones():
    # "strong" is right on 9 of 10 control items, "weak" on 5 of 10; each alone contradicts the gold on one item
    strong = [1, 0] + [0] * 9 + [2]
    weak = [0, 1] + [0] * 5 + [3] * 5
    items = pd.DataFrame({"source_id": [f"q{i}" for i in range(12)], "gold": 0, "k": 4})
    table = score_answers(_answers({"strong": strong, "weak": weak}), items).table.set_index("source_id")
    assert table.loc["q0", "score"] > table.loc["q1", "score"]


def test_em_estimate_of_gold_accuracy_is_a_fixed_point_and_the_sums_add_over_models():
    rng = np.random.default_rng(4)
    n, k = 300, 4
    gold = rng.integers(0, k, n)
    truth = np.where(rng.random(n) < 0.9, gold, (gold + 1) % k)
    total = None
    for acc in (0.9, 0.8, 0.7, 0.6):
        pred = np.where(rng.random(n) < acc, truth, rng.integers(0, k, n))
        part = model_sums(one_hot(pred, k), gold, np.full(n, k), float((pred == gold).mean()))
        total = add_sums(total, part)
    pi, iters = estimate_gold_accuracy(total["log_evidence"], gold, np.full(n, k))
    post = posterior(total["log_evidence"], gold, np.full(n, k), pi)
    assert pi == pytest.approx((post[np.arange(n), gold].sum() + 8) / (n + 8), abs=1e-8) and iters < 500  # Beta(9, 1) mode
    assert 0.8 < pi < 0.97  # near the 90% of golds that are right
    assert total["n_models"].max() == 4
    scored = score_items(pd.DataFrame({"source_id": range(n)}), total, gold, np.full(n, k)).table
    wrong_gold = set(np.flatnonzero(truth != gold))
    top = set(scored["source_id"][: len(wrong_gold)])
    assert len(top & wrong_gold) / len(wrong_gold) > 0.6  # the score finds most of the planted errors


def test_average_precision_and_precision_at_k_hand_values_with_ties():
    assert average_precision([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx((1 + 2 / 3) / 2)
    # tied items enter together (scikit-learn's convention): (0.5 * 0.5) + (2/3 * 0.5)
    assert average_precision([1, 1, 0], [1, 0, 1]) == pytest.approx(0.25 + 1 / 3)
    assert precision_at_k([2, 1, 1, 1, 0], [1, 1, 0, 0, 0], 2) == pytest.approx((1 + 1 / 3) / 2)
    assert precision_at_k([3, 2, 1], [0, 1, 1], 3) == pytest.approx(2 / 3)
    curve = precision_recall_curve([1, 1, 0], [1, 0, 1])
    assert curve[["precision", "recall", "flagged"]].to_numpy().tolist() == [[0.5, 0.5, 2], [2 / 3, 1.0, 3]]
    with pytest.raises(ValueError, match="k=4"):
        precision_at_k([1, 2, 3], [0, 0, 1], 4)


def test_ranking_report_enrichment_and_hypergeometric_p_match_scipy():
    rng = np.random.default_rng(1)
    labels = rng.random(400) < 0.1
    scores = labels * 0.5 + rng.random(400)
    report = ranking_report(scores, labels, ks=(50,))
    row = report["at_k"][0]
    hits = round(row["precision"] * 50)
    bad = int(labels.sum())
    assert row["enrichment"] == pytest.approx((hits / 50) / (bad / 400))
    assert row["p_value"] == pytest.approx(hypergeom.sf(hits - 1, 400, bad, 50))
    table = [[hits, 50 - hits], [bad - hits, 400 - bad - (50 - hits)]]
    assert row["p_value"] == pytest.approx(fisher_exact(table, alternative="greater")[1], rel=1e-9)
    assert row["recall"] == pytest.approx(hits / bad) and math.isfinite(report["average_precision"])
