"""The cross-model item audit of a ``--from-lm-eval`` run in summary.json: candidates, validation, curves.

From the per-item tables of ``LmEvalRead.item_audit`` (one per audit benchmark: an lm-eval group or a
task): review candidates (``flagged``: P(gold wrong) > 1/2, or at least ``--min-wrong`` models missing
when that is given), the reviewer's labels attached, and against ``--reference`` expert labels the
ranking figures of the label-error score beside the plain count of models that miss the item: average
precision, precision / recall / enrichment / hypergeometric p at k, and both precision-recall curves.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from audit.landscape.flags import attach_review_labels, flag_candidates
from audit.landscape.label_errors import precision_recall_curve, ranking_report
from audit.landscape.validate import match_reference, validation_by_threshold
from jobs.common.runtime.summaries import records
from jobs.landscape.config import LandscapeConfig

RANKING_KS = (50, 100, 200, 500)
REVIEW_TOP = 100  # items of each benchmark on the review sheet whatever their score
CURVE_POINTS = 200  # points of each precision-recall curve kept for the report
RANKINGS = {"score": "label-error score P(gold wrong)", "n_wrong": "number of models that miss the item"}


def flags_from_audit(audit: dict[str, pd.DataFrame], cfg: LandscapeConfig, labels_for) -> pd.DataFrame:
    """Every item of every audit benchmark with ``flagged``, ``on_sheet`` (flagged, or among the ``REVIEW_TOP``
    highest scores: the review sheet has the top items even where the models' evidence flags none) and the
    reviewer's fields (``labels_for(bench)`` gives that benchmark's labels, for items of the sheet, or None)."""
    frames = []
    for bench, table in audit.items():
        if cfg.min_wrong is not None:
            table = flag_candidates(table.drop(columns="flagged"), cfg.min_wrong)
        flagged = table["flagged"].to_numpy()
        on_sheet = flagged | (np.arange(len(table)) < REVIEW_TOP)  # the table is in score order
        table = attach_review_labels(table.assign(flagged=on_sheet), labels_for(bench))
        table["flagged"], table["on_sheet"] = flagged, on_sheet
        table["min_wrong"] = cfg.min_wrong
        frames.append(table)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["benchmark", "source_id", "flagged"])


def _curve(scores: np.ndarray, labels: np.ndarray) -> list[list[float]]:
    curve = precision_recall_curve(scores, labels)
    if len(curve) > CURVE_POINTS:
        curve = curve.iloc[np.unique(np.linspace(0, len(curve) - 1, CURVE_POINTS).round().astype(int))]
    return curve[["recall", "precision"]].round(4).to_numpy().tolist()


def validate_audit(audit: dict[str, pd.DataFrame], reference: pd.DataFrame | None
                   ) -> tuple[list[dict], list[dict], dict[str, dict[str, int]]]:
    """(count-rule rows per benchmark and m, ranking rows per benchmark, items matched to the reference per
    task -- ``matched`` of ``items``, as ``jobs.landscape.summary.reference_matches``: a group's items are
    counted by their subtask, so a subject the reference lacks is named) against expert labels."""
    if reference is None:
        return [], [], {}
    rows, rankings, matched = [], [], {}
    for bench, table in audit.items():
        matches = match_reference(table[["source_id", "question", "options"]], reference)
        counted = matches["match"].value_counts().to_dict()
        n_matched = int(matches["expert_bad"].notna().sum())
        tasks = table["task"] if "task" in table else pd.Series(bench, index=table.index)
        hit = tasks[matches["expert_bad"].notna().to_numpy()].value_counts()
        matched.update({t: {"matched": int(hit.get(t, 0)), "items": int(n)} for t, n in tasks.value_counts().items()})
        models = int(table["n_models"].max()) if len(table) else 0
        for row in records(validation_by_threshold(table[["source_id", "n_models", "n_wrong"]], matches, range(1, models + 1))):
            rows.append({"benchmark": bench, **row, "chosen": row["min_wrong"] == (models if len(table) else 0),
                         "matches": {k: int(v) for k, v in counted.items()}})
        if n_matched == 0:
            continue
        joined = table.merge(matches[matches["expert_bad"].notna()][["source_id", "expert_bad"]], on="source_id")
        labels = joined["expert_bad"].astype(bool).to_numpy()
        entry: dict[str, Any] = {"benchmark": bench, "matched": n_matched, "items": len(table), "models": models,
                                 "matches": {k: int(v) for k, v in counted.items()}}
        for name in RANKINGS:
            scores = joined[name].to_numpy(dtype=float)
            entry[name] = {**ranking_report(scores, labels, RANKING_KS), "curve": _curve(scores, labels)}
        rankings.append(entry)
    return rows, rankings, matched


def audit_overview(audit: dict[str, pd.DataFrame]) -> dict[str, dict]:
    """Per audit benchmark: items, models, the EM estimate of the share of right gold labels, flagged count."""
    return {b: {"items": len(t), "models": int(t["n_models"].max()) if len(t) else 0,
                "gold_accuracy": float(t["gold_accuracy"].iloc[0]) if len(t) else None,
                "flagged": int(t["flagged"].sum())} for b, t in audit.items()}
