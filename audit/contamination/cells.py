"""Per model and r: the noisy setting against the model's own clean baseline, question by question.

A cell pairs each question's clean outcome (``forward_full``) with its outcome under r noisy
routers, over the questions scored in both. With n such questions:
- ``baseline`` and ``accuracy``: the clean and noisy accuracy on those n questions;
- ``gain = accuracy - baseline``; ``violation``: gain > 0 (noisy routing beat the clean relay, which
  without contamination it should at most approach); ``excess = max(gain, 0)``;
- ``improve``: wrong -> correct questions, ``degrade``: correct -> wrong. Pairing makes
  ``gain = (improve - degrade) / n`` an identity; ``identity_residual`` is the difference as
  computed, so a report can show it holds;
- ``mcnemar_p``: exact McNemar on (improve, degrade); ``holm_p``: Holm across the models at that r.
Cells without any paired question are listed in the missing table with the reason.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit.contamination.answers import SCORED
from audit.contamination.plan import CLEAN, NOISY
from audit.contamination.significance import holm, mcnemar_exact

CELL_COLUMNS = ("model", "r", "n", "baseline", "accuracy", "gain", "violation", "excess", "improve", "degrade",
                "identity_residual", "mcnemar_p", "holm_p")


def scored(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The rows that enter the statistics (``answered`` and ``unparsable``), correct as int."""
    rows = outcomes[outcomes["status"].isin(SCORED)].copy()
    rows["correct"] = rows["correct"].astype("int64")
    return rows


def paired(outcomes: pd.DataFrame) -> pd.DataFrame:
    """(model, r, question_id, clean, noisy): each scored noisy outcome next to the same question's clean one."""
    rows = scored(outcomes)
    clean = rows[rows["condition"] == CLEAN][["model", "question_id", "correct"]].rename(columns={"correct": "clean"})
    noisy = rows[rows["condition"] == NOISY][["model", "r", "question_id", "correct"]].rename(columns={"correct": "noisy"})
    return noisy.merge(clean, on=["model", "question_id"], how="inner")[["model", "r", "question_id", "clean", "noisy"]]


def cell_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, r) with paired questions: the statistics of the module docstring."""
    if pairs.empty:
        return pd.DataFrame(columns=list(CELL_COLUMNS))
    frame = pairs.assign(improve=(pairs["noisy"] > pairs["clean"]).astype("int64"),
                         degrade=(pairs["noisy"] < pairs["clean"]).astype("int64"))
    cells = frame.groupby(["model", "r"], sort=True).agg(
        n=("question_id", "size"), clean_correct=("clean", "sum"), noisy_correct=("noisy", "sum"),
        improve=("improve", "sum"), degrade=("degrade", "sum")).reset_index()
    cells["baseline"] = cells["clean_correct"] / cells["n"]
    cells["accuracy"] = cells["noisy_correct"] / cells["n"]
    cells["gain"] = cells["accuracy"] - cells["baseline"]
    cells["violation"] = cells["noisy_correct"] > cells["clean_correct"]  # gain > 0, decided on counts
    cells["excess"] = cells["gain"].clip(lower=0.0)
    cells["identity_residual"] = cells["gain"] - (cells["improve"] - cells["degrade"]) / cells["n"]
    cells["mcnemar_p"] = [mcnemar_exact(int(b), int(c)) for b, c in zip(cells["improve"], cells["degrade"])]
    cells["holm_p"] = np.nan
    for index in cells.groupby("r").groups.values():
        cells.loc[index, "holm_p"] = holm(cells.loc[index, "mcnemar_p"].to_numpy())
    return cells[list(CELL_COLUMNS)]


def missing_cells(outcomes: pd.DataFrame, cells: pd.DataFrame, m: int) -> pd.DataFrame:
    """(model, r, reason) for every expected cell r = 1..m of every model that has no paired question."""
    rows = scored(outcomes)
    has_baseline = set(rows.loc[rows["condition"] == CLEAN, "model"])
    noisy = outcomes[outcomes["condition"] == NOISY]
    any_rows = set(zip(noisy["model"], noisy["r"]))
    scored_rows = set(zip(rows.loc[rows["condition"] == NOISY, "model"], rows.loc[rows["condition"] == NOISY, "r"]))
    present = set(zip(cells["model"], cells["r"]))
    out = []
    for model in sorted(outcomes["model"].unique()):
        for r in range(1, m + 1):
            if (model, r) in present:
                continue
            if model not in has_baseline:
                reason = "no scored clean (forward_full) row for this model"
            elif (model, r) not in any_rows:
                reason = "no rows"
            elif (model, r) not in scored_rows:
                reason = "no scored rows (every row failed, timed out or had an empty router output)"
            else:
                reason = "no question scored in both the clean and this noisy setting"
            out.append({"model": model, "r": r, "reason": reason})
    return pd.DataFrame(out, columns=["model", "r", "reason"])
