"""Horvitz-Thompson estimates of fixed predictions on a drawn design, with linearised SEs.

Positives are a census, so TP and FN (hence recall) are exact and only FP is estimated:
``FP = sum_h (N_h / n_h) x_h`` with ``x_h`` the positive predictions on drawn negatives of stratum h.
Precision, F1 and lift are ratio estimators (consistent, not unbiased).

Sampling SE: the covariance of the k runs' HT totals is ``sum_h N_h^2 (1 - n_h/N_h) S_h / n_h``
with ``S_h`` the within-stratum sample covariance (ddof=1) of the prediction indicators; census
strata contribute 0. The SE of the run-mean metric is ``sqrt(g' C g)`` with ``g_j = d metric/d FP_j / k``,
which keeps the covariance the runs share because they were scored on the same rows. It is computed
as the stratified variance of the per-row scalar ``z_i = sum_j g_j x_ij`` (identical algebra), so a
contrast of identical predictors has ``z = 0`` and SE exactly 0. The run-to-run SD (ddof=1) is
reported separately and never mixed into the sampling SE.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.coreset import strata as st
from audit.coreset.design import DESIGN_COLUMNS, DesignManifest
from audit.coreset.intervals import conservative_bounds, contrast_envelope
from audit.coreset.metrics import (
    METRICS,
    fp_gradient,
    metric_values,
    predict_all_floor,
)
from audit.coreset.validate import binary_predictions, require_columns


@dataclass(frozen=True, eq=False)
class StrataSample:
    """Prediction runs on a drawn design, reduced to what the HT estimators need (counts are rows).

    tp, fn: (k,) exact per-run counts over the positive census.
    population, sample: (H,) N_h and n_h of the negative strata.
    strata: (m,) negative-stratum index of each drawn negative row.
    negatives: (m, k) 0/1 predictions on the drawn negative rows.
    """

    tp: np.ndarray
    fn: np.ndarray
    population: np.ndarray
    sample: np.ndarray
    strata: np.ndarray
    negatives: np.ndarray

    def __post_init__(self) -> None:
        k = len(self.tp)
        if self.negatives.ndim != 2 or self.negatives.shape[1] != k or len(self.fn) != k or k == 0:
            raise ValueError(f"negatives must be (m, {k}) with tp and fn of length k >= 1")
        if len(self.strata) != len(self.negatives):
            raise ValueError(f"strata has {len(self.strata)} rows but negatives has {len(self.negatives)}")
        drawn = np.bincount(self.strata, minlength=len(self.population))
        if len(drawn) != len(self.population) or not np.array_equal(drawn, self.sample):
            raise ValueError(f"drawn rows per stratum {drawn.tolist()} differ from sample sizes {self.sample.tolist()}")
        if np.any(self.sample > self.population):
            raise ValueError("a stratum's sample exceeds its population")

    @property
    def runs(self) -> int:
        return len(self.tp)

    @property
    def n_positives(self) -> int:
        return int(self.tp[0] + self.fn[0])

    @property
    def n_total(self) -> int:
        return self.n_positives + int(self.population.sum())

    @property
    def prevalence(self) -> float:
        return self.n_positives / self.n_total


def strata_sample(
    design: pd.DataFrame,
    manifest: DesignManifest,
    predictions: np.ndarray,
    source: str = "predictions",
    run_columns: tuple[str, ...] | None = None,
) -> StrataSample:
    """Build a ``StrataSample`` from a design table and predictions aligned to its rows.

    ``predictions`` is (n,) or (n, k): one column per run (seed) of one model, already aligned with
    ``validate.align_predictions``; ``run_columns`` names them in error messages. The design's
    weights are checked against the manifest.
    """
    require_columns(design, DESIGN_COLUMNS, "design")
    preds = np.asarray(predictions)
    preds = preds[:, None] if preds.ndim == 1 else preds
    if len(preds) != len(design):
        raise ValueError(f"{source}: {len(preds)} prediction rows for {len(design)} design rows")
    run_names = run_columns or tuple(f"run {j}" for j in range(preds.shape[1]))
    if len(run_names) != preds.shape[1]:
        raise ValueError(f"{source}: {len(run_names)} run column names for {preds.shape[1]} prediction columns")
    preds = np.column_stack([binary_predictions(preds[:, j], run_names[j], source) for j in range(preds.shape[1])])
    names = list(manifest.strata)
    codes = pd.Categorical(design["stratum"], categories=names).codes.astype(np.int64)
    if np.any(codes < 0):
        raise ValueError(f"design: column 'stratum' has values outside the manifest strata {names}")
    population = np.asarray(manifest.population, dtype=np.int64)
    sample = np.asarray(manifest.sample, dtype=np.int64)
    if population[st.POSITIVE] != sample[st.POSITIVE]:
        raise ValueError("design: the positive stratum is not a census; HT recall would not be exact")
    positive = codes == st.POSITIVE
    if not np.array_equal(positive, design["label"].to_numpy(bool)):
        raise ValueError("design: column 'label' disagrees with stratum 'positive'")
    expected_w = population[codes] / np.maximum(sample[codes], 1)
    if not np.allclose(design["w"].to_numpy(np.float64), expected_w, rtol=1e-12, atol=0):
        raise ValueError("design: column 'w' differs from N_h / n_h of the manifest")
    tp = preds[positive].sum(axis=0).astype(np.int64)
    return StrataSample(
        tp=tp,
        fn=int(positive.sum()) - tp,
        population=population[1:],
        sample=sample[1:],
        strata=codes[~positive] - 1,
        negatives=preds[~positive].astype(np.float64),
    )


def stratum_sums(values: np.ndarray, strata: np.ndarray, n_strata: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-stratum sums (H, k) and cross-products (H, k, k) of an (m, k) value matrix."""
    values = np.asarray(values, dtype=np.float64)
    sums = np.zeros((n_strata, values.shape[1]))
    cross = np.zeros((n_strata, values.shape[1], values.shape[1]))
    for h in range(n_strata):
        rows = values[strata == h]
        sums[h] = rows.sum(axis=0)
        cross[h] = rows.T @ rows
    return sums, cross


