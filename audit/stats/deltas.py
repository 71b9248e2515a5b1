"""Differences between two runs' headline metrics: the delta, its interval, and a verdict.

Interval of a difference (MOVER, Zou & Donner 2008, "Construction of confidence limits about
effect measures: a general approach", Stat. Med. 27:1693): from an estimate and interval of each
run, ``d = new - old`` has

    low  = d - sqrt((new - new_low)^2 + (old_high - old)^2)
    high = d + sqrt((new_high - new)^2 + (old - old_low)^2)

It needs only the two intervals (every headline row carries them), keeps their asymmetry (shares
near 0 or 1), and reduces to the usual sqrt(se1^2 + se2^2) Wald interval when both are symmetric.
It treats the runs as independent samples. Two audits of the same benchmark share most items,
which makes their estimates positively correlated, so the true interval of the difference is
narrower: this one errs on the wide side, never the narrow one.

The verdict follows the plan's thresholds: a metric whose |delta| stays within ``tolerance`` is
``unchanged``; beyond it, ``improved`` or ``regressed`` by the direction that is better for that
metric. With ``require_interval`` the interval must also exclude zero, so sampling noise alone
cannot fail a gate. A metric no threshold names is only ``changed`` or ``unchanged``: it is
reported, never gated.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

Better = Literal["higher", "lower"]
STATUSES = ("regressed", "improved", "unchanged", "changed", "added", "removed", "undefined")


@dataclass(frozen=True)
class Threshold:
    """A rule for the metrics whose name (and input) match the shell-style patterns."""

    metric: str
    better: Better
    tolerance: float = 0.0
    input: str = "*"
    require_interval: bool = False

    def matches(self, input: str, metric: str) -> bool:
        return fnmatchcase(metric, self.metric) and fnmatchcase(input, self.input)


@dataclass(frozen=True)
class MetricDelta:
    """One metric of one input, before and after."""

    input: str
    metric: str
    old: float | None
    new: float | None
    delta: float | None
    delta_low: float | None
    delta_high: float | None
    status: str
    rule: str | None  # the threshold that decided, as written in the plan

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _number(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        return None
    return float(v)


def mover_interval(new: float, new_ci: Sequence[float | None], old: float, old_ci: Sequence[float | None]
                   ) -> tuple[float | None, float | None]:
    """The interval of ``new - old`` from the two estimates and their intervals (None without both)."""
    nl, nh = (_number(x) for x in new_ci)
    ol, oh = (_number(x) for x in old_ci)
    if nl is None or nh is None or ol is None or oh is None:
        return None, None
    d = new - old
    return d - math.sqrt((new - nl) ** 2 + (oh - old) ** 2), d + math.sqrt((nh - new) ** 2 + (old - ol) ** 2)


def verdict(delta: float, low: float | None, high: float | None, rule: Threshold | None) -> str:
    """``improved`` / ``regressed`` / ``unchanged`` under ``rule``; ``changed`` / ``unchanged`` without one."""
    if rule is None:
        return "unchanged" if delta == 0 else "changed"
    if abs(delta) <= rule.tolerance:
        return "unchanged"
    if rule.require_interval and (low is None or high is None or low <= 0 <= high):
        return "unchanged"
    good = delta > 0 if rule.better == "higher" else delta < 0
    return "improved" if good else "regressed"


def _rule_text(rule: Threshold) -> str:
    where = f" of {rule.input}" if rule.input != "*" else ""
    extra = ", interval excluding 0" if rule.require_interval else ""
    return f"{rule.metric}{where}: {rule.better} is better, tolerance {rule.tolerance:g}{extra}"


def compare_headlines(old: Iterable[dict], new: Iterable[dict], thresholds: Sequence[Threshold] = ()) -> list[MetricDelta]:
    """Pair the headline rows ``{input, metric, value, ci_low, ci_high}`` of two runs by (input, metric).

    The first threshold that matches a metric decides it. Rows only in ``new`` are ``added``, only
    in ``old`` ``removed``; a value that is not a finite number on either side is ``undefined``.
    """
    before = {(r["input"], r["metric"]): r for r in old}
    after = {(r["input"], r["metric"]): r for r in new}
    out = []
    for key in list(before) + [k for k in after if k not in before]:
        input, metric = key
        rule = next((t for t in thresholds if t.matches(input, metric)), None)
        b, a = before.get(key), after.get(key)
        vb, va = (_number(b["value"]) if b else None), (_number(a["value"]) if a else None)
        if b is None or a is None:
            status, d, lo, hi = ("added" if b is None else "removed"), None, None, None
        elif vb is None or va is None:
            status, d, lo, hi = ("unchanged" if b["value"] == a["value"] else "undefined"), None, None, None
        else:
            d = va - vb
            lo, hi = mover_interval(va, (a.get("ci_low"), a.get("ci_high")), vb, (b.get("ci_low"), b.get("ci_high")))
            status = verdict(d, lo, hi, rule)
        out.append(MetricDelta(input, metric, vb, va, d, lo, hi, status, _rule_text(rule) if rule else None))
    return out
