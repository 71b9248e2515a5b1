"""Sampler study: how close each sampler's estimate of full-table metrics lands, over K draws.

For each case (dataset x held-out direction: strata built from one scorer's score, predictions
from another family), each budget and each sampler, K draws are made and estimated; the truth is
the run-mean of the full-table metrics. Samplers (all drawing exactly B negatives):

- ``uniform_ht``: one negative stratum, HT weights;
- ``difficulty_ht``: difficulty strata over all negatives (= HT-Coreset without the hard stratum);
- ``ht_coreset``: hard-negative census/reserve plus difficulty strata over the rest;
- ``ht_coreset_unweighted``: the HT-Coreset draws with weight 1 (the "no weights" ablation).

Why counts, not rows: every estimate here depends on a draw only through, per stratum, how many
drawn rows show each prediction pattern (the 0/1 vector over runs). Simple random sampling without
replacement of n_h rows gives those counts exactly a multivariate hypergeometric distribution, so a
draw is ``Generator.multivariate_hypergeometric(pattern_counts, n_h)``: exact, and no per-draw work
over targets. Each draw has its own generator seeded by
``SeedSequence([root_seed, key(dataset), key(direction), B, key(design), draw])`` with ``key`` a
stable 32-bit blake2b hash of the name; the unweighted ablation shares the HT-Coreset draws, so the
effect of the weights is paired.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.coreset import strata as st
from audit.coreset.allocation import allocate, negative_budget
from audit.coreset.estimate import covariance_from_sums
from audit.coreset.intervals import conservative_bounds
from audit.coreset.metrics import fp_gradient, metric_values
from audit.coreset.validate import (
    binary_labels,
    binary_predictions,
    finite_scores,
    require_positives,
)

DESIGNS = ("uniform", "difficulty", "ht_coreset")
SAMPLERS = {
    "uniform_ht": ("uniform", True),
    "difficulty_ht": ("difficulty", True),
    "ht_coreset": ("ht_coreset", True),
    "ht_coreset_unweighted": ("ht_coreset", False),
}
Z95 = 1.959963984540054  # two-sided 95% normal quantile, for the Wald coverage column
COVERAGE_TOLERANCE = 1e-12


def stable_key(name: str) -> int:
    """32-bit key of a name, stable across processes and Python versions (unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(name.encode("utf8"), digest_size=4).digest(), "little")


@dataclass(frozen=True)
class StudyConfig:
    """What the study compares. Fractions, not percentages; ``draws`` is K per configuration."""

    root_seed: int  # the run's seed: no default, so a study never silently takes another
    draws: int = 500
    budget_multipliers: tuple[float, ...] = (2.0,)
    samplers: tuple[str, ...] = tuple(SAMPLERS)
    metrics: tuple[str, ...] = ("precision", "recall", "f1")
    hard_cut_fraction: float = 0.5
    hard_reserve_fraction: float = 0.3
    n_easy_strata: int = 3
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if self.draws < 2:
            raise ValueError(f"StudyConfig.draws must be >= 2, got {self.draws}")
        unknown = [s for s in self.samplers if s not in SAMPLERS]
        if unknown or not self.samplers:
            raise ValueError(f"StudyConfig.samplers must be a non-empty subset of {list(SAMPLERS)}, got {unknown}")
        if not self.budget_multipliers or any(not m > 0 for m in self.budget_multipliers):
            raise ValueError(f"StudyConfig.budget_multipliers must be > 0, got {self.budget_multipliers}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"StudyConfig.alpha must be in (0, 1), got {self.alpha}")
        st.easy_percentiles(self.n_easy_strata)


@dataclass(frozen=True, eq=False)
class HeldOutCase:
    """One dataset and direction: labels, the construction score and another family's predictions.

    predictions: (N, k) 0/1, one column per run (seed) of the evaluated family, each already
    thresholded at its own operating point. tau: the construction scorer's operating threshold.
    """

    dataset: str
    direction: str
    labels: np.ndarray
    construction_score: np.ndarray
    tau: float
    predictions: np.ndarray

    def __post_init__(self) -> None:
        source = f"{self.dataset} {self.direction}"
        labels = binary_labels(self.labels, "label", source)
        require_positives(labels, "label", source)
        finite_scores(self.construction_score, "construction_score", source)
        preds = np.asarray(self.predictions)
        preds = preds[:, None] if preds.ndim == 1 else preds
        if preds.shape[0] != len(labels) or len(self.construction_score) != len(labels):
            raise ValueError(f"{source}: labels, construction_score and predictions differ in length")
        if not 1 <= preds.shape[1] <= 62:
            raise ValueError(f"{source}: predictions need 1 to 62 run columns, got {preds.shape[1]}")
        for j in range(preds.shape[1]):
            binary_predictions(preds[:, j], f"prediction run {j}", source)
        if not 0 < self.tau < 1:
            raise ValueError(f"{source}: tau must be in (0, 1), got {self.tau}")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "predictions", preds.astype(bool))


