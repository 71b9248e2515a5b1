"""Exact percentiles (numpy's default ``linear`` method) from mergeable per-block counts.

Why: the easy-pool stratum bounds must equal ``np.percentile(difficulty, q)`` bit for bit, so a
design built on Ray matches one built in memory, yet a 10M-row table should never be sorted or
collected on the driver. An approximate sketch would move rows across stratum bounds and change
the design, so we find the exact order statistics instead:

1. ``percentile_ranks`` gives, for each percentile, the two 0-based order statistics numpy
   interpolates between (``floor`` and ``floor + 1`` of ``(n - 1) * q / 100``) and the weight.
2. Each wanted rank lives in a bucket ``[lower, upper)`` with ``below`` values under ``lower``.
   A pass cuts every open bucket into ``bins`` sub-buckets; blocks report how many of their values
   fall under each edge (``count_below``, summed across blocks), and ``narrow_buckets`` keeps the
   sub-bucket that holds the rank. Buckets are cut evenly in *float order* (the 64-bit ordinal of
   each double), not in value, so any bucket spans a single float after at most
   ``log_bins(2**64)`` passes (6 with 4,096 bins) even for a point mass at 0.0, and resolves
   without fetching; usually a bucket is small enough to fetch after one or two passes.
3. Once a bucket holds at most ``fetch_limit`` values, blocks return the values inside it
   (``values_in_buckets``, concatenated), and the driver sorts that small set.
4. ``interpolate`` reproduces numpy's ``_lerp`` so the final bounds are identical.

All per-block functions are pure numpy; ``exact_percentiles`` only orchestrates two callables that
a Ray job implements as map-then-sum and map-then-concatenate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

CountBelow = Callable[[np.ndarray], np.ndarray]
FetchBetween = Callable[[np.ndarray, np.ndarray], np.ndarray]


def percentile_ranks(n: int, percentiles: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Order statistics (0-based) bracketing each percentile of ``n`` values, and the weight.

    Mirrors numpy's ``linear`` method: virtual index ``(n - 1) * (q / 100)``; indexes at or past
    the last value clamp to ``n - 1`` (weight irrelevant, both neighbours are the same value).
    """
    if n < 1:
        raise ValueError(f"percentiles need at least one value, got n={n}")
    q = np.true_divide(np.asarray(percentiles, dtype=np.float64), 100)
    if q.ndim != 1 or np.any((q < 0) | (q > 1)) or np.any(np.isnan(q)):
        raise ValueError(f"percentiles must be a 1-D sequence in [0, 100], got {percentiles!r}")
    virtual = (n - 1) * q
    below = np.floor(virtual)
    gamma = virtual - below
    above = below + 1
    top = virtual >= n - 1
    below[top] = n - 1
    above[top] = n - 1
    gamma[top] = 0.0
    return below.astype(np.int64), above.astype(np.int64), gamma


