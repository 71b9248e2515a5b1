"""Confusion-count metrics and their derivatives in FP (fractions, vectorised over any shape).

Under a positive census TP and FN are exact, so every metric is a function of the one estimated
total FP; the delta method needs only d(metric)/d(FP). A zero denominator gives 0, as published.
"""

from __future__ import annotations

import numpy as np

from audit.coreset.choices import METRICS


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den == 0``."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, 0.0, num / np.where(den == 0, 1.0, den))


def metric_values(metric: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, prevalence: float) -> np.ndarray:
    """precision TP/(TP+FP), recall TP/(TP+FN), F1 2TP/(2TP+FP+FN), lift P/prevalence, or FP itself."""
    tp, fp, fn = (np.asarray(a, dtype=np.float64) for a in (tp, fp, fn))
    if metric == "precision":
        return safe_divide(tp, tp + fp)
    if metric == "recall":
        return safe_divide(tp, tp + fn) + 0.0 * fp  # broadcast to FP's shape
    if metric == "f1":
        return safe_divide(2 * tp, 2 * tp + fp + fn)
    if metric == "lift":
        return safe_divide(tp, tp + fp) / prevalence
    if metric == "fp":
        return fp + 0.0 * tp
    raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")


def fp_gradient(metric: str, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, prevalence: float) -> np.ndarray:
    """d(metric)/d(FP): -TP/(TP+FP)^2, 0, -2TP/(2TP+FN+FP)^2, the precision one / prevalence, or 1."""
    tp, fp, fn = (np.asarray(a, dtype=np.float64) for a in (tp, fp, fn))
    if metric == "precision":
        return -safe_divide(tp, (tp + fp) ** 2)
    if metric == "recall":
        return 0.0 * (tp + fp)
    if metric == "f1":
        return -safe_divide(2 * tp, (2 * tp + fn + fp) ** 2)
    if metric == "lift":
        return -safe_divide(tp, (tp + fp) ** 2) / prevalence
    if metric == "fp":
        return 1.0 + 0.0 * (tp + fp)
    raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")


def predict_all_floor(metric: str, n_positives: int, n_total: int) -> float:
    """The predict-all-positive reference: P = prevalence, R = 1, F1 = 2 n_pos/(N + n_pos), lift 1."""
    if not 0 < n_positives <= n_total:
        raise ValueError(f"need 0 < n_positives <= n_total, got {n_positives} and {n_total}")
    prevalence = n_positives / n_total
    return float(metric_values(metric, np.array(n_positives), np.array(n_total - n_positives), np.array(0), prevalence))
