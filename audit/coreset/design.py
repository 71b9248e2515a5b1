"""HT-Coreset design: configuration, manifest, the draw and the design table.

Three stages (see ``strata`` and ``allocation`` for the rules):
1. census of positives (weight 1), so TP and FN, hence recall, are exact;
2. negatives stratified on the construction scorer: a hard stratum ``p >= c * tau`` kept in full up
   to its reserve, and difficulty strata over the rest drawn without replacement by hash key;
3. weights from *realised* membership after the draw, ``w = N_h / n_h``, ``pi = n_h / N_h``.

``sum(w)`` over negatives equals the negative population, which is asserted, but that holds for any
partition and is not a correctness test; the estimator tests enumerate every possible draw.

A distributed build calls, per block, ``strata.stratum_counts`` and ``strata.easy_difficulty``
(merged by sum and by ``percentile.exact_percentiles``), then ``plan_design`` on the driver, then per
block ``strata.assign_strata`` + ``draws.hash_keys`` + ``draws.smallest_keys_per_stratum``
with ``manifest.take``, merges the survivors, and finishes with ``design_table``.
``build_design`` is the same pipeline in memory.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from audit.coreset import strata as st
from audit.coreset.allocation import allocate, negative_budget
from audit.coreset.validate import binary_labels, finite_scores, require_positives
from audit.stats.draws import hash_keys, smallest_keys_per_stratum

DESIGN_COLUMNS = ("id", "stratum", "label", "pi", "w")


@dataclass(frozen=True)
class DesignConfig:
    """Knobs of one design; fractions, not percentages.

    tau: operating threshold of the construction scorer (probability).
    hard_cut_fraction: a negative is hard if ``p >= hard_cut_fraction * tau``.
    hard_reserve_fraction: share of the negative budget reserved for the hard stratum.
    budget_multiplier: negatives drawn per positive (2.0 gives a 1:2 design).
    n_easy_strata: difficulty strata over the easy pool (3 = terciles).
    use_hard_stratum: False gives the difficulty-strata design (hard negatives stay in the pool).
    seed: hash-draw seed (integer in [0, 2**64)).
    """

    tau: float
    seed: int  # the run's seed: no default, so a draw never silently takes another
    hard_cut_fraction: float = 0.5
    hard_reserve_fraction: float = 0.3
    budget_multiplier: float = 2.0
    n_easy_strata: int = 3
    use_hard_stratum: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.tau < 1:
            raise ValueError(f"DesignConfig.tau must be a probability in (0, 1), got {self.tau}")
        if not 0 < self.hard_cut_fraction <= 1:
            raise ValueError(f"DesignConfig.hard_cut_fraction must be in (0, 1], got {self.hard_cut_fraction}")
        if not 0 <= self.hard_reserve_fraction <= 1:
            raise ValueError(f"DesignConfig.hard_reserve_fraction must be in [0, 1], got {self.hard_reserve_fraction}")
        if not self.budget_multiplier > 0:
            raise ValueError(f"DesignConfig.budget_multiplier must be > 0, got {self.budget_multiplier}")
        st.easy_percentiles(self.n_easy_strata)  # validates the range
        if not 0 <= self.seed < 2**64:
            raise ValueError(f"DesignConfig.seed must be in [0, 2**64), got {self.seed}")

    @property
    def hard_cut(self) -> float | None:
        """Score at or above which a negative is hard; None without a hard stratum."""
        return self.hard_cut_fraction * self.tau if self.use_hard_stratum else None

    @property
    def easy_percentiles(self) -> tuple[float, ...]:
        return st.easy_percentiles(self.n_easy_strata)


@dataclass(frozen=True)
class DesignManifest:
    """Everything needed to reproduce the draw and to weight it (counts are rows)."""

    tau: float
    hard_cut: float | None
    easy_percentiles: tuple[float, ...]
    easy_bounds: tuple[float, ...]
    strata: tuple[str, ...]
    population: tuple[int, ...]
    sample: tuple[int, ...]
    budget: int
    seed: int
    config: DesignConfig = field(repr=False)

    @property
    def take(self) -> np.ndarray:
        """Rows to keep per stratum code (positives: all of them)."""
        return np.asarray(self.sample, dtype=np.int64)

    def to_dict(self) -> dict:
        """JSON-ready form for the run directory."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> DesignManifest:
        """Inverse of ``to_dict`` (lists back to tuples), e.g. when an estimate job reads the manifest."""
        fields = dict(data)
        for name in ("easy_percentiles", "easy_bounds", "strata", "population", "sample"):
            fields[name] = tuple(fields[name])
        fields["config"] = DesignConfig(**fields["config"])
        return cls(**fields)