def interpolate(below: np.ndarray, above: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """numpy's ``_lerp``: ``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` when ``t >= 0.5``."""
    below = np.asarray(below, dtype=np.float64)
    above = np.asarray(above, dtype=np.float64)
    diff = above - below
    out = below + diff * gamma
    upper_half = gamma >= 0.5
    out[upper_half] = (above - diff * (1 - gamma))[upper_half]
    return out


def count_below(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Per-block partial: how many ``values`` are strictly below each edge (int64, summable)."""
    return np.searchsorted(np.sort(np.asarray(values, dtype=np.float64)), edges, side="left").astype(np.int64)


def values_in_buckets(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Per-block partial: the values inside any bucket ``[lower_i, upper_i)`` (concatenate to merge)."""
    values = np.asarray(values, dtype=np.float64)
    keep = np.zeros(len(values), dtype=bool)
    for lo, hi in zip(lower, upper):
        keep |= (values >= lo) & (values < hi)
    return values[keep]


def float_ordinal(x: np.ndarray) -> np.ndarray:
    """Monotone map of finite doubles to int64 (adjacent floats differ by 1; -0.0 and 0.0 map to 0)."""
    bits = np.asarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, -(bits & np.int64(0x7FFFFFFFFFFFFFFF)), bits)


def ordinal_float(ordinal: np.ndarray) -> np.ndarray:
    """Inverse of ``float_ordinal`` (0 maps to +0.0)."""
    ordinal = np.asarray(ordinal, dtype=np.int64)
    bits = np.where(ordinal < 0, (-ordinal) | np.int64(-0x8000000000000000), ordinal)
    return bits.view(np.float64)


def bucket_edges(lower: np.ndarray, upper: np.ndarray, bins: int) -> np.ndarray:
    """Ordinal edges cutting each ordinal bucket into ``bins`` pieces, shape (buckets, bins + 1).

    Exact integer arithmetic (Python ints: a bucket may span more than 2**63 ordinals), so edges
    are monotone, hit both ends, and split any bucket wider than one float.
    """
    step = np.arange(bins + 1, dtype=object)
    return np.array(
        [(int(lo) + (int(hi) - int(lo)) * step // bins).astype(np.int64) for lo, hi in zip(lower, upper)],
        dtype=np.int64,
    ).reshape(len(lower), bins + 1)


def narrow_buckets(
    ranks: np.ndarray, edges: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pick, per rank, the sub-bucket holding it; return its lower, upper, count below, count inside.

    ``counts[i, j]`` is the global number of values below ``edges[i, j]``; the chosen sub-bucket is
    the last edge with ``counts <= rank``, which always has ``counts[j + 1] > rank``.
    """
    rows = np.arange(len(ranks))
    j = np.array([np.searchsorted(c, r, side="right") - 1 for c, r in zip(counts, ranks)], dtype=np.int64)
    j = np.clip(j, 0, edges.shape[1] - 2)
    return edges[rows, j], edges[rows, j + 1], counts[rows, j], counts[rows, j + 1] - counts[rows, j]


def exact_percentiles(
    count_below_fn: CountBelow,
    fetch_fn: FetchBetween,
    n: int,
    percentiles: Sequence[float],
    minimum: float,
    maximum: float,
    bins: int = 4096,
    fetch_limit: int = 1 << 16,
    max_passes: int = 64,
) -> np.ndarray:
    """``np.percentile(values, percentiles)`` over a table seen only through two merged callables.

    ``count_below_fn(edges)`` returns the global count of values below each edge (1-D in, 1-D out);
    ``fetch_fn(lower, upper)`` returns every value lying in some ``[lower_i, upper_i)``. ``n``,
    ``minimum`` and ``maximum`` come from one aggregation pass. Values must be finite.
    """
    if bins < 2 or fetch_limit < 1:
        raise ValueError(f"bins must be >= 2 and fetch_limit >= 1, got {bins} and {fetch_limit}")
    if not (np.isfinite(minimum) and np.isfinite(maximum) and minimum <= maximum):
        raise ValueError(f"minimum and maximum must be finite with minimum <= maximum, got {minimum}, {maximum}")
    below_rank, above_rank, gamma = percentile_ranks(n, percentiles)
    ranks = np.unique(np.concatenate([below_rank, above_rank]))
    m = len(ranks)
    lower = np.full(m, float_ordinal(np.array([minimum]))[0])
    upper = np.full(m, float_ordinal(np.array([maximum]))[0] + 1)
    below = np.zeros(m, dtype=np.int64)
    inside = np.full(m, n, dtype=np.int64)
    value = np.full(m, np.nan)
    for _ in range(max_passes):
        single = upper - lower == 1  # bucket holds one float: every value in it equals that float
        value[single] = ordinal_float(lower[single])
        active = np.isnan(value) & (inside > fetch_limit)
        if not active.any():
            break
        edges = bucket_edges(lower[active], upper[active], bins)
        counts = np.asarray(count_below_fn(ordinal_float(edges).ravel()), dtype=np.int64).reshape(edges.shape)
        lower[active], upper[active], below[active], inside[active] = narrow_buckets(ranks[active], edges, counts)
    else:
        raise RuntimeError(f"percentile refinement did not converge in {max_passes} passes")
    open_ = np.isnan(value)
    if open_.any():
        lo_float, hi_float = ordinal_float(lower[open_]), ordinal_float(upper[open_])
        fetched = np.asarray(fetch_fn(lo_float, hi_float), dtype=np.float64)
        for i, lo, hi in zip(np.flatnonzero(open_), lo_float, hi_float):
            bucket = np.sort(fetched[(fetched >= lo) & (fetched < hi)])
            if len(bucket) != inside[i]:
                raise RuntimeError(
                    f"bucket [{lo!r}, {hi!r}) returned {len(bucket)} values, counted {inside[i]}; "
                    "the table changed between passes"
                )
            value[i] = bucket[ranks[i] - below[i]]
    lookup = dict(zip(ranks.tolist(), value.tolist()))
    return interpolate(
        np.array([lookup[r] for r in below_rank.tolist()]),
        np.array([lookup[r] for r in above_rank.tolist()]),
        gamma,
    )


def percentiles_over_blocks(
    blocks: Iterable[np.ndarray], percentiles: Sequence[float], bins: int = 4096, fetch_limit: int = 1 << 16
) -> np.ndarray:
    """The refinement path over in-memory blocks (row groups, chunks); equals ``np.percentile``."""
    blocks = [np.asarray(b, dtype=np.float64) for b in blocks]
    nonempty = [b for b in blocks if len(b)]
    n = sum(len(b) for b in nonempty)
    if n == 0:
        raise ValueError("percentiles need at least one value, got none in any block")
    return exact_percentiles(
        lambda edges: np.asarray(sum(count_below(b, edges) for b in nonempty)),
        lambda lo, hi: np.concatenate([values_in_buckets(b, lo, hi) for b in nonempty]),
        n,
        percentiles,
        minimum=min(float(b.min()) for b in nonempty),
        maximum=max(float(b.max()) for b in nonempty),
        bins=bins,
        fetch_limit=fetch_limit,
    )
