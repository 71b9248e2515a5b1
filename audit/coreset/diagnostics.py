"""Diagnostics on the coreset: where detections succeed or fail, beyond one F1 number.

All functions take aligned 1-D arrays over coreset rows and return small tables. Recall per group
is exact because positives are a census; the failure taxonomy and the error decomposition are
descriptive counts on the coreset rows (apply the design weights ``w`` to scale negatives' counts
to the population when needed; ``weights`` arguments do that).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

FAILURE_CATEGORIES = (
    "correct",
    "over_prediction",
    "under_prediction",
    "wrong_group",
    "no_response",
    "unparsable",
)


def group_recall(labels: np.ndarray, detected: np.ndarray, groups: np.ndarray) -> pd.DataFrame:
    """Recall per positive group (typology): detected positives / positives in the group."""
    labels = np.asarray(labels, dtype=bool)
    frame = pd.DataFrame({"group": np.asarray(groups)[labels], "detected": np.asarray(detected, dtype=bool)[labels]})
    if frame["group"].isna().any():
        raise ValueError("column 'group' is missing on some positive rows; expected a group for every positive")
    out = frame.groupby("group", sort=True)["detected"].agg(n_positives="size", n_detected="sum").reset_index()
    out["recall"] = out["n_detected"] / out["n_positives"]
    return out


def group_f1(true_groups: np.ndarray, predicted_groups: np.ndarray) -> tuple[pd.DataFrame, float]:
    """Per-group precision/recall/F1 of the group a model names for detected positives, and macro-F1.

    Groups are the union of true and predicted names, so a hallucinated group counts against
    macro-F1 (F1 0) instead of vanishing from the average.
    """
    true_groups = np.asarray(true_groups, dtype=object)
    predicted_groups = np.asarray(predicted_groups, dtype=object)
    if len(true_groups) != len(predicted_groups):
        raise ValueError(f"true and predicted groups differ in length: {len(true_groups)} vs {len(predicted_groups)}")
    rows = []
    for g in sorted(set(true_groups.tolist()) | set(predicted_groups.tolist()), key=str):
        tp = int(np.sum((true_groups == g) & (predicted_groups == g)))
        n_pred = int(np.sum(predicted_groups == g))
        n_true = int(np.sum(true_groups == g))
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_true if n_true else 0.0
        f1 = 2 * tp / (n_pred + n_true) if n_pred + n_true else 0.0
        rows.append(
            {"group": g, "support": n_true, "predicted": n_pred, "precision": precision, "recall": recall, "f1": f1}
        )
    table = pd.DataFrame(rows, columns=["group", "support", "predicted", "precision", "recall", "f1"])
    return table, float(table["f1"].mean()) if len(table) else float("nan")


NO_GROUP = "(none)"


def detected_group_f1(
    labels: np.ndarray, detected: np.ndarray, true_groups: np.ndarray, predicted_groups: np.ndarray
) -> tuple[pd.DataFrame, float]:
    """``group_f1`` over the detected positives (label 1, verdict 1): did the model name the right group?

    Why only those rows: a missed positive names no group and a false alarm has no true group; both
    already count against recall and precision. A detected positive whose predicted group is null
    gets the group ``NO_GROUP``, which enters the macro average with F1 0 like a hallucinated group
    (as a macro average over the union of true and predicted labels does).
    """
    rows = np.asarray(labels, dtype=bool) & np.asarray(detected, dtype=bool)
    named = pd.Series(np.asarray(predicted_groups, dtype=object)[rows], dtype=object)
    return group_f1(np.asarray(true_groups, dtype=object)[rows], named.where(named.notna(), NO_GROUP).to_numpy())


def group_recall_over_runs(labels: np.ndarray, detected: np.ndarray, groups: np.ndarray) -> pd.DataFrame:
    """``group_recall`` of several prediction runs (columns of ``detected``), recall averaged over runs.

    Positives are a census, so every run sees the same groups and sizes; only detection varies.
    """
    detected = np.asarray(detected, dtype=bool).reshape(len(labels), -1)
    per_run = [group_recall(labels, detected[:, j], groups) for j in range(detected.shape[1])]
    table = per_run[0][["group", "n_positives"]].copy()
    table["recall"] = np.mean([r["recall"].to_numpy() for r in per_run], axis=0)
    return table


def detected_group_f1_over_runs(labels: np.ndarray, detected: np.ndarray, true_groups: np.ndarray,
                                predicted_groups: np.ndarray, runs: tuple[str, ...]) -> tuple[pd.DataFrame, dict[str, float], float]:
    """``detected_group_f1`` per run: (per-group rows with a ``run`` column, macro-F1 by run, their mean).

    Runs may name different sets of groups, so macro-F1 is averaged over runs, not pooled; a run
    with no detected positive (macro-F1 undefined) is left out of the mean.
    """
    tables, macros = [], {}
    for j, run in enumerate(runs):
        table, macro = detected_group_f1(labels, detected[:, j], true_groups, predicted_groups[:, j])
        tables.append(table.assign(run=run))
        macros[run] = macro
    finite = [m for m in macros.values() if not np.isnan(m)]
    return pd.concat(tables, ignore_index=True), macros, float(np.mean(finite)) if finite else float("nan")


def detection_decomposition(
    labels: np.ndarray,
    model: np.ndarray,
    reference: np.ndarray,
    reference_score: np.ndarray,
    weights: np.ndarray | None = None,
) -> pd.DataFrame:
    """Rows split by who is right: both correct / reference only / model only / both wrong.

    Counts by label (weighted by ``weights`` if given, e.g. the design's ``w``) and the mean
    reference score (probability) of each cell, to show whether the model fails where the cheap
    scorer is also unsure or where the scorer is confident.
    """
    labels = np.asarray(labels, dtype=bool)
    w = np.ones(len(labels)) if weights is None else np.asarray(weights, dtype=np.float64)
    model_ok = np.asarray(model, dtype=bool) == labels
    ref_ok = np.asarray(reference, dtype=bool) == labels
    score = np.asarray(reference_score, dtype=np.float64)
    cells = {
        "both_correct": model_ok & ref_ok,
        "reference_only": ref_ok & ~model_ok,
        "model_only": model_ok & ~ref_ok,
        "both_wrong": ~model_ok & ~ref_ok,
    }
    rows = []
    for name, mask in cells.items():
        rows.append(
            {
                "cell": name,
                "n": float(w[mask].sum()),
                "n_positive": float(w[mask & labels].sum()),
                "n_negative": float(w[mask & ~labels].sum()),
                "mean_reference_score": float(np.average(score[mask], weights=w[mask])) if mask.any() else np.nan,
            }
        )
    return pd.DataFrame(rows)


def _no_response(responses: np.ndarray) -> np.ndarray:
    """Nothing returned: null, NaN, or a string that is empty after stripping whitespace."""
    series = pd.Series(responses, dtype=object)
    missing = series.isna().to_numpy()
    blank = series.map(lambda r: isinstance(r, str) and not r.strip()).to_numpy(dtype=bool)
    return missing | blank


def failure_categories(
    labels: np.ndarray,
    responses: np.ndarray,
    predictions: np.ndarray,
    true_groups: np.ndarray | None = None,
    predicted_groups: np.ndarray | None = None,
) -> np.ndarray:
    """One category per row (see ``FAILURE_CATEGORIES``).

    ``responses`` is the raw model output; ``predictions`` the parsed 0/1 verdict with None/NaN
    where parsing failed. "no_response" (nothing came back) is checked first and is distinct from
    "unparsable" (text came back but held no verdict). "wrong_group" needs both group arrays: a
    detected positive attributed to the wrong group (typology).
    """
    labels = np.asarray(labels, dtype=bool)
    preds = pd.Series(predictions, dtype=object)
    parsed = preds.notna().to_numpy()
    verdict = np.zeros(len(labels), dtype=bool)
    verdict[parsed] = preds[parsed].astype(bool).to_numpy()
    out = np.full(len(labels), "correct", dtype=object)
    out[parsed & verdict & ~labels] = "over_prediction"
    out[parsed & ~verdict & labels] = "under_prediction"
    if true_groups is not None and predicted_groups is not None:
        wrong = pd.Series(true_groups, dtype=object).ne(pd.Series(predicted_groups, dtype=object)).to_numpy()
        out[parsed & verdict & labels & wrong] = "wrong_group"
    out[~parsed] = "unparsable"
    out[_no_response(np.asarray(responses, dtype=object))] = "no_response"
    return out


def failure_taxonomy(categories_by_model: dict[str, np.ndarray]) -> pd.DataFrame:
    """Counts and shares of each failure category per model (rows: models)."""
    rows = []
    for model, categories in categories_by_model.items():
        counts = pd.Series(categories).value_counts()
        row: dict[str, Any] = {"model": model, "n": len(categories)}
        for c in FAILURE_CATEGORIES:
            row[c] = int(counts.get(c, 0))
            row[f"{c}_share"] = row[c] / len(categories) if len(categories) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)
