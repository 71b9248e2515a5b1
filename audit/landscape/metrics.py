"""From option log-probabilities to landscape points, accuracy and cross-model agreement.

For one item with K options, p = softmax over the K label log-probabilities (the labels' own
mass is renormalised away; the backends report it separately as ``label_mass``). Ptop1 = max p.
Hnorm is the entropy of the residual distribution q_k = p_k / (1 - Ptop1) over the K - 1 options
that are not the top one, divided by log(K - 1): 1 when the model is undecided among the rest,
0 when the rest is concentrated on one option. Hnorm is 0 by definition when K = 2 (one residual
option) or when the residual mass is 0. q is computed in log space, so a residual of 1e-30 still
has its true shape instead of underflowing.

The top option is the first maximum (lowest index) on ties; it is also the prediction.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

POINT_COLUMNS = ("ptop1", "hnorm", "pred", "k", "error")


def pad_logprobs(logprobs: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """(n, Kmax) array with -inf past each item's K, and the K of each item."""
    k = np.array([len(row) for row in logprobs], dtype=np.int64)
    out = np.full((len(logprobs), int(k.max()) if len(k) else 0), -np.inf)
    for i, row in enumerate(logprobs):
        out[i, : k[i]] = np.asarray(row, dtype=np.float64)
    return out, k


def _problems(lp: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Per item: why its log-probs cannot be read (None when fine)."""
    valid = np.arange(lp.shape[1])[None, :] < k[:, None]
    out = np.full(len(lp), None, dtype=object)
    out[(k < 2)] = "fewer than two option log-probs"
    out[np.isnan(lp).any(axis=1)] = "NaN log-probs"
    out[(np.isposinf(lp)).any(axis=1)] = "log-prob +inf"
    out[(np.where(valid, lp, -np.inf) > 1e-6).any(axis=1)] = "log-prob above 0"
    out[np.all(np.isneginf(np.where(valid, lp, -np.inf)), axis=1) & (k >= 2)] = "every option has log-prob -inf"
    return out


def landscape_points(logprobs: Sequence[Sequence[float]]) -> pd.DataFrame:
    """One row per item: ``ptop1, hnorm, pred, k, error``; unreadable items have NaN and a reason.

    ``logprobs`` are per-option log-probabilities or log-likelihoods in option order; only their
    differences matter (softmax), so continuation log-likelihoods from lm-eval work too.
    """
    n = len(logprobs)
    if n == 0:
        return pd.DataFrame({c: pd.Series(dtype="float64" if c in ("ptop1", "hnorm") else "object") for c in POINT_COLUMNS})
    lp, k = pad_logprobs(logprobs)
    error = _problems(lp, k)
    ok = np.array([e is None for e in error])
    ptop1 = np.full(n, np.nan)
    hnorm = np.full(n, np.nan)
    pred = np.full(n, -1, dtype=np.int64)
    if ok.any():
        x = lp[ok]
        top = np.argmax(x, axis=1)
        rows = np.arange(len(x))
        log_z = np.logaddexp.reduce(x, axis=1)
        ptop1[ok] = np.exp(x[rows, top] - log_z)
        rest = x.copy()
        rest[rows, top] = -np.inf
        log_r = np.logaddexp.reduce(rest, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            log_q = rest - log_r[:, None]
            q = np.exp(log_q)
            ent = -np.where(q > 0, q * log_q, 0.0).sum(axis=1)
            kk = k[ok]
            h = np.where((kk > 2) & np.isfinite(log_r), ent / np.log(np.maximum(kk - 1, 2)), 0.0)
        hnorm[ok] = np.clip(h, 0.0, 1.0)
        pred[ok] = top
    return pd.DataFrame({"ptop1": ptop1, "hnorm": hnorm, "pred": pred, "k": k, "error": pd.Series(error, dtype=object)})


def option_probabilities(logprobs: Sequence[float]) -> np.ndarray:
    """Softmax over one item's option log-probs (for reports and hand checks)."""
    x = np.asarray(logprobs, dtype=np.float64)
    return np.exp(x - np.logaddexp.reduce(x))


def accuracy(pred: Sequence[int], gold: Sequence[int]) -> float:
    """Share of items whose prediction is the gold index (NaN for no items)."""
    p, g = np.asarray(pred), np.asarray(gold)
    return float(np.mean(p == g)) if len(p) else float("nan")


def model_averaged_points(points: pd.DataFrame, item: str = "source_id", model: str = "model") -> pd.DataFrame:
    """Per item, the mean of the models' (Ptop1, Hnorm) over models that read it: the point the
    model-averaged scatter shows; ``n_models`` says how many contributed."""
    ok = points[points["error"].isna()]
    out = ok.groupby(item, sort=True).agg(ptop1=("ptop1", "mean"), hnorm=("hnorm", "mean"), n_models=(model, "nunique"))
    return out.reset_index()


def hnorm_correlations(points: pd.DataFrame, item: str = "source_id", model: str = "model") -> pd.DataFrame:
    """Pearson and Spearman of item-level Hnorm for every pair of models, over items both read.

    A pair with fewer than three shared items, or a constant Hnorm, has NaN correlations.
    """
    from scipy import stats  # lazily: the batch stage (``landscape_points``) runs in workers that never correlate

    ok = points[points["error"].isna()]
    wide = ok.pivot_table(index=item, columns=model, values="hnorm", aggfunc="first")
    rows = []
    for a, b in combinations(sorted(wide.columns), 2):
        pair = wide[[a, b]].dropna()
        x, y = pair[a].to_numpy(), pair[b].to_numpy()
        defined = len(pair) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0
        rows.append({
            "model_a": a, "model_b": b, "n_items": len(pair),
            "pearson": float(stats.pearsonr(x, y).statistic) if defined else float("nan"),
            "spearman": float(stats.spearmanr(x, y).statistic) if defined else float("nan"),
        })
    return pd.DataFrame(rows, columns=["model_a", "model_b", "n_items", "pearson", "spearman"])
