"""Conservative simultaneous intervals from exact hypergeometric bounds per sampled stratum.

For a stratum of N_h rows of which n_h were drawn without replacement and x were predicted
positive, the unknown population count K of positive predictions has the exact equal-tailed
interval ``{K : P_K(X >= x) >= a/2 and P_K(X <= x) >= a/2}``. The first tail grows with K and
the second shrinks, so the set is ``[K_lo, K_hi]`` inside the support ``[x, N_h - n_h + x]`` and is
found by integer bisection (vectorised over all strata, runs and draws at once).

Bonferroni splits alpha over ``comparisons x runs x sampled strata`` components (census strata are
exact and count as none). The component bounds sum to ``[FP_lo, FP_hi]`` per run; precision and
F1 fall as FP grows, so they map monotonically, then average over runs and round outward
(census strata give point bounds, and recall is exact, so it is not rounded). The
coverage guarantee (>= 1 - alpha) holds for each cell or contrast separately, not jointly.
"""

from __future__ import annotations

import numpy as np

from audit.coreset.metrics import safe_divide

DECIMALS = 12  # outward rounding grid of reported bounds (fractions); below any reported precision


def _bisect(N: np.ndarray, n: np.ndarray, x: np.ndarray, a2: float, lower: bool) -> np.ndarray:
    from scipy.stats import hypergeom  # here, not at the top: a coreset run starts without scipy.stats (~1 s)

    lo = x.copy()
    hi = N - n + x
    active = lo < hi
    while active.any():
        i = np.flatnonzero(active)
        if lower:  # smallest K with P_K(X >= x) >= a/2
            mid = (lo[i] + hi[i]) // 2
            ok = hypergeom.sf(x[i] - 1, N[i], mid, n[i]) >= a2
            hi[i] = np.where(ok, mid, hi[i])
            lo[i] = np.where(ok, lo[i], mid + 1)
        else:  # largest K with P_K(X <= x) >= a/2
            mid = (lo[i] + hi[i] + 1) // 2
            ok = hypergeom.cdf(x[i], N[i], mid, n[i]) >= a2
            lo[i] = np.where(ok, mid, lo[i])
            hi[i] = np.where(ok, hi[i], mid - 1)
        active = lo < hi
    return lo


def hypergeom_count_intervals(
    N: np.ndarray, n: np.ndarray, x: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Exact equal-tailed ``1 - alpha`` bounds on the population count K (arrays broadcast).

    ``n == N`` gives the point ``(x, x)``; ``n == 0`` gives ``(0, N)``.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    N, n, x = (np.asarray(a, dtype=np.int64) for a in np.broadcast_arrays(N, n, x))
    if np.any(n < 0) or np.any(n > N) or np.any(x < 0) or np.any(x > n):
        raise ValueError("hypergeometric interval needs 0 <= n <= N and 0 <= x <= n")
    triples, inverse = np.unique(np.stack([N.ravel(), n.ravel(), x.ravel()], axis=1), axis=0, return_inverse=True)
    uN, un, ux = triples.T.copy()
    low = _bisect(uN, un, ux, alpha / 2, lower=True)
    high = _bisect(uN, un, ux, alpha / 2, lower=False)
    empty_draw = un == 0
    low[empty_draw], high[empty_draw] = 0, uN[empty_draw]
    shape = N.shape
    return low[inverse.ravel()].reshape(shape), high[inverse.ravel()].reshape(shape)


def hypergeom_count_interval(N: int, n: int, x: int, alpha: float) -> tuple[int, int]:
    """Scalar form of ``hypergeom_count_intervals``."""
    lo, hi = hypergeom_count_intervals(np.array(N), np.array(n), np.array(x), alpha)
    return int(lo), int(hi)


def bonferroni_alpha(alpha: float, comparisons: int, runs: int, sampled_strata: int) -> float:
    """Per-component alpha: ``alpha / (comparisons * runs * sampled_strata)`` (alpha if none)."""
    if comparisons < 1 or runs < 1 or sampled_strata < 0:
        raise ValueError(
            f"need comparisons >= 1, runs >= 1, sampled_strata >= 0, got {comparisons}, {runs}, {sampled_strata}"
        )
    return alpha / (comparisons * runs * max(sampled_strata, 1))


def round_outward(lower: np.ndarray, upper: np.ndarray, decimals: int = DECIMALS) -> tuple[np.ndarray, np.ndarray]:
    """Floor lower and ceil upper bounds to ``decimals`` places, never moving a bound inward."""
    scale = 10.0**decimals
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    return np.minimum(np.floor(lower * scale) / scale, lower), np.maximum(np.ceil(upper * scale) / scale, upper)


def conservative_bounds(
    tp: np.ndarray,
    fn: np.ndarray,
    x: np.ndarray,
    population: np.ndarray,
    sample: np.ndarray,
    prevalence: float,
    alpha: float = 0.05,
    comparisons: int = 1,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Run-averaged simultaneous bounds for fp, precision, recall, f1 and lift.

    tp, fn: (k,) exact counts per run; x: (..., H, k) positive predictions among the drawn rows of
    each negative stratum; population, sample: (H,) N_h and n_h. Leading axes of ``x`` (draws) stay.
    """
    x = np.asarray(x, dtype=np.int64)
    population = np.asarray(population, dtype=np.int64)
    sample = np.asarray(sample, dtype=np.int64)
    tp = np.asarray(tp, dtype=np.float64)
    fn = np.asarray(fn, dtype=np.float64)
    runs = x.shape[-1]
    sampled = sample < population
    a = bonferroni_alpha(alpha, comparisons, runs, int(np.count_nonzero(sampled)))
    lo, hi = hypergeom_count_intervals(population[:, None], sample[:, None], x, a)
    fp_lo, fp_hi = lo.sum(axis=-2).astype(np.float64), hi.sum(axis=-2).astype(np.float64)
    recall = safe_divide(tp, tp + fn) + 0.0 * fp_lo
    per_run = {
        "fp": (fp_lo, fp_hi),
        "precision": (safe_divide(tp, tp + fp_hi), safe_divide(tp, tp + fp_lo)),
        "recall": (recall, recall),
        "f1": (safe_divide(2 * tp, 2 * tp + fn + fp_hi), safe_divide(2 * tp, 2 * tp + fn + fp_lo)),
    }
    per_run["lift"] = (per_run["precision"][0] / prevalence, per_run["precision"][1] / prevalence)
    out = {}
    for name, (low, high) in per_run.items():
        out[name] = (low.mean(axis=-1), high.mean(axis=-1))
        if name in ("precision", "f1", "lift"):  # fp is a count; recall is exact
            out[name] = round_outward(*out[name])
    return out


def contrast_envelope(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on ``a - b`` from each side's bounds (built with ``comparisons=2``)."""
    return a[0] - b[1], a[1] - b[0]
