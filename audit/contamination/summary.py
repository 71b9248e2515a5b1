"""Summaries of the cell table: per r across models, and per model across r (level vs credibility).

Per r: how many models beat their clean baseline, and the mean positive excess -- reported twice,
because the two answer different questions: ``mean_excess_all_models`` averages max(gain, 0) over
every model with that cell (how much the field as a whole gains), ``mean_excess_violators`` averages
the gain over the violating models only (how large a violation is when it occurs; NaN if none).
Summed improve/degrade and their difference give the question-level view.

Per model: the score *level* is the clean accuracy; its *credibility* is how often and how far the
noisy settings beat it: ``breadth`` (violating settings out of the ``settings`` present, of M),
``max_excess`` and ``mean_excess`` over the violating settings (NaN when there are none), and the
``mean_gain`` over all present settings. A model buyer compares models of similar level by these.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit.contamination.cells import scored
from audit.contamination.plan import CLEAN

PER_R_COLUMNS = ("r", "n_models", "n_violators", "share_violators", "mean_excess_all_models", "mean_excess_violators",
                 "mean_gain", "improve", "degrade", "net", "improve_exceeds_degrade")
PER_MODEL_COLUMNS = ("model", "clean_accuracy", "n_clean", "m", "settings", "breadth", "max_excess", "mean_excess",
                     "mean_gain", "significant_violations", "missing_settings")


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


def per_model(outcomes: pd.DataFrame, cells: pd.DataFrame, m: int, alpha: float) -> pd.DataFrame:
    """One row per model in the outcome table (models without any cell included, with NaNs)."""
    rows = scored(outcomes)
    clean = rows[rows["condition"] == CLEAN].groupby("model")["correct"].agg(["mean", "size"])
    out = []
    for model in sorted(outcomes["model"].unique()):
        sub = cells[cells["model"] == model]
        violating = sub[sub["violation"].astype(bool)]
        present = set(sub["r"].tolist())
        out.append({
            "model": model,
            "clean_accuracy": float(clean.loc[model, "mean"]) if model in clean.index else np.nan,
            "n_clean": int(clean.loc[model, "size"]) if model in clean.index else 0,
            "m": m, "settings": len(sub), "breadth": len(violating),
            "max_excess": float(violating["gain"].max()) if len(violating) else np.nan,
            "mean_excess": float(violating["gain"].mean()) if len(violating) else np.nan,
            "mean_gain": float(sub["gain"].mean()) if len(sub) else np.nan,
            "significant_violations": int((violating["holm_p"] < alpha).sum()),
            "missing_settings": [r for r in range(1, m + 1) if r not in present],
        })
    return pd.DataFrame(out, columns=list(PER_MODEL_COLUMNS))


def level_vs_credibility(models: pd.DataFrame) -> pd.DataFrame:
    """The buyer's table: level (clean accuracy) beside credibility (breadth of M, mean and max excess), by level."""
    view = models[["model", "clean_accuracy", "breadth", "settings", "m", "mean_excess", "max_excess", "significant_violations"]]
    return view.rename(columns={"clean_accuracy": "level"}).sort_values(["level", "model"], ascending=[False, True],
                                                                        na_position="last").reset_index(drop=True)
