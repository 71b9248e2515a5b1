"""Diagnostics of ``coreset estimate`` beyond the metrics: wiring of ``audit.sampling.diagnostics``.

Per predictor: recall by group (exact: positives are a census), macro-F1 of the group named for
detected positives, the split of errors against the construction scorer, and the failure category
of every (row, run) for the taxonomy. A table that cannot be computed from the inputs given is
skipped with the reason in ``skipped``, so a summary says why it is absent instead of hiding it.
The taxonomy counts coreset rows unweighted: a count of over-predictions there describes the
model's behaviour on the rows it saw, it is not an estimate for the full table.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.sampling.design import DesignManifest
from audit.sampling.diagnostics import (
    detected_group_f1,
    detection_decomposition,
    failure_categories,
    group_recall,
)
from connectors.predictions import Predictions

NO_GROUP_COLUMN = "no predicted-group column (--group-column) in its files"


def records(frame: pd.DataFrame) -> list[dict]:
    """JSON-ready rows: NaN becomes None (JSON has no NaN)."""
    return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
            for row in frame.to_dict("records")]


@dataclass
class PredictorDiagnostics:
    """JSON-ready tables of one predictor, why any were skipped, and its failure categories (or None)."""

    tables: dict = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    categories: np.ndarray | None = None


def _group_f1(labels: np.ndarray, values: np.ndarray, true_groups: np.ndarray, groups: np.ndarray,
              runs: tuple[str, ...]) -> dict:
    """Per run, then the run average of macro-F1 (runs may name different sets of groups)."""
    tables, macros = [], {}
    for j, run in enumerate(runs):
        table, macro = detected_group_f1(labels, values[:, j], true_groups, groups[:, j])
        tables.append(table.assign(run=run))
        macros[run] = macro
    finite = [m for m in macros.values() if not np.isnan(m)]
    return {"macro_f1": float(np.mean(finite)) if finite else None,
            "macro_f1_by_run": {r: (None if np.isnan(m) else m) for r, m in macros.items()},
            "groups": records(pd.concat(tables, ignore_index=True))}


def diagnose(design: pd.DataFrame, manifest: DesignManifest, pred: Predictions, order: np.ndarray) -> PredictorDiagnostics:
    """All diagnostics of one predictor; ``order`` puts its rows in design order (``align_predictions``)."""
    out = PredictorDiagnostics()
    labels = design["label"].to_numpy(bool)
    values = pred.values[order]
    groups = pred.groups[order] if pred.groups is not None else None
    k = values.shape[1]
    true_groups = design["group"].to_numpy(object) if "group" in design.columns else None
    if true_groups is None:
        out.skipped["group_recall"] = "the design has no group column (build it with --group-column)"
    else:
        per_run = [group_recall(labels, values[:, j], true_groups) for j in range(k)]
        table = per_run[0][["group", "n_positives"]].copy()
        table["recall"] = np.mean([r["recall"].to_numpy() for r in per_run], axis=0)
        out.tables["group_recall"] = records(table)
    if groups is None:
        out.skipped["group_f1"] = NO_GROUP_COLUMN
    else:  # a predicted-group column implies a design group: read_design(need_group=True) checked it
        out.tables["group_f1"] = _group_f1(labels, values, true_groups, groups, pred.runs)
    if "score" in design.columns:
        reference = design["score"].to_numpy() >= manifest.tau
        out.tables["versus_construction_scorer"] = records(detection_decomposition(
            np.repeat(labels, k), values.ravel(), np.repeat(reference, k), np.repeat(design["score"].to_numpy(), k),
            weights=np.repeat(design["w"].to_numpy() / k, k),
        ))
    if pred.responses is None:
        out.skipped["failure_taxonomy"] = ("no raw-response column (--response-column) in its files: "
                                           "no response cannot be told from unparsable output")
    else:
        responses, parsed = pred.responses[order], pred.parsed[order]
        verdicts = np.where(parsed, values.astype(np.int64), None)
        if groups is None:
            out.skipped["wrong_group"] = f"counted as correct detections: {NO_GROUP_COLUMN}"
        out.categories = np.concatenate([
            failure_categories(labels, responses[:, j], verdicts[:, j], None if groups is None else true_groups,
                               None if groups is None else groups[:, j])
            for j in range(k)])
    return out

