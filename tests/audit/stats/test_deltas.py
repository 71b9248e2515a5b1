"""Deltas between two runs' headline metrics: MOVER intervals by hand, verdicts by the plan's rules."""
from __future__ import annotations

import math

import pytest

from audit.stats.deltas import Threshold, compare_headlines, mover_interval, verdict


def row(input: str, metric: str, value, low=None, high=None) -> dict:
    return {"input": input, "metric": metric, "value": value, "ci_low": low, "ci_high": high}


def test_mover_by_hand_and_against_wald_for_symmetric_intervals():
    # new 0.60 [0.50, 0.72], old 0.70 [0.62, 0.76]: d = -0.10
    low, high = mover_interval(0.60, (0.50, 0.72), 0.70, (0.62, 0.76))
    assert low == pytest.approx(-0.10 - math.sqrt(0.10 ** 2 + 0.06 ** 2))
    assert high == pytest.approx(-0.10 + math.sqrt(0.12 ** 2 + 0.08 ** 2))
    # symmetric intervals (estimate +- 1.96 se): MOVER is the Wald interval of a difference of independent estimates
    se1, se2 = 0.03, 0.04
    low, high = mover_interval(0.5, (0.5 - 1.96 * se1, 0.5 + 1.96 * se1), 0.4, (0.4 - 1.96 * se2, 0.4 + 1.96 * se2))
    half = 1.96 * math.hypot(se1, se2)
    assert (low, high) == (pytest.approx(0.1 - half), pytest.approx(0.1 + half))
    assert mover_interval(0.5, (None, 0.6), 0.4, (0.3, 0.5)) == (None, None)


def test_verdicts_follow_direction_tolerance_and_interval():
    higher = Threshold("acc", "higher", tolerance=0.02)
    assert verdict(0.01, None, None, higher) == "unchanged"
    assert verdict(-0.03, None, None, higher) == "regressed" and verdict(0.03, None, None, higher) == "improved"
    lower = Threshold("error", "lower", tolerance=0.0)
    assert verdict(0.001, None, None, lower) == "regressed"
    strict = Threshold("acc", "higher", tolerance=0.02, require_interval=True)
    assert verdict(-0.05, -0.09, 0.01, strict) == "unchanged"  # the interval holds 0: noise cannot fail the gate
    assert verdict(-0.05, -0.09, -0.01, strict) == "regressed"
    assert verdict(0.0, None, None, None) == "unchanged" and verdict(0.2, None, None, None) == "changed"


def test_compare_pairs_rows_and_names_the_deciding_rule():
    old = [row("mmlu", "accuracy", 0.70, 0.66, 0.74), row("mmlu", "mpd", 0.31), row("arc", "accuracy", 0.5), row("gone", "x", 1)]
    new = [row("mmlu", "accuracy", 0.64, 0.60, 0.68), row("mmlu", "mpd", 0.31), row("arc", "accuracy", None), row("new", "x", 2)]
    rules = [Threshold("acc*", "higher", 0.02, input="mmlu"), Threshold("*", "higher", 0.5)]
    got = {(d.input, d.metric): d for d in compare_headlines(old, new, rules)}
    acc = got[("mmlu", "accuracy")]
    assert acc.status == "regressed" and acc.delta == pytest.approx(-0.06)
    assert acc.rule == "acc* of mmlu: higher is better, tolerance 0.02"
    half = math.hypot(0.04, 0.04)
    assert (acc.delta_low, acc.delta_high) == (pytest.approx(-0.06 - half), pytest.approx(-0.06 + half))
    assert got[("mmlu", "mpd")].status == "unchanged" and got[("mmlu", "mpd")].rule == "*: higher is better, tolerance 0.5"
    assert got[("arc", "accuracy")].status == "undefined" and got[("gone", "x")].status == "removed"
    assert got[("new", "x")].status == "added"
