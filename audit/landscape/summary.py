"""Per-item results and the benchmark x perturbation x model table of the landscape report.

``result_rows`` joins scored prompt rows of one model into result rows (point, prediction);
``summarize`` turns result rows (any number of models, perturbations, benchmarks) into the
table: every registered statistic (``audit.landscape.statistics``: accuracy with its Wilson interval, mean
Ptop1/Hnorm, MPD with its interval) and the accuracy's relative change against the unperturbed run.
Under ``circular`` an item is correct only when all its K rotations are (``circular_correct``).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from audit.landscape.choices import MPD_EXACT_LIMIT, MPD_PAIRS
from audit.landscape.metrics import landscape_points
from audit.landscape.statistics import Group, Statistic, compute_all
from audit.stats.choices import DEFAULT_SEED

GROUP = ["benchmark", "perturbation", "model"]
RESULT_COLUMNS = ["benchmark", "perturbation", "model", "id", "source_id", "variant", "k", "gold",
                  "pred", "correct", "ptop1", "hnorm", "error"]


def result_rows(scored: pd.DataFrame, model: str) -> pd.DataFrame:
    """Result rows of one model from scored prompt rows (``prompt_rows`` columns plus the backend's
    ``option_logprobs`` and ``error``): a backend error stays on its item, and an item whose
    log-probs cannot be read (NaN, wrong count) gets its reason instead of a point."""
    # nulls arrive as None or NaN depending on how the frame was made (Arrow strings become NaN)
    backend_error = [None if e is None or (isinstance(e, float) and np.isnan(e)) else e
                     for e in (scored["error"] if "error" in scored else [None] * len(scored))]
    rows = []
    for k, lp, err in zip(scored["k"], scored["option_logprobs"], backend_error):
        ok = err is None and lp is not None and len(lp) == k
        rows.append(list(lp) if ok else [float("nan")] * int(k))
    points = landscape_points(rows)
    error = []
    for k, lp, err, point_error in zip(scored["k"], scored["option_logprobs"], backend_error, points["error"]):
        if err is None and lp is not None and len(lp) != k:
            err = f"{len(lp)} log-probs for {k} options"
        error.append(err if err is not None else point_error)
    frame = pd.DataFrame({c: scored[c].to_numpy() for c in ("benchmark", "perturbation", "id", "source_id", "variant", "k", "gold")})
    frame["model"] = model
    frame["pred"] = points["pred"].to_numpy()
    frame["ptop1"] = points["ptop1"].to_numpy()
    frame["hnorm"] = points["hnorm"].to_numpy()
    frame["error"] = pd.Series(error, dtype=object)
    frame["correct"] = np.where(frame["error"].isna(), frame["pred"] == frame["gold"], np.nan)
    return frame[RESULT_COLUMNS]


def circular_correct(results: pd.DataFrame) -> pd.DataFrame:
    """Per source item under ``circular``: correct when every one of its K rotations is correct.

    An item with an unscored rotation is left out (``complete`` False) rather than counted wrong.
    """
    rows = results[results["perturbation"] == "circular"]
    grouped = rows.groupby(["benchmark", "model", "source_id"], sort=True)
    out = grouped.agg(k=("k", "first"), rotations=("variant", "nunique"), scored=("error", lambda e: int(e.isna().sum())),
                      all_correct=("correct", lambda c: bool((c == 1).all())))
    out["complete"] = (out["rotations"] == out["k"]) & (out["scored"] == out["k"])
    return out.reset_index()


def summarize(results: pd.DataFrame, exact_limit: int = MPD_EXACT_LIMIT, pairs: int = MPD_PAIRS,
              seed: int = DEFAULT_SEED, statistics: Mapping[str, Statistic] | None = None) -> pd.DataFrame:
    """One row per benchmark x perturbation x model: its counts, then every registered statistic
    (``audit.landscape.statistics``; ``statistics``: the driver's registry, passed to a Ray worker);
    ``relative_change`` is the accuracy's against ``none``."""
    circ = circular_correct(results)
    rows = []
    for key, group in results.groupby(GROUP, sort=True):
        benchmark, perturbation, model = key
        g = Group(benchmark, perturbation, model, rows=group, scored=group[group["error"].isna()], circular=circ,
                  exact_limit=exact_limit, pairs=pairs, seed=seed)
        rows.append({**dict(zip(GROUP, key)), "n_items": group["source_id"].nunique(), "n_rows": len(group),
                     "n_errors": int(group["error"].notna().sum()), **compute_all(g, statistics)})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    base = table[table["perturbation"] == "none"].set_index(["benchmark", "model"])["accuracy"]
    ref = [base.get((b, m), np.nan) for b, m in zip(table["benchmark"], table["model"])]
    table["relative_change"] = (table["accuracy"] - ref) / np.asarray(ref, dtype=float)
    return table
