"""Per model and r: the noisy setting against the model's own clean baseline, on one set of questions.

Which questions: a model's *shared questions* are those it answered (``answered`` or ``unparsable``)
in the clean condition (``forward_full``) and in every noisy setting it has any scored pair in.
Every figure of the model -- its level, each cell's baseline and noisy accuracy, its transitions --
is computed on them, so its baseline is one number for all r and a gain at r = 3 and at r = 5
compare the same questions. A question a setting lost (failed, timed out, empty router) leaves
every cell of that model, and is counted (``n_clean - n`` in the per-model table). With nothing
lost, the shared questions are every question.

A cell (model, r) over the model's n shared questions:
- ``baseline`` and ``accuracy``: clean and noisy accuracy on those n questions;
- ``gain = accuracy - baseline``; ``violation``: gain > 0, a point estimate (no test): noisy routing
  beat the clean relay on these questions; ``excess = max(gain, 0)``;
- ``improve``: wrong -> correct questions, ``degrade``: correct -> wrong. Pairing makes
  ``gain = (improve - degrade) / n`` an identity; ``identity_residual`` is the difference as
  computed, so a report can show it holds;
- ``mcnemar_p``: exact two-sided McNemar on (improve, degrade); ``holm_p``: Holm-adjusted over one
  family, *every* model x r cell of the analysis (``significance.FAMILY``);
- ``significant``: violation and ``holm_p < alpha``: significantly above baseline. Because the
  family is every cell, any count of significant cells (per model, per r, the total) has
  family-wise error rate at most alpha.
Cells without any shared question are listed in the missing table with the reason.
"""
from __future__ import annotations

import pandas as pd

from audit.contamination.answers import SCORED
from audit.contamination.plan import CLEAN, NOISY
from audit.contamination.significance import DEFAULT_ALPHA, holm, mcnemar_exact

CELL_COLUMNS = ("model", "r", "n", "baseline", "accuracy", "gain", "violation", "excess", "improve", "degrade",
                "identity_residual", "mcnemar_p", "holm_p", "significant")
PAIR_COLUMNS = ["model", "r", "question_id", "clean", "noisy"]


def scored(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The rows that enter the statistics (``answered`` and ``unparsable``), correct as int."""
    rows = outcomes[outcomes["status"].isin(SCORED)].copy()
    rows["correct"] = rows["correct"].astype("int64")
    return rows


def all_pairs(outcomes: pd.DataFrame) -> pd.DataFrame:
    """(model, r, question_id, clean, noisy): every scored noisy outcome next to the same question's scored clean one."""
    rows = scored(outcomes)
    clean = rows[rows["condition"] == CLEAN][["model", "question_id", "correct"]].rename(columns={"correct": "clean"})
    noisy = rows[rows["condition"] == NOISY][["model", "r", "question_id", "correct"]].rename(columns={"correct": "noisy"})
    return noisy.merge(clean, on=["model", "question_id"], how="inner")[PAIR_COLUMNS]


def paired(outcomes: pd.DataFrame) -> pd.DataFrame:
    """``all_pairs`` kept to each model's shared questions (the module docstring): the pairs every statistic uses."""
    pairs = all_pairs(outcomes)
    if pairs.empty:
        return pairs
    settings = pairs.groupby("model")["r"].transform("nunique")
    per_question = pairs.groupby(["model", "question_id"])["r"].transform("nunique")
    return pairs[per_question == settings].reset_index(drop=True)


def cell_table(pairs: pd.DataFrame, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """One row per (model, r) with shared questions: the statistics of the module docstring."""
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
    cells["holm_p"] = holm(cells["mcnemar_p"].to_numpy())  # one family: every cell of the analysis
    cells["significant"] = cells["violation"] & (cells["holm_p"] < alpha)
    return cells[list(CELL_COLUMNS)]


def missing_cells(outcomes: pd.DataFrame, cells: pd.DataFrame, m: int) -> pd.DataFrame:
    """(model, r, reason) for every expected cell r = 1..m of every model that has no shared question."""
    rows = scored(outcomes)
    has_baseline = set(rows.loc[rows["condition"] == CLEAN, "model"])
    noisy = outcomes[outcomes["condition"] == NOISY]
    any_rows = set(zip(noisy["model"], noisy["r"]))
    scored_rows = set(zip(rows.loc[rows["condition"] == NOISY, "model"], rows.loc[rows["condition"] == NOISY, "r"]))
    pairs = all_pairs(outcomes)
    with_pairs = set(zip(pairs["model"], pairs["r"]))
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
            elif (model, r) not in with_pairs:
                reason = "no question scored in both the clean and this noisy setting"
            else:
                reason = "no question this model answered in the clean and every one of its noisy settings"
            out.append({"model": model, "r": r, "reason": reason})
    return pd.DataFrame(out, columns=["model", "r", "reason"])

