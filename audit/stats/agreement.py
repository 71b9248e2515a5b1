"""Agreement between raters or judges: Fleiss' kappa and pairwise Cohen's kappa (unweighted).

Used to check whether reviewers, LLM judges or humans grading traces and failure categories agree
beyond chance before their labels are trusted. Both statistics are ``(p_o - p_e) / (1 - p_e)``:
observed agreement against agreement expected from the category marginals (pooled over raters for
Fleiss, per rater for Cohen). When ``p_e == 1`` (every rating the same category) kappa is undefined
and returned as NaN.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd


def rating_counts(ratings: pd.DataFrame) -> tuple[np.ndarray, list[object]]:
    """Subjects x categories count table from a subjects x raters frame of category labels."""
    if ratings.isna().any().any():
        raise ValueError("ratings have missing values; Fleiss' kappa needs every rater on every subject")
    categories = sorted(pd.unique(ratings.to_numpy().ravel()).tolist(), key=str)
    table = np.stack([(ratings.to_numpy() == c).sum(axis=1) for c in categories], axis=1)
    return table.astype(np.int64), categories


def fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss' kappa of a subjects x categories count table with the same raters per subject."""
    table = np.asarray(table, dtype=np.float64)
    per_subject = table.sum(axis=1)
    if table.ndim != 2 or len(table) == 0 or np.any(per_subject != per_subject[0]) or per_subject[0] < 2:
        raise ValueError(
            "Fleiss' kappa needs a non-empty count table with the same number (>= 2) of raters per subject"
        )
    n = per_subject[0]
    p_category = table.sum(axis=0) / table.sum()
    p_subject = ((table**2).sum(axis=1) - n) / (n * (n - 1))
    p_o, p_e = p_subject.mean(), float((p_category**2).sum())
    return float((p_o - p_e) / (1 - p_e)) if p_e < 1 else float("nan")


def cohen_kappa(labels_a: Sequence[Hashable], labels_b: Sequence[Hashable]) -> float:
    """Unweighted Cohen's kappa ``(p_o - p_e) / (1 - p_e)`` of two raters over the same subjects.

    ``p_e`` uses each rater's own label frequencies. When both raters use one and the same label
    throughout, ``p_e = 1`` and kappa is undefined: NaN is returned (as scikit-learn does). Used
    for reviewer sheets (docs audit), trace judges and failure categories alike.
    """
    a = np.asarray(list(labels_a), dtype=object)
    b = np.asarray(list(labels_b), dtype=object)
    if len(a) != len(b) or len(a) == 0:
        raise ValueError(f"Cohen's kappa needs two equal-length, non-empty rating arrays, got {len(a)} and {len(b)}")
    if pd.isna(a).any() or pd.isna(b).any():
        raise ValueError("Cohen's kappa: ratings have missing values")
    categories = set(a.tolist()) | set(b.tolist())
    p_o = float(np.mean(a == b))
    p_e = float(sum(np.mean(a == c) * np.mean(b == c) for c in categories))
    return (p_o - p_e) / (1 - p_e) if p_e < 1 else float("nan")


def pairwise_cohen_kappa(ratings: pd.DataFrame) -> pd.DataFrame:
    """Cohen's kappa for every pair of rater columns (rows: rater_a, rater_b, kappa, n)."""
    rows = [
        {
            "rater_a": r1,
            "rater_b": r2,
            "kappa": cohen_kappa(ratings[r1].to_numpy(), ratings[r2].to_numpy()),
            "n": len(ratings),
        }
        for r1, r2 in combinations(ratings.columns, 2)
    ]
    return pd.DataFrame(rows, columns=["rater_a", "rater_b", "kappa", "n"])
