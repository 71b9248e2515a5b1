"""Shares corrected for the resolver's errors, from a labelled calibration sample.

Why: the resolver misses some places and misplaces others, and not at random (small towns and
non-English names are missed more than capitals), so the share of *resolved* captions a country gets
is not its share of the captions that name a country. Given captions a person placed (a country, or
none), we estimate how the resolver errs and undo it.

The estimator is the matrix misclassification correction (Rogan & Gladen 1978 for two classes; its
k-class form in e.g. Buonaccorsi, *Measurement Error*, 2010, ch. 3): with classes the regions plus
``none`` (no country), ``M[i, j] = P(resolved class j | true class i)`` estimated on the sample, and
``q`` the corpus's observed class shares (unresolved captions count as ``none``),

    q = Mᵀ p,

so the true shares ``p`` solve a k×k linear system. We solve it as least squares on the simplex
(``p ≥ 0``, ``Σ p = 1``; non-negative least squares with the sum as a heavily weighted extra row),
which is the exact inverse whenever that lies in the simplex, and the nearest valid shares when
sampling noise pushes it out. Intervals: percentile bootstrap that resamples the calibration
captions *and* draws the corpus counts again (multinomial), so both sources of noise show.

Classes are regions, not countries: a sample of a few hundred captions cannot estimate a 250×250
matrix. A country's corrected share is its region's corrected share split in the proportions the
resolver found inside the region (assumption: within a region the resolver's errors do not change
the countries' relative shares). A region with no true caption in the sample is *uncalibrated*: its
row of M is taken as perfect (identity) and said so.

A sample drawn with unequal probabilities (e.g. captions with proper nouns over-represented, as a
labeller does to find places at all) carries each caption's weight, the inverse of its inclusion
probability: M is estimated from weighted counts (Horvitz–Thompson), so each row describes the
class's captions as they occur in the population the sample was drawn from.

A class is *identified* when the resolver puts more of that class's captions in it than of any
other class's (``M[i, i] > M[j, i]`` for all j ≠ i: the k-class form of Rogan–Gladen's condition
sensitivity + specificity > 1). When a calibrated class is not identified the system cannot tell
its captions from the others' and ``correct`` says so instead of returning shares.

Assumptions the numbers rest on: the sample's captions of each true class, weighted, are like the
corpus's captions of that class (transportability of M; the sample may over-represent a class, as
M is conditional on the true class), and the corpus is resolved with the same lexicon and evidence
floor.
Ray-free and I/O-free: the job passes the sample's labels and resolved countries, and the counts.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

NONE = "none"  # the class of a caption that names no country (true) or resolves to none (observed)
UNKNOWN = "unknown"  # the region of a country the region table lacks
ESTIMATOR = "matrix misclassification correction (Rogan–Gladen generalised to k classes), least squares on the simplex"
_SUM_WEIGHT = 1e4  # weight of the Σ p = 1 row: large enough that the constraint holds to ~1e-8


@dataclass(frozen=True)
class Corrected:
    """Corrected shares of one corpus; ``*_ci`` are (low, high) per entry, None without replicates."""

    classes: list[str]  # regions (sorted) then NONE
    observed: np.ndarray  # corpus class shares over usable captions (unresolved → NONE)
    true: np.ndarray  # corrected class shares over usable captions
    true_ci: np.ndarray | None  # (k, 2)
    countries: dict[str, float]  # alpha2 → corrected share of captions that name a country
    countries_ci: dict[str, tuple[float, float]] | None
    uncalibrated: list[str]  # classes with no true caption in the sample (M row taken as identity)


class NotIdentified(ValueError):
    """The sample's misclassification matrix cannot separate a class from the others."""


def region_class(country: str | None, region_of: Mapping[str, str]) -> str:
    return NONE if not country else region_of.get(country) or UNKNOWN


