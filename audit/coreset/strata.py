"""Stratum assignment for the HT-Coreset design (pure per-block functions).

Strata, in a fixed code order shared by every sampler so tables and manifests line up:

- code 0 ``positive``: every positive, kept as a census (weight 1), so recall is exact;
- code 1 ``hard_negative``: negatives the construction scorer finds hard, ``p >= cut`` with
  ``cut = c * tau`` (c = 0.5 by default); empty for samplers without a hard stratum;
- codes 2 .. k+1 ``easy_1`` .. ``easy_k``: the other negatives split by
  ``difficulty = 1 - 2 |p - 0.5|`` (1 at p = 0.5, 0 for a confident scorer, whatever tau is) at
  the pool's percentiles: ``easy_1: d < b_1``, ``easy_i: b_{i-1} <= d < b_i``, ``easy_k: d >= b_{k-1}``.

Bounds are numpy ``linear`` percentiles of the easy pool's difficulty at whole percents
``round(100 j / k)``; for terciles that is [33, 67], the published cut.
"""

from __future__ import annotations

import numpy as np

POSITIVE = 0
HARD = 1
FIRST_EASY = 2


def stratum_names(n_easy: int) -> tuple[str, ...]:
    """Names for codes 0 .. n_easy + 1."""
    return ("positive", "hard_negative", *(f"easy_{i + 1}" for i in range(n_easy)))


def easy_percentiles(n_easy: int) -> tuple[float, ...]:
    """Interior percentiles (0-100) splitting the easy pool into ``n_easy`` strata."""
    if not 1 <= n_easy <= 50:
        raise ValueError(f"n_easy_strata must be in [1, 50], got {n_easy}")
    return tuple(float(round(100 * j / n_easy)) for j in range(1, n_easy))


def ensemble_score(scores: np.ndarray) -> np.ndarray:
    """Soft average over scorer columns (members x seeds) of an (n,) or (n, m) probability array."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 1:
        return scores
    if scores.ndim != 2 or scores.shape[1] == 0:
        raise ValueError(f"scores must be (n,) or (n, m>=1), got shape {scores.shape}")
    return scores.mean(axis=1)


def difficulty(p: np.ndarray) -> np.ndarray:
    """``1 - 2|p - 0.5|``: 1 where the scorer is undecided, 0 where it is certain (unitless)."""
    return 1.0 - 2.0 * np.abs(np.asarray(p, dtype=np.float64) - 0.5)


def easy_mask(labels: np.ndarray, p: np.ndarray, hard_cut: float | None) -> np.ndarray:
    """Negatives outside the hard stratum (all negatives when ``hard_cut`` is None)."""
    negatives = ~np.asarray(labels, dtype=bool)
    if hard_cut is None:
        return negatives
    return negatives & (np.asarray(p) < hard_cut)


def easy_difficulty(labels: np.ndarray, p: np.ndarray, hard_cut: float | None) -> np.ndarray:
    """Difficulty of the easy pool in this block: the values whose percentiles give the bounds."""
    return difficulty(np.asarray(p)[easy_mask(labels, p, hard_cut)])


def assign_strata(labels: np.ndarray, p: np.ndarray, hard_cut: float | None, easy_bounds: np.ndarray) -> np.ndarray:
    """Stratum code per row (int8), see the module docstring for the code order."""
    labels = np.asarray(labels, dtype=bool)
    p = np.asarray(p, dtype=np.float64)
    bounds = np.asarray(easy_bounds, dtype=np.float64)
    if bounds.ndim != 1 or np.any(np.diff(bounds) < 0):
        raise ValueError(f"easy_bounds must be a non-decreasing 1-D array, got {easy_bounds!r}")
    codes = (FIRST_EASY + np.searchsorted(bounds, difficulty(p), side="right")).astype(np.int8)
    if hard_cut is not None:
        codes[p >= hard_cut] = HARD
    codes[labels] = POSITIVE
    return codes


def stratum_counts(codes: np.ndarray, n_easy: int) -> np.ndarray:
    """Per-block partial: rows per stratum code (int64, length n_easy + 2, summable)."""
    return np.bincount(np.asarray(codes, dtype=np.int64), minlength=FIRST_EASY + n_easy).astype(np.int64)
