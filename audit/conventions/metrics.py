"""Benchmark-level convention metrics from mergeable per-batch counts and per-item labels.

Flow for a distributed job: per batch, ``partial_counts(labels, signals)`` gives a small long
table of counts (benchmark, dimension, key, variety, count); ``merge_counts`` sums any number of
them (order-free, so blocks can be combined in any tree); ``summarize(counts, labels)`` turns the
merged counts plus the per-item label table (a few integers per item) into one summary per
benchmark. No text is collected to the driver.

Definitions (fractions, not percentages):

- coverage = items with at least one american/other signal / items;
- American share = A / (A + O) over signals; skew = 2 * share - 1 (-1 all other, +1 all American);
- share excluding spelling: the same without the ``spelling`` category (lexical pairs, when
  enabled, dates, times and units remain);
- per category: A and O per convention class; per field: where the signals sit. The field
  breakdown counts every signal, including gold answers that repeat an option, so "gold" shows
  the answer key's own conventions; totals count such a repeat once (see ``labels.py``).

Intervals are percentile item bootstraps (``audit.stats.bootstrap``, seeded, 10,000 replicates by
default) resampling items, so coverage and shares of one replicate come from the same draw.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.conventions.choices import FIELDS
from audit.conventions.labels import LABELS, counted
from audit.conventions.signals import CATEGORIES
from audit.stats.bootstrap import (
    DEFAULT_BOOTSTRAP,
    BootstrapConfig,
    BootstrapInterval,
    cluster_bootstrap_ratio,
)

COUNT_SCHEMA = pa.schema([
    ("benchmark", pa.string()),
    ("dimension", pa.string()),  # label | category | field
    ("key", pa.string()),
    ("variety", pa.string()),
    ("count", pa.int64()),
])
_KEYS = ["benchmark", "dimension", "key", "variety"]


def _grouped(table: pa.Table, dimension: str, key: str) -> pa.Table:
    """Counts of (benchmark, ``key`` column, variety) rows, tagged with ``dimension``."""
    if table.num_rows == 0:
        return COUNT_SCHEMA.empty_table()
    grouped = table.group_by(["benchmark", key, "variety"]).aggregate([([], "count_all")])
    n = grouped.num_rows
    return pa.table({
        "benchmark": grouped.column("benchmark"),
        "dimension": pa.array([dimension] * n, pa.string()),
        "key": grouped.column(key),
        "variety": grouped.column("variety"),
        "count": grouped.column("count_all"),
    }, schema=COUNT_SCHEMA)


def partial_counts(labels: pa.Table, signals: pa.Table) -> pa.Table:
    """Mergeable counts of one batch: item labels, signals per category and per field."""
    items = labels.select(["benchmark", "label"]).append_column(
        "variety", pa.array([""] * labels.num_rows, pa.string())
    )
    return pa.concat_tables([
        _grouped(items, "label", "label"),
        _grouped(counted(signals), "category", "category"),
        _grouped(signals, "field", "field"),
    ])


def merge_counts(parts: Iterable[pa.Table]) -> pa.Table:
    """Sum partial counts from any number of batches (associative and commutative)."""
    table = pa.concat_tables([COUNT_SCHEMA.empty_table(), *parts])
    summed = table.group_by(_KEYS).aggregate([("count", "sum")]).rename_columns(_KEYS + ["count"])
    return summed.select(COUNT_SCHEMA.names).cast(COUNT_SCHEMA)


@dataclass(frozen=True)
class Breakdown:
    """American and other signal counts of one category or field, and the share they give."""

    american: int
    other: int

    @property
    def share(self) -> float:
        total = self.american + self.other
        return self.american / total if total else float("nan")


@dataclass(frozen=True)
class BenchmarkSummary:
    """One benchmark's row of the conventions table (fractions; intervals are item bootstraps)."""

    benchmark: str
    n_items: int
    n_covered: int
    n_american: int
    n_other: int
    n_american_excl_spelling: int
    n_other_excl_spelling: int
    n_ambiguous: int
    n_neutral: int
    labels: dict[str, int]
    by_category: dict[str, Breakdown]
    by_field: dict[str, Breakdown]
    coverage_ci: BootstrapInterval
    share_ci: BootstrapInterval
    share_excl_spelling_ci: BootstrapInterval

    @property
    def coverage(self) -> float:
        return self.n_covered / self.n_items if self.n_items else float("nan")

    @property
    def american_share(self) -> float:
        return Breakdown(self.n_american, self.n_other).share

    @property
    def skew(self) -> float:
        return 2 * self.american_share - 1

    @property
    def skew_ci(self) -> tuple[float, float]:
        """Skew is monotone in the share, so its interval maps the share's bounds."""
        return 2 * self.share_ci.low - 1, 2 * self.share_ci.high - 1

    @property
    def american_share_excl_spelling(self) -> float:
        return Breakdown(self.n_american_excl_spelling, self.n_other_excl_spelling).share


