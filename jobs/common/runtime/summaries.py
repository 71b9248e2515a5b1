"""summary.json: its tidy headline rows, its checks, and its numbers (undefined values, NaN, become
``null`` through ``audit.stats.values.finite``, so the file is valid JSON)."""
from __future__ import annotations

import math
from typing import Any

from audit.stats.values import finite, records

# finite and records live with the science (audit.stats.values), which needs them too; jobs take them from here
__all__ = ["MAX_TEXT_CHARS", "SCHEMA_VERSION", "check_summary", "clip_text", "finite", "headline", "min_bootstrap_clusters",
           "records"]

SCHEMA_VERSION = 1  # of summary.json; bump when a key's meaning changes


def headline(input: str, metric: str, value: Any, ci: tuple[Any, Any] | list | None = None) -> dict:
    """One row of a summary's ``headline``: the few metrics run history, diffs and trend plots track.

    Tidy on purpose (one row per input and metric, interval bounds as columns), so every job's
    headline loads into one table: ``pd.DataFrame(summary["headline"])``.
    """
    low, high = (ci if ci is not None else (None, None))
    return {"input": input, "metric": metric, "value": finite(value), "ci_low": finite(low), "ci_high": finite(high)}


def check_summary(summary: dict) -> dict:
    """``summary`` with its schema version, after checking the keys every job's summary.json has."""
    missing = [k for k in ("job", "run_id", "table", "headline") if k not in summary]
    if missing:
        raise ValueError(f"summary of {summary.get('job', '?')} lacks {missing}")
    for row in summary["headline"]:
        if set(row) != {"input", "metric", "value", "ci_low", "ci_high"}:
            raise ValueError(f"headline row {row} is not made by jobs.common.runtime.summaries.headline")
    return {"schema_version": SCHEMA_VERSION, **summary}


def min_bootstrap_clusters(level: float) -> int:
    """The fewest resampled units (questions, items, countries) whose percentile bootstrap can give a
    two-sided interval at ``level``.

    Why: k units have only C(2k-1, k) distinct resamples; one question has one (the interval is the
    estimate twice, ``[+0.022, +0.022]``), two have three. An interval needs at least 2/(1 - level)
    distinct resamples (one beyond each tail of (1 - level)/2): 40 at 0.95, so 5 units.
    """
    need, k = 2.0 / (1.0 - level), 1
    while math.comb(2 * k - 1, k) < need:
        k += 1
    return k


MAX_TEXT_CHARS = 2_000  # of one text field in summary.json, a report or a review sheet; the full text is in data/


def clip_text(text: str | None, limit: int = MAX_TEXT_CHARS) -> str | None:
    """``text`` if it has at most ``limit`` characters, else its first and last ``limit // 2`` around
    ``… (N characters, truncated) …``.

    Why both ends: an lm-eval context is the few-shot examples followed by the question, so the end
    is what a reviewer needs; a 50 MB field copied into summary.json, report.html and the review CSV
    made all three unusable. The run's Parquet data keeps every character.
    """
    if text is None or len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … ({len(text):,} characters, truncated) … {text[-half:]}"