def design_seeds(config: StudyConfig, case: HeldOutCase, budget: int, design: str) -> list[int]:
    """SeedSequence entropy of one configuration; the draw index is appended per draw."""
    return [config.root_seed, stable_key(case.dataset), stable_key(case.direction), budget, stable_key(design)]


def _budgets(config: StudyConfig, case: HeldOutCase) -> dict[float, int]:
    n_pos = int(case.labels.sum())
    return {m: negative_budget(n_pos, m) for m in config.budget_multipliers}


def study_protocol(config: StudyConfig, cases: list[HeldOutCase]) -> dict:
    """The frozen protocol: what is compared, seeds, K, budgets. Write it before any result."""
    return {
        "purpose": "bias, error and interval coverage of samplers estimating full-table metrics",
        "samplers": {
            name: {"design": d, "weighted": w} for name, (d, w) in SAMPLERS.items() if name in config.samplers
        },
        "metrics": list(config.metrics),
        "draws": config.draws,
        "budget_multipliers": list(config.budget_multipliers),
        "design": {
            "hard_cut_fraction": config.hard_cut_fraction,
            "hard_reserve_fraction": config.hard_reserve_fraction,
            "n_easy_strata": config.n_easy_strata,
            "easy_percentiles": list(st.easy_percentiles(config.n_easy_strata)),
        },
        "cases": [
            {
                "dataset": c.dataset,
                "direction": c.direction,
                "n_targets": len(c.labels),
                "n_positives": int(c.labels.sum()),
                "runs": int(c.predictions.shape[1]),
                "tau": c.tau,
                "budgets": {str(m): b for m, b in _budgets(config, c).items()},
            }
            for c in cases
        ],
        "seeds": {
            "root_seed": config.root_seed,
            "rule": "SeedSequence([root_seed, key(dataset), key(direction), budget, key(design), draw])",
            "key": "first 4 bytes (little-endian) of blake2b(name, digest_size=4)",
        },
        "truth": "mean over runs of the full-table metric",
        "interval": f"conservative simultaneous hypergeometric bounds, alpha={config.alpha}",
        "coverage": f"share of draws with lower <= truth <= upper, tolerance {COVERAGE_TOLERANCE}",
        "draw_simulation": "multivariate hypergeometric counts of prediction patterns per stratum (exact SRS)",
    }


def design_strata(config: StudyConfig, case: HeldOutCase, design: str) -> tuple[np.ndarray, int]:
    """Stratum codes from the construction score, and the number of easy strata."""
    n_easy = 1 if design == "uniform" else config.n_easy_strata
    hard_cut = config.hard_cut_fraction * case.tau if design == "ht_coreset" else None
    p = np.asarray(case.construction_score, dtype=np.float64)
    pool = st.easy_difficulty(case.labels, p, hard_cut)
    bounds = np.percentile(pool, st.easy_percentiles(n_easy)) if n_easy > 1 else np.array([])
    return st.assign_strata(case.labels, p, hard_cut, bounds), n_easy


@dataclass(frozen=True, eq=False)
class PatternTable:
    """Negatives grouped by (stratum, prediction pattern): the sufficient statistic of a draw.

    stratum: (P,) negative-stratum index (code - 1) of each group; bits: (P, k) the 0/1 prediction
    pattern over runs; colors: (P,) rows in the population with that stratum and pattern.
    """

    stratum: np.ndarray
    bits: np.ndarray
    colors: np.ndarray

    def groups(self, n_strata: int) -> list[np.ndarray]:
        return [np.flatnonzero(self.stratum == h) for h in range(n_strata)]


def pattern_table(codes: np.ndarray, predictions: np.ndarray) -> PatternTable:
    """Group the negatives of a full table by stratum and prediction pattern (one O(N) pass)."""
    negative = codes != st.POSITIVE
    k = predictions.shape[1]
    pattern = predictions[negative].astype(np.int64) @ (np.int64(1) << np.arange(k, dtype=np.int64))
    stratum = codes[negative].astype(np.int64) - 1
    keys, colors = np.unique(stratum * (np.int64(1) << k) + pattern, return_counts=True)
    bits = (((keys & ((np.int64(1) << k) - 1))[:, None] >> np.arange(k)) & 1).astype(np.float64)
    return PatternTable(stratum=keys >> k, bits=bits, colors=colors)


def draw_pattern_counts(table: PatternTable, sample: np.ndarray, seeds: list[int], draws: int) -> np.ndarray:
    """Drawn rows per pattern group (K, P): SRS of ``sample[h]`` rows per stratum, draw d seeded by
    ``SeedSequence([*seeds, d])`` so any single draw can be regenerated alone."""
    counts = np.zeros((draws, len(table.colors)), dtype=np.int64)
    groups = table.groups(len(sample))
    for d in range(draws):
        rng = np.random.default_rng(np.random.SeedSequence([*seeds, d]))
        for h, idx in enumerate(groups):
            if sample[h]:
                counts[d, idx] = rng.multivariate_hypergeometric(table.colors[idx], int(sample[h]))
    return counts


