"""Exact McNemar test on paired 0/1 outcomes and Holm's step-down correction.

McNemar: of the questions whose outcome differs between the clean and the noisy setting, ``b``
went wrong -> correct and ``c`` correct -> wrong. Under no effect each discordant question is
equally likely to go either way, so ``b ~ Binomial(b + c, 1/2)``; the exact two-sided p-value is
``min(1, 2 P(X <= min(b, c)))`` (the binomial is symmetric, so this equals summing every outcome
no more likely than the observed one). With no discordant pair the p-value is 1.

Holm: sort the m p-values, multiply the i-th smallest (0-based) by ``m - i``, take running maxima
and cap at 1. It controls the family-wise error rate under any dependence between the tests,
which matters here: the models answer the same questions.

The family is every model x r cell of an analysis, corrected together (``FAMILY``). Why not one
family per r: counts added across r families (a model's significant settings, the run's total) are
then controlled by nothing -- with M = 9 families at 0.05 each, the chance of at least one false
"significant" in their sum is up to 9 x 0.05 = 45% (37% were the families independent). With one
family, every count read from it (per model, per r, in total) has family-wise error rate at most
alpha: the chance that it counts any cell whose null hypothesis is true (no difference between the
clean and the noisy setting) is at most alpha.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_ALPHA = 0.05
FAMILY = "every model × r cell with shared questions, corrected together"
TEST = "exact two-sided McNemar test on each cell's wrong→correct and correct→wrong counts"


def mcnemar_exact(improve: int, degrade: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts."""
    if improve < 0 or degrade < 0:
        raise ValueError(f"discordant counts must be >= 0, got {improve}, {degrade}")
    n = improve + degrade
    if n == 0:
        return 1.0
    from scipy.stats import binom  # here, not at the top: a contamination run starts without scipy.stats (~1 s)

    return float(min(1.0, 2.0 * binom.cdf(min(improve, degrade), n, 0.5)))


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values in the input order; NaN entries are left out of the family and stay NaN."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    present = np.flatnonzero(~np.isnan(p))
    if present.size == 0:
        return out
    order = present[np.argsort(p[present], kind="stable")]
    m = order.size
    adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out
