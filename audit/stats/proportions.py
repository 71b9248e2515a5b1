"""Confidence interval of a proportion (an accuracy over n items).

Wilson's score interval: unlike the Wald interval p +- z sqrt(p(1-p)/n) it stays inside [0, 1] and keeps
close to its nominal coverage at the extremes (an accuracy of 0.95 on 100 items), which is where
benchmark subtasks of a hundred items live. The same as statsmodels' ``proportion_confint(method="wilson")``.
"""
from __future__ import annotations

import math

from audit.stats.choices import DEFAULT_LEVEL


def wilson_interval(successes: float, n: int, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """(low, high) of Wilson's score interval for ``successes`` of ``n``; NaNs for n = 0."""
    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes of {n} trials")
    from scipy.stats import norm  # lazily: scipy.stats takes a second to import, in every worker that loads this module

    z = float(norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
