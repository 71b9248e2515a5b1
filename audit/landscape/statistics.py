"""Benchmark-level statistics of a landscape: a registry of small functions over one group of result rows.

Why a registry (inspect_ai's ``@metric``, lm-eval's metric list): the summary table, the report's
columns and the headline a re-audit tracks all iterate over ``STATISTICS``, so adding a statistic is
one decorated function (and its test), with no edit to the summary, the report or the headline.

A statistic takes a ``Group`` -- the result rows of one benchmark x perturbation x model, the rows
that were scored, and the run's settings -- and returns a number (NaN when it has none) or an
``Interval`` (a value with its interval). Its value lands in the summary table under its name; an
interval's bounds under ``<name>_ci_low``/``<name>_ci_high`` and whether the value is computed over
everything (``<name>_exact``: every pair of an MPD, whose interval is then an item bootstrap) or estimated
from a sample (sampled pairs, a CLT interval).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from audit.landscape.choices import MPD_EXACT_LIMIT, MPD_PAIRS
from audit.landscape.mpd import mpd
from audit.stats.choices import DEFAULT_SEED
from audit.stats.proportions import wilson_interval


@dataclass(frozen=True)
class Group:
    """One benchmark x perturbation x model: its result rows, those scored, and what the statistics need besides."""

    benchmark: str
    perturbation: str
    model: str
    rows: pd.DataFrame
    scored: pd.DataFrame  # rows without an error
    circular: pd.DataFrame  # ``circular_correct`` of the whole run (per source item: every rotation correct)
    exact_limit: int = MPD_EXACT_LIMIT
    pairs: int = MPD_PAIRS
    seed: int = DEFAULT_SEED


@dataclass(frozen=True)
class Interval:
    """A value with its interval; ``exact``: the value is computed over every item (or pair), not estimated from
    sampled pairs -- its interval is then the items' sampling uncertainty (Wilson, item bootstrap)."""

    value: float
    low: float
    high: float
    exact: bool


@dataclass(frozen=True)
class Statistic:
    """A registered statistic: its name (a summary column and a headline metric), its label in the report,
    whether the report shows it as a percentage and whether a re-audit tracks it (the headline)."""

    name: str
    label: str
    compute: Callable[[Group], float | Interval]
    percent: bool = False
    headline: bool = False

    def describe(self) -> dict:
        """What the report needs to show the statistic (summary.json's ``statistics``)."""
        return {"name": self.name, "label": self.label, "percent": self.percent, "headline": self.headline,
                "interval": self.name in INTERVALS}


STATISTICS: dict[str, Statistic] = {}  # in registration order: the order of the report's columns
INTERVALS: set[str] = set()  # statistics that return an ``Interval``


def statistic(name: str, label: str, *, percent: bool = False, headline: bool = False,
              interval: bool = False) -> Callable[[Callable[[Group], float | Interval]], Callable[[Group], float | Interval]]:
    """Register ``fn`` as the statistic ``name`` (a name registered twice is a mistake, not an override)."""
    def register(fn: Callable[[Group], float | Interval]) -> Callable[[Group], float | Interval]:
        if name in STATISTICS:
            raise ValueError(f"statistic {name!r} is registered already")
        STATISTICS[name] = Statistic(name, label, fn, percent, headline)
        if interval:
            INTERVALS.add(name)
        return fn
    return register


def unregister(name: str) -> None:
    """Take a statistic out of the registry (a test's own statistic, once the test is done)."""
    STATISTICS.pop(name, None)
    INTERVALS.discard(name)


def compute_all(group: Group, statistics: Mapping[str, Statistic] | None = None) -> dict[str, float | bool]:
    """Every registered statistic of one group (or those of ``statistics``, the registry as the driver has it,
    for a Ray worker whose process imported the registry afresh), as summary-table columns."""
    out: dict[str, float | bool] = {}
    for stat in (STATISTICS if statistics is None else statistics).values():
        value = stat.compute(group)
        if isinstance(value, Interval):
            out.update({stat.name: value.value, f"{stat.name}_ci_low": value.low, f"{stat.name}_ci_high": value.high,
                        f"{stat.name}_exact": value.exact})
        else:
            out[stat.name] = float(value)
    return out


def _mean(rows: pd.DataFrame, column: str) -> float:
    return float(rows[column].mean()) if len(rows) else float("nan")


@statistic("mpd", "MPD", headline=True, interval=True)
def mean_pairwise_distance(g: Group) -> Interval:
    """Mean pairwise distance between the group's (Ptop1, Hnorm) points: exact with its item-bootstrap
    interval up to ``exact_limit`` items, else sampled pairs with their CLT interval (``audit.landscape.mpd``)."""
    if len(g.scored) < 2:
        return Interval(float("nan"), float("nan"), float("nan"), True)
    est = mpd(g.scored[["ptop1", "hnorm"]].to_numpy(), exact_limit=g.exact_limit, pairs=g.pairs, seed=g.seed)
    return Interval(est.value, est.ci_low, est.ci_high, bool(est.exact))


@statistic("accuracy", "accuracy", percent=True, headline=True, interval=True)
def accuracy(g: Group) -> Interval:
    """Share of scored items answered correctly, with its Wilson interval over those items; under ``circular``
    an item counts only when all its rotations were scored and correct."""
    if g.perturbation == "circular":
        c = g.circular
        correct = c[(c["benchmark"] == g.benchmark) & (c["model"] == g.model) & c["complete"]]["all_correct"]
    else:
        correct = g.scored["correct"]
    n = len(correct)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), True)
    value = float(correct.mean())
    low, high = wilson_interval(value * n, n)
    return Interval(value, low, high, True)


@statistic("mean_ptop1", "mean Ptop1")
def mean_ptop1(g: Group) -> float:
    return _mean(g.scored, "ptop1")


@statistic("mean_hnorm", "mean Hnorm")
def mean_hnorm(g: Group) -> float:
    return _mean(g.scored, "hnorm")

