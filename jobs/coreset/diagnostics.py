"""Diagnostics of ``coreset estimate`` beyond the metrics: wiring of ``audit.coreset.diagnostics``.

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

from audit.coreset.design import DesignManifest
from audit.coreset.diagnostics import (
    detected_group_f1_over_runs,
    detection_decomposition,
    failure_categories,
    group_recall_over_runs,
)
from connectors.coreset.predictions import Predictions
from jobs.common.runtime.summaries import finite, records

NO_GROUP_COLUMN = "no predicted-group column (--group-column) in its files"


@dataclass
class PredictorDiagnostics:
    """JSON-ready tables of one predictor, why any were skipped, and its failure categories (or None)."""

    tables: dict = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    categories: np.ndarray | None = None


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
        out.tables["group_recall"] = records(group_recall_over_runs(labels, values, true_groups))
    if groups is None:
        out.skipped["group_f1"] = NO_GROUP_COLUMN
    else:  # a predicted-group column implies a design group: read_design(need_group=True) checked it
        assert true_groups is not None, "read_design(need_group=True) checked the design's group column"
        table, by_run, macro = detected_group_f1_over_runs(labels, values, true_groups, groups, pred.runs)
        out.tables["group_f1"] = {"macro_f1": finite(macro), "macro_f1_by_run": {r: finite(m) for r, m in by_run.items()},
                                  "groups": records(table)}
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
        verdicts = np.where(parsed, values.astype(np.int64), np.array(None, dtype=object))  # None where unparsed
        if groups is None:
            out.skipped["wrong_group"] = f"counted as correct detections: {NO_GROUP_COLUMN}"
        out.categories = np.concatenate([
            failure_categories(labels, responses[:, j], verdicts[:, j], None if groups is None else true_groups,
                               None if groups is None else groups[:, j])
            for j in range(k)])
    return out