def _lookup(counts: pa.Table, benchmark: str, dimension: str) -> dict[tuple[str, str], int]:
    mask = pc.and_(pc.equal(counts.column("benchmark"), benchmark), pc.equal(counts.column("dimension"), dimension))
    rows = counts.filter(mask).to_pylist()
    return {(r["key"], r["variety"]): int(r["count"]) for r in rows}


def _breakdowns(table: dict[tuple[str, str], int], keys: Iterable[str]) -> dict[str, Breakdown]:
    return {k: Breakdown(table.get((k, "american"), 0), table.get((k, "other"), 0)) for k in keys}


def summarize(counts: pa.Table, labels: pa.Table, config: BootstrapConfig = DEFAULT_BOOTSTRAP) -> list[BenchmarkSummary]:
    """One summary per benchmark in ``counts``, with bootstrap intervals from ``labels``.

    Raises ``ValueError`` naming the benchmark when counts and labels disagree on its item count
    (labels from a different run, or a batch lost on the way).
    """
    out = []
    for benchmark in sorted(set(counts.column("benchmark").to_pylist())):
        label_counts = _lookup(counts, benchmark, "label")
        n_items = sum(label_counts.values())
        mine = labels.filter(pc.equal(labels.column("benchmark"), benchmark))
        if mine.num_rows != n_items:
            raise ValueError(f"benchmark {benchmark!r}: counts have {n_items} items, labels {mine.num_rows}")
        cols = {name: mine.column(name).to_numpy().astype(np.float64) for name in mine.schema.names
                if name.startswith("n_")}
        a, o = cols["n_american"], cols["n_other"]
        a_ns, o_ns = cols["n_american_excl_spelling"], cols["n_other_excl_spelling"]
        covered = ((a + o) > 0).astype(np.float64)
        coverage_ci, share_ci, excl_ci = cluster_bootstrap_ratio(
            np.column_stack([covered, a, a_ns]),
            np.column_stack([np.ones_like(a), a + o, a_ns + o_ns]),
            np.arange(len(a)),
            config,
        )
        out.append(BenchmarkSummary(
            benchmark=benchmark, n_items=n_items, n_covered=int(covered.sum()),
            n_american=int(a.sum()), n_other=int(o.sum()),
            n_american_excl_spelling=int(a_ns.sum()), n_other_excl_spelling=int(o_ns.sum()),
            n_ambiguous=int(cols["n_ambiguous"].sum()), n_neutral=int(cols["n_neutral"].sum()),
            labels={label: label_counts.get((label, ""), 0) for label in LABELS},
            by_category=_breakdowns(_lookup(counts, benchmark, "category"), CATEGORIES),
            by_field=_breakdowns(_lookup(counts, benchmark, "field"), FIELDS),
            coverage_ci=coverage_ci, share_ci=share_ci, share_excl_spelling_ci=excl_ci,
        ))
    return out


def summary_table(summaries: Iterable[BenchmarkSummary]) -> pa.Table:
    """The many-benchmarks table: one row per benchmark, fractions and interval bounds."""
    rows = [{
        "benchmark": s.benchmark, "n_items": s.n_items, "coverage": s.coverage,
        "coverage_low": s.coverage_ci.low, "coverage_high": s.coverage_ci.high,
        "n_american": s.n_american, "n_other": s.n_other, "american_share": s.american_share,
        "american_share_low": s.share_ci.low, "american_share_high": s.share_ci.high,
        "skew": s.skew, "skew_low": s.skew_ci[0], "skew_high": s.skew_ci[1],
        "american_share_excl_spelling": s.american_share_excl_spelling,
        "american_share_excl_spelling_low": s.share_excl_spelling_ci.low,
        "american_share_excl_spelling_high": s.share_excl_spelling_ci.high,
        "n_ambiguous": s.n_ambiguous, "n_neutral": s.n_neutral,
        **{f"items_{label}": s.labels[label] for label in LABELS},
        **{f"{c}_american": s.by_category[c].american for c in CATEGORIES},
        **{f"{c}_other": s.by_category[c].other for c in CATEGORIES},
    } for s in summaries]
    return pa.Table.from_pylist(rows)