def pattern_sums(table: PatternTable, counts: np.ndarray, n_strata: int) -> tuple[np.ndarray, np.ndarray]:
    """Positive predictions x (K, H, k) and cross-products (K, H, k, k) of the drawn rows."""
    groups = table.groups(n_strata)
    c = counts.astype(np.float64)
    outer = table.bits[:, :, None] * table.bits[:, None, :]
    x = np.stack([c[:, idx] @ table.bits[idx] for idx in groups], axis=1)
    cross = np.stack([np.einsum("dp,pjl->djl", c[:, idx], outer[idx]) for idx in groups], axis=1)
    return x, cross


def _summaries(est: np.ndarray, truth: float, se: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> dict:
    err = est - truth
    covered = (lo - COVERAGE_TOLERANCE <= truth) & (truth <= hi + COVERAGE_TOLERANCE)
    coverage = float(covered.mean()) if np.isfinite(lo).all() else np.nan
    wald = np.abs(err) <= Z95 * se + COVERAGE_TOLERANCE
    return {
        "truth": truth,
        "mean_estimate": float(est.mean()),
        "signed_bias": float(err.mean()),
        "mae": float(np.abs(err).mean()),
        "rmse": float(np.sqrt((err**2).mean())),
        "sd": float(est.std(ddof=1)),
        "mean_se": float(se.mean()),
        "mean_width95": float((hi - lo).mean()),
        "coverage95": coverage,
        "coverage_mcse": float(np.sqrt(coverage * (1 - coverage) / len(est))),
        "wald_coverage95": float(wald.mean()) if np.isfinite(se).all() else np.nan,
    }


def simulate_design(
    config: StudyConfig, case: HeldOutCase, budget: int, design: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """K draws of one design: N_h and n_h (H,), positive predictions x (K, H, k), cross-products."""
    codes, n_easy = design_strata(config, case, design)
    population = st.stratum_counts(codes, n_easy)[1:]
    reserve = config.hard_reserve_fraction if design == "ht_coreset" else None
    sample = allocate(population, budget, reserve)
    table = pattern_table(codes, case.predictions)
    counts = draw_pattern_counts(table, sample, design_seeds(config, case, budget, design), config.draws)
    x, cross = pattern_sums(table, counts, len(sample))
    return population, sample, x, cross


def _design_rows(config: StudyConfig, case: HeldOutCase, budget: int, design: str) -> list[tuple[str, str, dict]]:
    """(sampler, metric, per-draw columns) for every requested sampler that uses ``design``."""
    y, preds = case.labels, case.predictions
    tp = preds[y].sum(axis=0).astype(np.float64)
    fn = y.sum() - tp
    prevalence = float(y.mean())
    population, sample, x, cross = simulate_design(config, case, budget, design)
    cov = covariance_from_sums(x, cross, population, sample)
    bounds = conservative_bounds(tp, fn, x.astype(np.int64), population, sample, prevalence, config.alpha)
    rows = []
    for sampler in (s for s in config.samplers if SAMPLERS[s][0] == design):
        weighted = SAMPLERS[sampler][1]
        weight = population / np.maximum(sample, 1) if weighted else np.ones(len(sample))
        fp = (weight[:, None] * x).sum(axis=1)
        prev = prevalence if weighted else float(y.sum() / (y.sum() + budget))
        for metric in config.metrics:
            draws = {"estimate": metric_values(metric, tp, fp, fn, prev).mean(axis=1)}
            if weighted:
                g = fp_gradient(metric, tp, fp, fn, prev) / len(tp)
                draws["se"] = np.sqrt(np.maximum(np.einsum("dj,djl,dl->d", g, cov, g), 0.0))
                draws["lower"], draws["upper"] = bounds[metric]
            else:  # weight-1 estimates have no design-based SE or interval
                draws["se"] = draws["lower"] = draws["upper"] = np.full(config.draws, np.nan)
            rows.append((sampler, metric, draws))
    return rows


def run_study(config: StudyConfig, cases: list[HeldOutCase]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary (one row per case, budget, sampler, metric) and per-draw estimates."""
    summary, per_draw = [], []
    for case in cases:
        y, preds = case.labels, case.predictions
        tp = preds[y].sum(axis=0)
        fp_true = preds[~y].sum(axis=0)
        for multiplier, budget in _budgets(config, case).items():
            for design in DESIGNS:
                for sampler, metric, draws in _design_rows(config, case, budget, design):
                    truth = float(metric_values(metric, tp, fp_true, y.sum() - tp, float(y.mean())).mean())
                    key = {
                        "dataset": case.dataset,
                        "direction": case.direction,
                        "budget_multiplier": multiplier,
                        "budget": budget,
                        "sampler": sampler,
                        "metric": metric,
                    }
                    summary.append(
                        {**key, **_summaries(draws["estimate"], truth, draws["se"], draws["lower"], draws["upper"])}
                    )
                    per_draw.append(pd.DataFrame({**key, "draw": np.arange(config.draws), **draws}))
    return pd.DataFrame(summary), pd.concat(per_draw, ignore_index=True)
