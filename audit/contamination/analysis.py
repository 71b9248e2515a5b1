"""One entry point from an outcome table to every statistic of the contamination audit.

``analyse`` is what the job calls after generation and what ``--outcomes`` calls on a file: same
function, same numbers. Nothing missing crashes it: a model x r cell without shared questions is
listed in ``missing`` and left out of the per-r and per-model summaries (whose counts say how many
cells they cover), unscored rows are counted by category, and the largest residual of the identity
gain = (improve - degrade) / n over the cells is reported (float rounding only, ~1e-16).

``significance`` in the summary names what the tested counts control: the test, the correction,
the family (every model x r cell, one family) and its size, and alpha.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from audit.contamination.answers import SCORED, STATUSES
from audit.contamination.cells import cell_table, missing_cells, paired
from audit.contamination.outcomes import category_counts, check_outcomes
from audit.contamination.plan import NOISY
from audit.contamination.significance import DEFAULT_ALPHA, FAMILY, TEST
from audit.contamination.summary import level_vs_credibility, per_model, per_r, reversal
from audit.contamination.trend import Trend, improve_degrade_trend
from audit.stats.bootstrap import DEFAULT_BOOTSTRAP, BootstrapConfig
from audit.stats.values import records


@dataclass(frozen=True, eq=False)
class ContaminationSummary:
    """Every table and figure of one analysis; ``to_dict`` is the JSON a run writes as its summary."""

    m: int
    models: tuple[str, ...]
    n_questions: int
    alpha: float
    cells: pd.DataFrame
    per_r: pd.DataFrame
    per_model: pd.DataFrame
    level_vs_credibility: pd.DataFrame
    missing: pd.DataFrame
    categories: pd.DataFrame
    status_totals: dict[str, int]
    trend: Trend | None
    reversal: dict[str, int | None]
    identity_max_residual: float

    def significance(self) -> dict:
        """What the tested counts are and what they control, for summary.json and the report."""
        return {"test": TEST, "correction": "Holm", "family": FAMILY, "family_size": len(self.cells), "alpha": self.alpha,
                "controls": "the family-wise error rate over every cell: the chance that any cell counted significantly "
                            "above baseline has no true difference is at most alpha, so the per-model and per-r counts "
                            "and their total are all controlled",
                "significant_above_baseline": int(self.cells["significant"].astype(bool).sum()) if len(self.cells) else 0,
                "above_baseline_point_estimate": int(self.cells["violation"].astype(bool).sum()) if len(self.cells) else 0,
                "point_estimate": "a cell is above baseline when its gain is above 0, with no test; at small n most such "
                                  "cells are noise"}

    def to_dict(self) -> dict:
        return {
            "m": self.m, "models": list(self.models), "n_questions": self.n_questions, "alpha": self.alpha,
            "significance": self.significance(),
            "status_totals": self.status_totals, "scored_statuses": sorted(SCORED),
            "identity_max_residual": self.identity_max_residual, "reversal": self.reversal,
            "trend": None if self.trend is None else self.trend.to_dict(),
            "per_r": records(self.per_r), "per_model": records(self.per_model),
            "level_vs_credibility": records(self.level_vs_credibility), "cells": records(self.cells),
            "missing": records(self.missing), "categories": records(self.categories),
        }


def analyse(outcomes: pd.DataFrame, m: int | None = None, alpha: float = DEFAULT_ALPHA,
            bootstrap: BootstrapConfig = DEFAULT_BOOTSTRAP, source: str = "outcomes") -> ContaminationSummary:
    """All statistics of an outcome table (checked with ``check_outcomes`` first).

    ``m`` is the number of noisy settings expected (r = 1..m); by default the largest r in the
    table. A table with r above an explicit ``m`` is an error, since those rows would be ignored.
    """
    table = check_outcomes(outcomes, source)
    noisy_r = table.loc[table["condition"] == NOISY, "r"]
    top = int(noisy_r.max()) if len(noisy_r) else 0
    if m is None:
        m = top
    elif top > m:
        raise ValueError(f"{source}: noisy rows reach r = {top}, beyond the expected M = {m}")
    if m < 1:
        raise ValueError(f"{source}: no noisy_rewrite rows, so there is nothing to compare with the clean baseline")
    pairs = paired(table)
    cells = cell_table(pairs, alpha)
    residual = float(cells["identity_residual"].abs().max()) if len(cells) else 0.0
    r_table = per_r(cells, m)
    models_table = per_model(table, pairs, cells, m)
    totals = table["status"].value_counts()
    return ContaminationSummary(
        m=m, models=tuple(sorted(table["model"].unique())), n_questions=int(table["question_id"].nunique()), alpha=alpha,
        cells=cells, per_r=r_table, per_model=models_table, level_vs_credibility=level_vs_credibility(models_table),
        missing=missing_cells(table, cells, m), categories=category_counts(table),
        status_totals={s: int(totals.get(s, 0)) for s in STATUSES},
        trend=improve_degrade_trend(pairs, bootstrap), reversal=reversal(r_table), identity_max_residual=residual,
    )
