"""The negative budget and its allocation over strata (integer arithmetic, deterministic).

Rule (the published sampler-study rule, which replaced the released random spare fill):

- budget ``B = floor(multiplier * n_pos)`` negatives (default multiplier 2: a 1:2 design);
- hard reserve ``n_hard = min(N_hard, max(1, floor(f * B)), B - #non-empty easy strata)``
  (f = 0.3), so every easy stratum can still get a row;
- each easy stratum ``n_h = min(N_h, max(1, (B - n_hard) // k))`` for k easy strata;
- the residual ``B - sum n_h`` is spread in proportion to spare capacity ``N_h - n_h`` by
  largest remainder, ties broken in stratum order (hard first, then easy_1 .. easy_k).

Samplers without a hard stratum pass ``hard_reserve_fraction=None`` and ``N_hard = 0``; the
uniform sampler is the case k = 1. Budgets larger than the negatives, or too small to give every
non-empty stratum a row, raise ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from audit.coreset.validate import require_budget

_FLOAT_SLACK = 1e-9  # so 0.3 * 10 (= 3.0000000000000004 or 2.9999999999999996) floors to 3


def negative_budget(n_positives: int, multiplier: float) -> int:
    """Negative rows to draw: ``floor(multiplier * n_positives)``."""
    if n_positives < 1 or not multiplier > 0:
        raise ValueError(
            f"negative budget needs n_positives >= 1 and multiplier > 0, got {n_positives} and {multiplier}"
        )
    return math.floor(multiplier * n_positives + _FLOAT_SLACK)


def largest_remainder(residual: int, spare: np.ndarray) -> np.ndarray:
    """Split ``residual`` slots in proportion to ``spare`` (ints), never exceeding a stratum's spare.

    Floors first; the leftover slots go to the largest remainders, earlier strata winning ties.
    """
    spare = np.asarray(spare, dtype=np.int64)
    total = int(spare.sum())
    if residual < 0 or residual > total:
        raise ValueError(f"residual {residual} must lie in [0, total spare capacity {total}]")
    if residual == 0:
        return np.zeros_like(spare)
    scaled = [residual * int(s) for s in spare]  # Python ints: no overflow on 10M-row strata
    share = np.array([s // total for s in scaled], dtype=np.int64)
    remainder = [s % total for s in scaled]
    leftover = residual - int(share.sum())
    order = sorted(range(len(spare)), key=lambda h: (-remainder[h], h))
    share[order[:leftover]] += 1
    return share


def allocate(
    populations: Sequence[int] | np.ndarray, budget: int, hard_reserve_fraction: float | None, source: str = "allocation"
) -> np.ndarray:
    """Rows to draw per negative stratum, ``populations = [N_hard, N_easy_1, ..., N_easy_k]``.

    Returns int64 ``[n_hard, n_easy_1, ..., n_easy_k]`` summing to ``budget``; ``source`` (the
    table's name) prefixes error messages.
    """
    pop = np.asarray(populations, dtype=np.int64)
    if pop.ndim != 1 or len(pop) < 2 or np.any(pop < 0):
        raise ValueError(f"populations must be [N_hard, N_easy_1, ...] of counts >= 0, got {populations!r}")
    if hard_reserve_fraction is None and pop[0] != 0:
        raise ValueError(f"a design without a hard stratum must have N_hard = 0, got {pop[0]}")
    if hard_reserve_fraction is not None and not 0 <= hard_reserve_fraction <= 1:
        raise ValueError(f"hard_reserve_fraction must be in [0, 1], got {hard_reserve_fraction}")
    require_budget(budget, int(pop.sum()), source)
    nonempty = int(np.count_nonzero(pop))
    if budget < nonempty:
        raise ValueError(
            f"{source}: a budget of {budget} rows cannot give each of the {nonempty} non-empty "
            "negative strata a positive allocation; raise the budget or use fewer strata"
        )
    easy = pop[1:]
    sample = np.zeros_like(pop)
    if hard_reserve_fraction is not None and pop[0] > 0:
        reserve = max(1, math.floor(hard_reserve_fraction * budget + _FLOAT_SLACK))
        sample[0] = min(int(pop[0]), reserve, budget - int(np.count_nonzero(easy)))
    per_easy = max(1, (budget - int(sample[0])) // len(easy))
    sample[1:] = np.minimum(easy, per_easy)
    residual = budget - int(sample.sum())
    # residual >= 0: the reserve leaves one row per non-empty easy stratum and budget >= nonempty
    return sample + largest_remainder(residual, pop - sample)
