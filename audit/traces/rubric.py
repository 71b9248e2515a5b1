"""Outcome-stratified audit of reasoning traces with user-defined lexical rubric steps.

Why stratify by outcome: correct verdicts vastly outnumber incorrect ones on most coresets, so a
random sample of traces says little about how failures reason. ``outcome_stratified_sample`` takes
the same number of traces per verdict (correct / incorrect) by seeded hash key, reproducibly;
``trace_audit`` reports, per rubric step (a regex such as "mentions the amount" or "cites a rule"),
the pass rate among correct and among incorrect verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.stats.draws import hash_keys, smallest_keys_per_stratum


@dataclass(frozen=True)
class RubricStep:
    """One lexical check: a trace passes if ``pattern`` matches anywhere (``re.search``)."""

    name: str
    pattern: str
    ignore_case: bool = True
    compiled: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("RubricStep.name must be non-empty")
        try:
            compiled = re.compile(self.pattern, re.IGNORECASE if self.ignore_case else 0)
        except re.error as err:
            raise ValueError(f"RubricStep {self.name!r}: invalid regex {self.pattern!r}: {err}") from err
        object.__setattr__(self, "compiled", compiled)


def rubric_passes(traces: Sequence[object], steps: Sequence[RubricStep]) -> pd.DataFrame:
    """Bool table (rows: traces, columns: step names); a missing trace passes no step."""
    names = [s.name for s in steps]
    if len(set(names)) != len(names):
        raise ValueError(f"rubric step names must be unique, got {names}")
    texts = [t if isinstance(t, str) else None for t in traces]
    return pd.DataFrame(
        {s.name: [t is not None and s.compiled.search(t) is not None for t in texts] for s in steps}, dtype=bool
    )


def trace_audit(traces: Sequence[object], correct: np.ndarray, steps: Sequence[RubricStep]) -> pd.DataFrame:
    """Per step: passes and pass rate among correct and among incorrect verdicts, and their gap."""
    correct = np.asarray(correct, dtype=bool)
    if len(correct) != len(traces):
        raise ValueError(f"{len(traces)} traces but {len(correct)} verdicts")
    passes = rubric_passes(traces, steps)
    n_ok, n_bad = int(correct.sum()), int((~correct).sum())
    rows = []
    for step in steps:
        hit = passes[step.name].to_numpy()
        ok_rate = hit[correct].mean() if n_ok else np.nan
        bad_rate = hit[~correct].mean() if n_bad else np.nan
        rows.append(
            {
                "step": step.name,
                "n_correct": n_ok,
                "passes_correct": int(hit[correct].sum()),
                "pass_rate_correct": float(ok_rate),
                "n_incorrect": n_bad,
                "passes_incorrect": int(hit[~correct].sum()),
                "pass_rate_incorrect": float(bad_rate),
                "gap": float(ok_rate - bad_rate),
            }
        )
    return pd.DataFrame(rows)


def outcome_stratified_sample(ids: object, correct: np.ndarray, per_outcome: int, seed: int) -> np.ndarray:
    """Indices of up to ``per_outcome`` correct and ``per_outcome`` incorrect rows, by hash key."""
    if per_outcome < 1:
        raise ValueError(f"per_outcome must be >= 1, got {per_outcome}")
    strata = np.asarray(correct, dtype=bool).astype(np.int64)
    take = np.array([per_outcome, per_outcome], dtype=np.int64)
    return smallest_keys_per_stratum(hash_keys(ids, seed), strata, take, ids)
