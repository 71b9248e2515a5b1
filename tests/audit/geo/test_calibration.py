"""The misclassification-corrected shares: hand-solved systems, and recovery of known shares in simulation."""
from __future__ import annotations

import numpy as np
import pytest

from audit.geo.calibration import (
    NONE,
    NotIdentified,
    confusion,
    correct,
    misclassification_matrix,
    recall_precision,
    solve_shares,
)

REGION = {"FR": "Europe", "DE": "Europe", "JP": "Asia", "BR": "Americas"}


def test_two_classes_is_rogan_gladen():
    """Sensitivity 0.8, specificity 0.9, 30 % observed: p = (0.3 − 0.1) / (0.8 + 0.9 − 1) = 2/7."""
    true = ["FR"] * 10 + [None] * 10
    resolved = ["FR"] * 8 + [None] * 2 + ["FR"] + [None] * 9
    out = correct(true, resolved, {"FR": 30}, unresolved=70, region_of=REGION)
    assert out.classes == ["Europe", NONE]
    assert out.observed == pytest.approx([0.3, 0.7])
    assert out.true == pytest.approx([2 / 7, 5 / 7], abs=1e-6)
    # every placed caption is French: its share of captions that name a country stays 1
    assert out.countries == pytest.approx({"FR": 1.0})
    assert out.true_ci is None and out.uncalibrated == []


def test_weighted_sample_counts_each_caption_by_its_inverse_inclusion_probability():
    """True French: 2 found (weight 1), 1 missed (weight 2) → sensitivity 2/4 = .5; true none: 1 false
    positive (weight 1), 1 left (weight 9) → specificity .9; observed 30 % → p = (.3 − .1) / (.5 + .9 − 1) = .5."""
    true, resolved = ["FR", "FR", "FR", None, None], ["FR", "FR", None, "FR", None]
    out = correct(true, resolved, {"FR": 30}, 70, REGION, sample_weights=[1, 1, 2, 1, 9])
    assert out.true == pytest.approx([0.5, 0.5], abs=1e-6)
    rows = {r["region"]: r for r in recall_precision(true, resolved, REGION, [1, 1, 2, 1, 9])}
    assert rows["Europe"]["recall"] == pytest.approx(0.5) and rows["Europe"]["precision"] == pytest.approx(2 / 3)
    assert rows["Europe"]["true_captions"] == 3  # counts stay captions


def test_a_class_the_resolver_does_not_separate_is_refused():
    """Recall 0 in Europe but 10 % of no-country captions placed there: sensitivity + specificity < 1."""
    true = ["FR"] * 2 + [None] * 10
    resolved = [None] * 2 + ["FR"] + [None] * 9
    with pytest.raises(NotIdentified, match="0.0% of the sample's 'Europe' captions in 'Europe', no more than 10.0% of its 'none'"):
        correct(true, resolved, {"FR": 5}, 95, REGION)


def test_below_the_false_positive_rate_is_clamped_to_zero():
    """Observed 5 % < the 10 % false-positive rate: the inverse is negative (−1/14); the simplex solution is 0."""
    m = np.array([[0.8, 0.2], [0.1, 0.9]])
    assert solve_shares(m, np.array([0.05, 0.95])) == pytest.approx([0.0, 1.0], abs=1e-6)


def test_three_classes_solved_by_hand():
    """Mᵀp = q with M = [[.8 .1 .1] [0 .5 .5] [0 0 1]], q = (.4, .2, .4):
    .8 p_A = .4 → p_A = .5; .1·.5 + .5 p_B = .2 → p_B = .3; p_none = .2 (check: .05 + .15 + .2 = .4)."""
    m = np.array([[0.8, 0.1, 0.1], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]])
    assert solve_shares(m, np.array([0.4, 0.2, 0.4])) == pytest.approx([0.5, 0.3, 0.2], abs=1e-6)


def test_countries_split_their_region_and_uncalibrated_regions_are_named():
    # Europe: recall 1/2 (half missed), no false positives; Asia has no true caption in the sample
    true = ["FR", None, "DE", None]
    resolved = ["FR", None, None, None]
    out = correct(true, resolved, {"FR": 30, "DE": 10, "JP": 10}, unresolved=50, region_of=REGION)
    assert out.classes == ["Asia", "Europe", NONE] and out.uncalibrated == ["Asia"]
    # q = (.1, .4, .5); M: Asia identity, Europe (0, .5, .5), none (0, 0, 1) → p = (.1, .8, .1)
    assert out.true == pytest.approx([0.1, 0.8, 0.1], abs=1e-6)
    assert out.countries == pytest.approx({"FR": 0.8 / 0.9 * 0.75, "DE": 0.8 / 0.9 * 0.25, "JP": 0.1 / 0.9}, abs=1e-6)


