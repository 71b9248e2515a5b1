"""Trend of (improve - degrade) over r, with a question-clustered bootstrap interval.

The statistic is the least-squares slope of ``D_r`` -- wrong->correct minus correct->wrong,
summed over models -- on r: ``sum_r w_r D_r`` with ``w_r = (r - mean r) / sum (r - mean r)^2``. It
is linear in the question-level differences ``d = noisy - clean``, so it splits into one term per
question, ``s_q = sum over models and r of w_r d``, and the slope is ``sum_q s_q``. Resampling
questions (not rows) keeps each question's outcomes across models and settings together, which is
what makes the interval honest: the same hard question moves every model. A positive slope whose
interval excludes 0 says noisy routing helps more as r grows -- the contamination signature.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from audit.stats.bootstrap import DEFAULT_BOOTSTRAP, BootstrapConfig, cluster_bootstrap_mean


@dataclass(frozen=True)
class Trend:
    """Slope of summed (improve - degrade) per additional router, with its percentile interval."""

    slope: float
    low: float
    high: float
    excludes_zero: bool
    n_questions: int
    r_values: tuple[int, ...]
    n_replicates: int
    seed: int
    level: float

    def to_dict(self) -> dict:
        return {**asdict(self), "r_values": list(self.r_values)}


def improve_degrade_trend(pairs: pd.DataFrame, config: BootstrapConfig = DEFAULT_BOOTSTRAP) -> Trend | None:
    """The trend over the r values present in ``pairs`` (from ``cells.paired``); None with fewer than two."""
    r_values = np.sort(pairs["r"].unique()) if len(pairs) else np.array([], dtype=np.int64)
    if r_values.size < 2:
        return None
    centred = r_values - r_values.mean()
    weights = pd.Series(centred / (centred**2).sum(), index=r_values)
    contribution = (pairs["noisy"] - pairs["clean"]).to_numpy(np.float64) * weights.loc[pairs["r"]].to_numpy()
    per_question = pd.Series(contribution).groupby(pairs["question_id"].to_numpy()).sum()
    n = len(per_question)
    interval = cluster_bootstrap_mean(per_question.to_numpy(), per_question.index.to_numpy(), config)
    # every replicate redraws n questions, so n x (replicate mean) is the replicate sum exactly
    slope, low, high = n * interval.estimate, n * interval.low, n * interval.high
    return Trend(slope=float(slope), low=float(low), high=float(high), excludes_zero=bool(low > 0 or high < 0),
                 n_questions=n, r_values=tuple(int(r) for r in r_values), n_replicates=config.n_replicates,
                 seed=config.seed, level=config.level)