def plan_design(
    config: DesignConfig, counts: np.ndarray, easy_bounds: np.ndarray, source: str = "targets"
) -> DesignManifest:
    """Budget and allocation from merged stratum counts (``strata.stratum_counts`` summed)."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) != st.FIRST_EASY + config.n_easy_strata:
        raise ValueError(f"{source}: expected {st.FIRST_EASY + config.n_easy_strata} stratum counts, got {len(counts)}")
    n_pos = int(counts[st.POSITIVE])
    if n_pos == 0:
        raise ValueError(f"{source}: no positive rows; the design needs at least one positive")
    budget = negative_budget(n_pos, config.budget_multiplier)
    reserve = config.hard_reserve_fraction if config.use_hard_stratum else None
    sample = allocate(counts[1:], budget, reserve, source)
    return DesignManifest(
        tau=config.tau,
        hard_cut=config.hard_cut,
        easy_percentiles=config.easy_percentiles,
        easy_bounds=tuple(float(b) for b in easy_bounds),
        strata=st.stratum_names(config.n_easy_strata),
        population=tuple(int(c) for c in counts),
        sample=(n_pos, *(int(s) for s in sample)),
        budget=budget,
        seed=config.seed,
        config=config,
    )


def design_table(ids: object, codes: np.ndarray, manifest: DesignManifest) -> pd.DataFrame:
    """Design rows (id, stratum, label, pi, w) for the drawn ids, weighted by realised membership."""
    codes = np.asarray(codes, dtype=np.int64)
    population = np.asarray(manifest.population, dtype=np.int64)
    realised = np.bincount(codes, minlength=len(population))
    if not np.array_equal(realised, manifest.take):
        raise ValueError(f"drawn rows per stratum {realised.tolist()} differ from the plan {list(manifest.sample)}")
    weight = np.where(realised > 0, population / np.maximum(realised, 1), 0.0)
    negatives = codes != st.POSITIVE
    total = float(weight[codes[negatives]].sum())
    if not np.isclose(total, population[1:].sum(), rtol=1e-12, atol=0):
        raise AssertionError(f"negative weights sum to {total}, expected {population[1:].sum()}")
    names = np.asarray(manifest.strata, dtype=object)
    return pd.DataFrame(
        {
            "id": np.asarray(ids),
            "stratum": names[codes],
            "label": codes == st.POSITIVE,
            "pi": realised[codes] / population[codes],
            "w": weight[codes],
        }
    )


def build_design(
    ids: object, labels: object, scores: np.ndarray, config: DesignConfig, source: str = "targets"
) -> tuple[pd.DataFrame, DesignManifest]:
    """In-memory build: validate, stratify, allocate, draw by hash key and weight.

    ``scores`` is (n,) or (n, m) scorer probabilities averaged into the ensemble score.
    """
    y = binary_labels(labels, "label", source)
    ids = np.asarray(ids)
    if len(ids) != len(y) or pd.Index(ids).has_duplicates:
        raise ValueError(f"{source}: column 'id' must hold one unique id per row ({len(y)} rows)")
    score_matrix = np.asarray(scores, dtype=np.float64)
    finite_scores(score_matrix.ravel(), "score", source)
    require_positives(y, "label", source)
    p = st.ensemble_score(score_matrix)
    if len(p) != len(y):
        raise ValueError(f"{source}: {len(p)} score rows but {len(y)} labels")
    pool = st.easy_difficulty(y, p, config.hard_cut)
    bounds = np.percentile(pool, config.easy_percentiles) if len(pool) and config.n_easy_strata > 1 else np.array([])
    codes = st.assign_strata(y, p, config.hard_cut, bounds)
    manifest = plan_design(config, st.stratum_counts(codes, config.n_easy_strata), bounds, source)
    keep = smallest_keys_per_stratum(hash_keys(ids, config.seed), codes, manifest.take, ids)
    return design_table(ids[keep], codes[keep], manifest), manifest