def test_confusion_and_rows_without_sample_are_identity():
    counts = confusion(["a", "a", "b"], ["a", "b", "b"], ["a", "b", "c"])
    assert counts.tolist() == [[1, 1, 0], [0, 1, 0], [0, 0, 0]]
    m, empty = misclassification_matrix(counts)
    assert m.tolist() == [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] and empty.tolist() == [False, False, True]


def test_recall_and_precision_by_region():
    true = ["FR", "FR", "DE", "JP", None, None]
    resolved = ["FR", None, "FR", "JP", "JP", None]
    rows = {r["region"]: r for r in recall_precision(true, resolved, REGION)}
    assert rows["Europe"] == {"region": "Europe", "true_captions": 3, "resolved_captions": 2, "recall": 1 / 3, "precision": 0.5}
    assert rows["Asia"] == {"region": "Asia", "true_captions": 1, "resolved_captions": 2, "recall": 1.0, "precision": 0.5}
    assert rows[NONE] == {"region": NONE, "true_captions": 2, "resolved_captions": 2, "recall": 0.5, "precision": 0.5}


# The simulation: classes (Europe, Asia, Americas, none), known true shares over all captions and a known
# misclassification matrix (rows: true class; columns: resolved class) with the resolver's typical shape:
# high precision, recall well below 1 and unequal across regions.
SIM_TRUE = np.array([0.12, 0.06, 0.04, 0.78])
SIM_M = np.array([[0.70, 0.02, 0.03, 0.25],
                  [0.03, 0.55, 0.02, 0.40],
                  [0.04, 0.01, 0.60, 0.35],
                  [0.010, 0.005, 0.005, 0.98]])
SIM_CLASSES = ["Europe", "Asia", "Americas", NONE]
SIM_COUNTRIES = {"Europe": (["FR", "DE"], [2 / 3, 1 / 3]), "Asia": (["JP"], [1.0]), "Americas": (["BR"], [1.0])}


def _simulate(rng: np.random.Generator, true_class: np.ndarray) -> tuple[list, list]:
    """True and resolved countries of captions of the given true classes, through SIM_M."""
    resolved_class = np.array([rng.choice(4, p=SIM_M[c]) for c in true_class])
    true, resolved = [], []
    for tc, rc in zip(true_class, resolved_class):
        t = None if tc == 3 else rng.choice(*SIM_COUNTRIES[SIM_CLASSES[tc]][:1], p=SIM_COUNTRIES[SIM_CLASSES[tc]][1])
        if rc == 3:
            r = None
        elif rc == tc:
            r = t
        else:
            r = rng.choice(SIM_COUNTRIES[SIM_CLASSES[rc]][0], p=SIM_COUNTRIES[SIM_CLASSES[rc]][1])
        true.append(t)
        resolved.append(r)
    return true, resolved


def test_simulation_recovers_the_true_shares_within_their_intervals():
    rng = np.random.default_rng(20261205)
    # corpus: 20,000 captions drawn from the true shares; only its resolved counts reach the estimator
    _, corpus_resolved = _simulate(rng, rng.choice(4, size=20_000, p=SIM_TRUE))
    counts: dict[str, int] = {}
    for c in corpus_resolved:
        if c is not None:
            counts[c] = counts.get(c, 0) + 1
    unresolved = sum(c is None for c in corpus_resolved)
    # calibration sample: 200 captions of each true class (stratified, as a labeller would enrich places)
    sample_true, sample_resolved = _simulate(rng, np.repeat(np.arange(4), 200))
    out = correct(sample_true, sample_resolved, counts, unresolved, REGION, replicates=300, level=0.95, seed=7)
    order = [out.classes.index(c) for c in SIM_CLASSES]
    est, ci = out.true[order], out.true_ci[order]
    assert np.all((ci[:, 0] <= SIM_TRUE) & (SIM_TRUE <= ci[:, 1])), (est, ci)
    # the correction moves every share toward the truth (the naive observed share of 'none' is 5 points off)
    naive = out.observed[order]
    assert np.all(np.abs(est - SIM_TRUE) < np.abs(naive - SIM_TRUE)) and np.abs(est - SIM_TRUE).max() < 0.02
    # countries: their share of captions that name a country, with intervals covering the truth
    placed = 1 - SIM_TRUE[3]
    want = {"FR": 0.12 * 2 / 3 / placed, "DE": 0.12 / 3 / placed, "JP": 0.06 / placed, "BR": 0.04 / placed}
    for code, share in want.items():
        lo, hi = out.countries_ci[code]
        assert lo <= share <= hi, (code, out.countries[code], (lo, hi), share)
    # deterministic: the same seed gives the same intervals
    again = correct(sample_true, sample_resolved, counts, unresolved, REGION, replicates=300, level=0.95, seed=7)
    assert np.array_equal(again.true_ci, out.true_ci)