def covariance_from_sums(sums: np.ndarray, cross: np.ndarray, population: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """``sum_h N_h^2 (1 - n_h/N_h) S_h / n_h`` from sums (..., H, k) and cross-products (..., H, k, k).

    Census strata (n_h = N_h) and empty strata give 0; a sampled stratum with one row has no
    within-stratum variance estimate and makes the result NaN.
    """
    N = np.asarray(population, dtype=np.float64)
    n = np.asarray(sample, dtype=np.float64)
    sampled = (n < N) & (n > 0)
    n_safe = np.where(n > 0, n, 1.0)
    mean = sums / n_safe[:, None]
    centred = cross - n_safe[:, None, None] * mean[..., :, None] * mean[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = centred / np.where(n > 1, n - 1, np.nan)[:, None, None]
    factor = np.where(sampled, N**2 * (1 - n / np.where(N > 0, N, 1.0)) / n_safe, 0.0)
    s = np.where(sampled[:, None, None], s, 0.0)
    return (factor[:, None, None] * s).sum(axis=-3)


def stratified_covariance(
    values: np.ndarray, strata: np.ndarray, population: np.ndarray, sample: np.ndarray
) -> np.ndarray:
    """Estimated covariance (k, k) of the HT totals of the columns of ``values`` (m, k)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[:, None] if values.ndim == 1 else values
    sums, cross = stratum_sums(values, np.asarray(strata), len(population))
    return covariance_from_sums(sums, cross, population, sample)


def ht_false_positives(s: StrataSample) -> np.ndarray:
    """HT FP per run: ``sum_h (N_h / n_h) x_h`` (k,)."""
    sums, _ = stratum_sums(s.negatives, s.strata, len(s.population))
    weight = s.population / np.maximum(s.sample, 1)
    return (weight[:, None] * sums).sum(axis=0)


def ht_confusion(s: StrataSample) -> pd.DataFrame:
    """HT-weighted TP, FP, FN, TN per run (TP and FN exact)."""
    fp = ht_false_positives(s)
    return pd.DataFrame({"run": np.arange(s.runs), "tp": s.tp, "fp": fp, "fn": s.fn, "tn": s.population.sum() - fp})


def _linearised_scalar(s: StrataSample, metric: str, fp: np.ndarray) -> np.ndarray:
    """Per-row ``z_i = sum_j g_j x_ij`` with ``g_j = d metric / d FP_j / k``."""
    g = fp_gradient(metric, s.tp, fp, s.fn, s.prevalence) / s.runs
    return s.negatives @ g


def _variance(z: np.ndarray, s: StrataSample) -> float:
    return float(stratified_covariance(z, s.strata, s.population, s.sample)[0, 0])


def estimate(s: StrataSample, alpha: float = 0.05, metrics: tuple[str, ...] = METRICS) -> pd.DataFrame:
    """One row per metric: HT estimate (run mean), SE, run SD, conservative bounds, unweighted, floor.

    ``subset_unweighted`` is what a naive evaluator reports from the drawn rows alone (weights 1);
    it is shown beside the estimate to make the difference visible, never as an estimate.
    """
    fp = ht_false_positives(s)
    sums, _ = stratum_sums(s.negatives, s.strata, len(s.population))
    bounds = conservative_bounds(s.tp, s.fn, sums.astype(np.int64), s.population, s.sample, s.prevalence, alpha)
    fp_subset = sums.sum(axis=0)
    subset_prevalence = s.n_positives / (s.n_positives + int(s.sample.sum()))
    rows = []
    for metric in metrics:
        per_run = metric_values(metric, s.tp, fp, s.fn, s.prevalence)
        rows.append(
            {
                "metric": metric,
                "estimate": float(per_run.mean()),
                "se": float(np.sqrt(_variance(_linearised_scalar(s, metric, fp), s))),
                "run_sd": float(per_run.std(ddof=1)) if s.runs > 1 else np.nan,
                "lower": float(bounds[metric][0]),
                "upper": float(bounds[metric][1]),
                "subset_unweighted": float(metric_values(metric, s.tp, fp_subset, s.fn, subset_prevalence).mean()),
                "predict_all_floor": predict_all_floor(metric, s.n_positives, s.n_total),
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Contrast:
    """Paired difference a - b of one metric on the same design rows (fractions or counts)."""

    metric: str
    difference: float
    se: float
    lower: float
    upper: float


def paired_contrast(a: StrataSample, b: StrataSample, metric: str, alpha: float = 0.05) -> Contrast:
    """Difference of run-mean metrics with same-row covariance kept (identical inputs: 0 and SE 0)."""
    if not (
        np.array_equal(a.strata, b.strata)
        and np.array_equal(a.population, b.population)
        and np.array_equal(a.sample, b.sample)
        and a.n_positives == b.n_positives
    ):
        raise ValueError("paired contrast needs both predictors on the same design rows in the same order")
    fp_a, fp_b = ht_false_positives(a), ht_false_positives(b)
    z = _linearised_scalar(a, metric, fp_a) - _linearised_scalar(b, metric, fp_b)
    diff = (
        metric_values(metric, a.tp, fp_a, a.fn, a.prevalence).mean()
        - metric_values(metric, b.tp, fp_b, b.fn, b.prevalence).mean()
    )
    sides = []
    for side in (a, b):
        sums, _ = stratum_sums(side.negatives, side.strata, len(side.population))
        bounds = conservative_bounds(
            side.tp, side.fn, sums.astype(np.int64), side.population, side.sample, side.prevalence, alpha, comparisons=2
        )
        sides.append(bounds[metric])
    lower, upper = contrast_envelope(sides[0], sides[1])
    return Contrast(metric, float(diff), float(np.sqrt(_variance(z, a))), float(lower), float(upper))


SPARSE_COUNT = 5  # positive predictions in a sampled stratum below which the linearised SE is not to be trusted


def sparse_strata(s: StrataSample, names: tuple[str, ...]) -> list[dict]:
    """Sampled strata with fewer than SPARSE_COUNT positive predictions in some run.

    There the within-stratum variance is estimated from (almost) no events, so the linearised SE
    is too small (the sampler study shows Wald coverage far below 95%); the conservative interval
    still holds. ``names`` are the stratum names, positives first (the census stratum).
    """
    sums, _ = stratum_sums(s.negatives, s.strata, len(s.population))
    sampled = s.sample < s.population
    return [{"stratum": names[h + 1], "positive_predictions_per_run": sums[h].astype(int).tolist()}
            for h in np.flatnonzero(sampled) if sums[h].min() < SPARSE_COUNT]
