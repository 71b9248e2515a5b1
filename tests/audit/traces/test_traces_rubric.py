"""Outcome-stratified trace audit with regex rubric steps."""

import numpy as np
import pytest

from audit.traces.rubric import (
    RubricStep,
    outcome_stratified_sample,
    rubric_passes,
    trace_audit,
)

STEPS = [RubricStep("amount", r"\$\d+"), RubricStep("rule", r"\bstructuring\b")]


def test_pass_rates_by_verdict_by_hand():
    traces = [
        "Moved $9000 twice: structuring.",
        "Looks normal.",
        "STRUCTURING below $10000",
        None,
        "Amount $5 is small",
    ]
    correct = np.array([1, 1, 0, 0, 0], dtype=bool)
    passes = rubric_passes(traces, STEPS)
    assert passes["amount"].tolist() == [True, False, True, False, True]
    assert passes["rule"].tolist() == [True, False, True, False, False]
    t = trace_audit(traces, correct, STEPS).set_index("step")
    assert t.loc["amount", "pass_rate_correct"] == 0.5
    assert t.loc["amount", "pass_rate_incorrect"] == pytest.approx(2 / 3)
    assert t.loc["rule", "passes_incorrect"] == 1 and t.loc["rule", "gap"] == pytest.approx(0.5 - 1 / 3)


def test_rubric_validation():
    with pytest.raises(ValueError, match="invalid regex"):
        RubricStep("bad", "(")
    with pytest.raises(ValueError, match="unique"):
        rubric_passes(["x"], [RubricStep("a", "x"), RubricStep("a", "y")])


def test_outcome_stratified_sample_balances_and_reproduces():
    ids = np.arange(1_000)
    correct = ids % 10 != 0  # 900 correct, 100 incorrect
    pick = outcome_stratified_sample(ids, correct, 30, seed=4)
    assert np.sum(correct[pick]) == 30 and np.sum(~correct[pick]) == 30
    assert np.array_equal(np.sort(pick), np.sort(outcome_stratified_sample(ids, correct, 30, seed=4)))
