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

Assumptions the numbers rest on: the sample's captions of each true class are like the corpus's
captions of that class (transportability of M; the sample may over-represent a class, as M is
conditional on the true class), and the corpus is resolved with the same lexicon and evidence floor.
Ray-free and I/O-free: the job passes the sample's labels and resolved countries, and the counts.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

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


def region_class(country: str | None, region_of: Mapping[str, str]) -> str:
    return NONE if not country else region_of.get(country) or UNKNOWN


def confusion(true: Sequence[str], resolved: Sequence[str], classes: Sequence[str]) -> np.ndarray:
    """Counts ``C[i, j]``: sample captions of true class i resolved to class j."""
    index = {c: i for i, c in enumerate(classes)}
    out = np.zeros((len(classes), len(classes)), dtype=np.int64)
    np.add.at(out, ([index[t] for t in true], [index[r] for r in resolved]), 1)
    return out


def misclassification_matrix(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row-normalised M, mask of rows with no sample caption, which are set to the identity)."""
    totals = counts.sum(axis=1)
    empty = totals == 0
    m = np.where(empty[:, None], np.eye(len(counts)), counts / np.maximum(totals, 1)[:, None])
    return m, empty


def solve_shares(m: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """The shares ``p`` on the simplex that minimise ``‖Mᵀp − q‖²``."""
    k = len(observed)
    a = np.vstack([m.T, np.full((1, k), _SUM_WEIGHT)])
    b = np.concatenate([observed, [_SUM_WEIGHT]])
    p, _ = nnls(a, b)
    return p / p.sum()


def correct(sample_true: Sequence[str | None], sample_resolved: Sequence[str | None], corpus_countries: Mapping[str, int],
            unresolved: int, region_of: Mapping[str, str], replicates: int = 0, level: float = 0.95,
            seed: int = 0) -> Corrected:
    """Corrected region and country shares of one corpus.

    ``sample_true`` / ``sample_resolved``: alpha2 or None per calibration caption; ``corpus_countries``:
    resolved records per country; ``unresolved``: usable records the resolver placed nowhere.
    """
    t = [region_class(c, region_of) for c in sample_true]
    r = [region_class(c, region_of) for c in sample_resolved]
    corpus_classes = [region_class(c, region_of) for c in corpus_countries]
    classes = sorted((set(t) | set(r) | set(corpus_classes)) - {NONE}) + [NONE]
    counts = confusion(t, r, classes)
    m, empty = misclassification_matrix(counts)

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
            np.add.at(cb, (t_idx[pick], r_idx[pick]), 1)
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
                     region_of: Mapping[str, str]) -> list[dict]:
    """The resolver on the sample, per region of the true (recall) or resolved (precision) country:
    recall = captions placed in the right country / captions whose true country is in the region;
    precision = captions placed in the right country / captions resolved to a country in the region.
    The ``none`` row: captions with no country that the resolver left unresolved (its recall), and
    unresolved captions that indeed name none (its precision)."""
    t = [region_class(c, region_of) for c in sample_true]
    r = [region_class(c, region_of) for c in sample_resolved]
    right = [a == b for a, b in zip(sample_true, sample_resolved)]
    rows = []
    for cls in sorted((set(t) | set(r)) - {NONE}) + [NONE]:
        n_true = sum(1 for x in t if x == cls)
        n_resolved = sum(1 for x in r if x == cls)
        hit_true = sum(1 for x, ok in zip(t, right) if x == cls and ok)
        hit_resolved = sum(1 for x, ok in zip(r, right) if x == cls and ok)
        rows.append({"region": cls, "true_captions": n_true, "resolved_captions": n_resolved,
                     "recall": hit_true / n_true if n_true else None,
                     "precision": hit_resolved / n_resolved if n_resolved else None})
    return rows
