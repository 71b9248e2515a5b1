"""Summaries of the cell table: per r across models, and per model across r (level vs credibility).

Two kinds of count, never mixed: *point estimates* (``n_violators``, ``breadth``: cells whose gain is
above 0, no test -- at small n most of them are noise) and *tested* counts (``n_significant``,
``significant_above_baseline``: cells above baseline with a Holm-adjusted McNemar p below alpha, the
family being every model x r cell, so these counts and their sums are family-wise controlled).

Per r: how many models beat their clean baseline, and the mean positive excess -- reported twice,
because the two answer different questions: ``mean_excess_all_models`` averages max(gain, 0) over
every model with that cell (how much the field as a whole gains), ``mean_excess_violators`` averages
the gain over the violating models only (how large a violation is when it occurs; NaN if none).
Summed improve/degrade and their difference give the question-level view.

Per model: the score *level* is the clean accuracy on the model's shared questions (the baseline of
every one of its cells, ``cells``); ``clean_accuracy_all`` is the clean accuracy on every question
it answered clean (``n_clean``), kept so the questions the noisy settings lost are visible. Its
*credibility* is how often and how far the noisy settings beat it: ``breadth`` (violating settings
out of the ``settings`` present, of M), ``max_excess`` and ``mean_excess`` over the violating
settings (NaN when there are none), and the ``mean_gain`` over all present settings. A model buyer
compares models of similar level by these.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit.contamination.cells import all_pairs, scored
from audit.contamination.plan import CLEAN

PER_R_COLUMNS = ("r", "n_models", "n_violators", "share_violators", "n_significant", "mean_excess_all_models",
                 "mean_excess_violators", "mean_gain", "improve", "degrade", "net", "improve_exceeds_degrade")
PER_MODEL_COLUMNS = ("model", "clean_accuracy", "n_shared", "clean_accuracy_all", "n_clean", "m", "settings", "breadth",
                     "max_excess", "mean_excess", "mean_gain", "significant_above_baseline", "missing_settings")


def per_r(cells: pd.DataFrame, m: int) -> pd.DataFrame:
    """One row per r = 1..m (a row with n_models = 0 when no model has that cell)."""
    out = []
    for r in range(1, m + 1):
        sub = cells[cells["r"] == r]
        violators = sub[sub["violation"].astype(bool)]
        improve, degrade = int(sub["improve"].sum()), int(sub["degrade"].sum())
        out.append({
            "r": r, "n_models": len(sub), "n_violators": len(violators),
            "share_violators": len(violators) / len(sub) if len(sub) else np.nan,
            "n_significant": int(sub["significant"].astype(bool).sum()),
            "mean_excess_all_models": float(sub["excess"].mean()) if len(sub) else np.nan,
            "mean_excess_violators": float(violators["gain"].mean()) if len(violators) else np.nan,
            "mean_gain": float(sub["gain"].mean()) if len(sub) else np.nan,
            "improve": improve, "degrade": degrade, "net": improve - degrade, "improve_exceeds_degrade": improve > degrade,
        })
    return pd.DataFrame(out, columns=list(PER_R_COLUMNS))


def reversal(table: pd.DataFrame) -> dict[str, int | None]:
    """Where wrong->correct overtakes correct->wrong: the first r, and the r from which it holds to M."""
    exceeds = table["improve_exceeds_degrade"].to_numpy(bool)
    rs = table["r"].to_numpy()
    first = int(rs[exceeds.argmax()]) if exceeds.any() else None
    sustained = None
    for i in range(len(rs) - 1, -1, -1):
        if not exceeds[i]:
            break
        sustained = int(rs[i])
    return {"first_r": first, "sustained_from_r": sustained}


def per_model(outcomes: pd.DataFrame, pairs: pd.DataFrame, cells: pd.DataFrame, m: int) -> pd.DataFrame:
    """One row per model in the outcome table (models without any cell included, with NaNs).

    ``pairs`` are the shared-question pairs (``cells.paired``). A model with clean rows but no
    noisy pair at all keeps every clean question as its shared questions (no setting removed any);
    one whose settings share no question has none (level NaN).
    """
    rows = scored(outcomes)
    clean_all = rows[rows["condition"] == CLEAN].groupby("model")["correct"].agg(["mean", "size"])
    shared = pairs.drop_duplicates(["model", "question_id"]).groupby("model")["clean"].agg(["mean", "size"])
    unpaired = clean_all.loc[clean_all.index.difference(all_pairs(outcomes)["model"].unique())]
    level = pd.concat([shared, unpaired])
    out = []
    for model in sorted(outcomes["model"].unique()):
        sub = cells[cells["model"] == model]
        violating = sub[sub["violation"].astype(bool)]
        present = set(sub["r"].tolist())
        out.append({
            "model": model,
            "clean_accuracy": float(level.loc[model, "mean"]) if model in level.index else np.nan,
            "n_shared": int(level.loc[model, "size"]) if model in level.index else 0,
            "clean_accuracy_all": float(clean_all.loc[model, "mean"]) if model in clean_all.index else np.nan,
            "n_clean": int(clean_all.loc[model, "size"]) if model in clean_all.index else 0,
            "m": m, "settings": len(sub), "breadth": len(violating),
            "max_excess": float(violating["gain"].max()) if len(violating) else np.nan,
            "mean_excess": float(violating["gain"].mean()) if len(violating) else np.nan,
            "mean_gain": float(sub["gain"].mean()) if len(sub) else np.nan,
            "significant_above_baseline": int(sub["significant"].astype(bool).sum()),
            "missing_settings": [r for r in range(1, m + 1) if r not in present],
        })
    return pd.DataFrame(out, columns=list(PER_MODEL_COLUMNS))


def level_vs_credibility(models: pd.DataFrame) -> pd.DataFrame:
    """The buyer's table: level (clean accuracy on the shared questions) beside credibility (breadth of M,
    mean and max excess: point estimates; settings significantly above baseline: tested), by level."""
    view = models[["model", "clean_accuracy", "n_shared", "breadth", "settings", "m", "mean_excess", "max_excess",
                   "significant_above_baseline"]]
    return view.rename(columns={"clean_accuracy": "level"}).sort_values(["level", "model"], ascending=[False, True],
                                                                        na_position="last").reset_index(drop=True)
