"""Diagnostics on the coreset, checked against hand-computed tables."""

import numpy as np
import pytest

from audit.coreset.diagnostics import (
    detected_group_f1,
    detection_decomposition,
    failure_categories,
    failure_taxonomy,
    group_f1,
    group_recall,
)


def test_group_recall_counts_positives_only():
    labels = np.array([1, 1, 1, 1, 0, 1])
    detected = np.array([1, 0, 1, 1, 1, 0])
    groups = np.array(["fan-in", "fan-in", "cycle", "cycle", None, "stack"], dtype=object)
    t = group_recall(labels, detected, groups).set_index("group")
    assert t.loc["fan-in", "recall"] == 0.5 and t.loc["cycle", "recall"] == 1.0 and t.loc["stack", "recall"] == 0.0
    assert t["n_positives"].sum() == 5
    with pytest.raises(ValueError, match="column 'group' is missing"):
        group_recall(np.array([1]), np.array([1]), np.array([None], dtype=object))


def test_group_f1_and_macro_average_by_hand():
    true = np.array(["a", "a", "b", "b", "c"])
    pred = np.array(["a", "b", "b", "b", "d"])
    t, macro = group_f1(true, pred)
    t = t.set_index("group")
    # a: tp 1, pred 1, true 2 -> F1 2/3; b: tp 2, pred 3, true 2 -> 4/5; c: 0; d (hallucinated): 0
    assert t.loc["a", "f1"] == pytest.approx(2 / 3) and t.loc["b", "f1"] == pytest.approx(0.8)
    assert t.loc["c", "f1"] == 0 and t.loc["d", "f1"] == 0
    assert macro == pytest.approx((2 / 3 + 0.8) / 4)


def test_detection_decomposition_by_hand():
    labels = np.array([1, 1, 0, 0, 1, 0])
    model = np.array([1, 0, 0, 1, 0, 1])
    reference = np.array([1, 1, 1, 1, 0, 0])
    score = np.array([0.9, 0.8, 0.7, 0.6, 0.1, 0.2])
    t = detection_decomposition(labels, model, reference, score).set_index("cell")
    # rows: 0 both right, 1 ref only, 2 model only, 3 both wrong, 4 both wrong, 5 ref only
    assert t.loc["both_correct", "n"] == 1 and t.loc["model_only", "n"] == 1
    assert t.loc["reference_only", "n"] == 2 and t.loc["both_wrong", "n"] == 2
    assert t.loc["both_wrong", "n_positive"] == 1 and t.loc["both_wrong", "n_negative"] == 1
    assert t.loc["reference_only", "mean_reference_score"] == pytest.approx(0.5)
    weighted = detection_decomposition(labels, model, reference, score, weights=np.array([1, 1, 10, 10, 1, 10]))
    assert weighted.set_index("cell").loc["both_wrong", "n"] == 11


def test_failure_taxonomy_separates_no_response_from_unparsable():
    labels = np.array([1, 0, 1, 0, 1, 1, 0])
    responses = np.array(["yes: cycle", "yes", "no", None, "   ", "I cannot tell", "no"], dtype=object)
    predictions = np.array([1, 1, 0, None, None, None, 0], dtype=object)
    true_groups = np.array(["cycle", None, "stack", None, "cycle", "cycle", None], dtype=object)
    pred_groups = np.array(["fan-in", None, None, None, None, None, None], dtype=object)
    cats = failure_categories(labels, responses, predictions, true_groups, pred_groups)
    assert cats.tolist() == [
        "wrong_group",
        "over_prediction",
        "under_prediction",
        "no_response",
        "no_response",
        "unparsable",
        "correct",
    ]
    t = failure_taxonomy({"m1": cats}).iloc[0]
    assert t["n"] == 7 and t["no_response"] == 2 and t["unparsable"] == 1
    assert t["correct_share"] == pytest.approx(1 / 7)


def test_detected_group_f1_scores_detected_positives_and_names_a_missing_group():
    labels = np.array([1, 1, 1, 0, 1])
    detected = np.array([1, 1, 0, 1, 1])
    true = np.array(["a", "a", "b", None, "b"], dtype=object)
    pred = np.array(["a", "b", "a", "a", None], dtype=object)
    t, macro = detected_group_f1(labels, detected, true, pred)
    t = t.set_index("group")
    # rows 0, 1, 4: a->a, a->b, b->(none); a: F1 2/3; b: tp 0 of pred 1, true 1 -> 0; (none): 0
    assert list(t.index) == ["(none)", "a", "b"] and t.loc["a", "f1"] == pytest.approx(2 / 3)
    assert t.loc["(none)", "predicted"] == 1 and t.loc["(none)", "support"] == 0
    assert macro == pytest.approx(2 / 9)


def test_group_diagnostics_over_runs_by_hand():
    from audit.coreset.diagnostics import detected_group_f1_over_runs, group_recall_over_runs

    labels = np.array([1, 1, 1, 0])
    groups = np.array(["a", "a", "b", None], dtype=object)
    detected = np.array([[1, 0], [1, 1], [0, 1], [1, 1]])
    table = group_recall_over_runs(labels, detected, groups)
    assert table.to_dict("list") == {"group": ["a", "b"], "n_positives": [2, 1], "recall": [0.75, 0.5]}
    named = np.array([["a", "b"], ["a", "a"], [None, "b"], ["a", "a"]], dtype=object)
    rows, by_run, mean = detected_group_f1_over_runs(labels, detected, groups, named, ("r1", "r2"))
    # run 1: detected positives 0,1 both named a correctly -> groups {a}: F1 1 -> macro 1
    # run 2: detected positives 1 (a, named a) and 2 (b, named b) -> macro 1
    assert by_run == {"r1": 1.0, "r2": 1.0} and mean == 1.0 and set(rows["run"]) == {"r1", "r2"}