def confusion(true: Sequence[str], resolved: Sequence[str], classes: Sequence[str],
              weights: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """(Weighted) counts ``C[i, j]``: sample captions of true class i resolved to class j."""
    index = {c: i for i, c in enumerate(classes)}
    out = np.zeros((len(classes), len(classes)))
    np.add.at(out, ([index[t] for t in true], [index[r] for r in resolved]), 1.0 if weights is None else weights)
    return out


def check_identified(m: np.ndarray, classes: Sequence[str], calibrated: np.ndarray) -> None:
    """Raise ``NotIdentified`` naming the first calibrated class the resolver does not separate."""
    for i, cls in enumerate(classes):
        if not calibrated[i]:
            continue
        into = m[:, i].copy()  # P(resolved i | true j) for every j
        into[i] = -1.0
        j = int(np.argmax(into))
        if m[i, i] <= into[j]:
            raise NotIdentified(f"the resolver places {m[i, i]:.1%} of the sample's '{cls}' captions in '{cls}', no more "
                                f"than {m[j, i]:.1%} of its '{classes[j]}' captions: the correction cannot separate "
                                f"'{cls}' (more labelled '{cls}' captions, or a resolver with better recall there)")


def misclassification_matrix(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row-normalised M, mask of rows with no sample caption, which are set to the identity)."""
    totals = counts.sum(axis=1)
    empty = totals == 0
    m = np.where(empty[:, None], np.eye(len(counts)), counts / np.where(empty, 1.0, totals)[:, None])
    return m, empty


def solve_shares(m: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """The shares ``p`` on the simplex that minimise ``‖Mᵀp − q‖²``."""
    from scipy.optimize import nnls  # half a second to import: a geo shard worker loads this module and never solves

    k = len(observed)
    a = np.vstack([m.T, np.full((1, k), _SUM_WEIGHT)])
    b = np.concatenate([observed, [_SUM_WEIGHT]])
    p, _ = nnls(a, b)
    return p / p.sum()


def correct(sample_true: Sequence[str | None], sample_resolved: Sequence[str | None], corpus_countries: Mapping[str, int],
            unresolved: int, region_of: Mapping[str, str], replicates: int = 0, level: float = 0.95,
            seed: int = 0, sample_weights: Sequence[float] | None = None) -> Corrected:
    """Corrected region and country shares of one corpus.

    ``sample_true`` / ``sample_resolved``: alpha2 or None per calibration caption; ``sample_weights``:
    inverse inclusion probabilities (None: all 1); ``corpus_countries``: resolved records per country;
    ``unresolved``: usable records the resolver placed nowhere. Raises ``NotIdentified``.
    """
    t = [region_class(c, region_of) for c in sample_true]
    r = [region_class(c, region_of) for c in sample_resolved]
    corpus_classes = [region_class(c, region_of) for c in corpus_countries]
    classes = sorted((set(t) | set(r) | set(corpus_classes)) - {NONE}) + [NONE]
    w = np.ones(len(t)) if sample_weights is None else np.asarray(sample_weights, dtype=np.float64)
    counts = confusion(t, r, classes, w)
    m, empty = misclassification_matrix(counts)
    check_identified(m, classes, ~empty)

    codes = list(corpus_countries)
    country_counts = np.array([corpus_countries[c] for c in codes] + [unresolved], dtype=np.float64)
    # class of each corpus count column (countries, then the unresolved column)
    col_class = np.array([classes.index(c) for c in corpus_classes] + [len(classes) - 1])
    observed = _class_shares(country_counts, col_class, len(classes))
    true = solve_shares(m, observed)
    countries = _country_shares(true, country_counts, col_class)

    true_ci = countries_ci = None
    if replicates:
        rng = np.random.default_rng(seed)
        t_idx, r_idx = (np.array([classes.index(c) for c in x]) for x in (t, r))
        draws = rng.multinomial(int(country_counts.sum()), country_counts / country_counts.sum(), size=replicates)
        boot_true = np.empty((replicates, len(classes)))
        boot_countries = np.empty((replicates, len(codes)))
        for b in range(replicates):
            pick = rng.integers(0, len(t_idx), len(t_idx))
            cb = np.zeros_like(counts)
            np.add.at(cb, (t_idx[pick], r_idx[pick]), w[pick])
            mb, _ = misclassification_matrix(cb)
            pb = solve_shares(mb, _class_shares(draws[b], col_class, len(classes)))
            boot_true[b] = pb
            boot_countries[b] = _country_shares(pb, draws[b].astype(np.float64), col_class)
        tail = (1 - level) / 2 * 100
        true_ci = np.percentile(boot_true, [tail, 100 - tail], axis=0).T
        lo, hi = np.percentile(boot_countries, [tail, 100 - tail], axis=0)
        countries_ci = {c: (float(a), float(b)) for c, a, b in zip(codes, lo, hi)}
    return Corrected(classes, observed, true, true_ci, dict(zip(codes, countries.tolist())), countries_ci,
                     [c for c, e in zip(classes, empty) if e])


def _class_shares(counts: np.ndarray, col_class: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(col_class, weights=counts, minlength=k) / counts.sum()


def _country_shares(true: np.ndarray, counts: np.ndarray, col_class: np.ndarray) -> np.ndarray:
    """Each country's corrected share of captions that name a country: its region's corrected share
    (renormalised without ``none``) split in the proportions the resolver found in that region."""
    placed = 1.0 - true[-1]
    per_class = np.bincount(col_class, weights=counts, minlength=len(true))
    country_counts, country_class = counts[:-1], col_class[:-1]
    within = country_counts / np.maximum(per_class[country_class], 1e-300)
    return true[country_class] / placed * within if placed > 0 else np.zeros_like(within)


def recall_precision(sample_true: Sequence[str | None], sample_resolved: Sequence[str | None],
                     region_of: Mapping[str, str], sample_weights: Sequence[float] | None = None) -> list[dict]:
    """The resolver on the sample, per region of the true (recall) or resolved (precision) country:
    recall = captions placed in the right country / captions whose true country is in the region;
    precision = captions placed in the right country / captions resolved to a country in the region.
    The ``none`` row: captions with no country that the resolver left unresolved (its recall), and
    unresolved captions that indeed name none (its precision). Counts are captions; the rates are
    weighted by ``sample_weights`` (None: all 1), so they describe the population sampled."""
    t = np.array([region_class(c, region_of) for c in sample_true], dtype=object)
    r = np.array([region_class(c, region_of) for c in sample_resolved], dtype=object)
    w = np.ones(len(t)) if sample_weights is None else np.asarray(sample_weights, dtype=np.float64)
    right = np.array([a == b for a, b in zip(sample_true, sample_resolved)], dtype=bool)
    rows = []
    for cls in sorted((set(t) | set(r)) - {NONE}) + [NONE]:
        is_t, is_r = t == cls, r == cls
        rows.append({"region": cls, "true_captions": int(is_t.sum()), "resolved_captions": int(is_r.sum()),
                     "recall": float(w[is_t & right].sum() / w[is_t].sum()) if is_t.any() else None,
                     "precision": float(w[is_r & right].sum() / w[is_r].sum()) if is_r.any() else None})
    return rows
