"""Fleiss' and Cohen's kappa against hand computation and statsmodels."""

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from audit.stats.agreement import (
    cohen_kappa,
    fleiss_kappa,
    pairwise_cohen_kappa,
    rating_counts,
)

# Fleiss (1971)-style worked example: 10 subjects, 14 raters, 5 categories; kappa = 0.210
TABLE = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def test_fleiss_kappa_worked_example_and_statsmodels():
    assert fleiss_kappa(TABLE) == pytest.approx(0.20993, abs=5e-5)
    assert fleiss_kappa(TABLE) == pytest.approx(sm_fleiss(TABLE, method="fleiss"), abs=1e-12)


def test_fleiss_from_ratings_matches_statsmodels_on_random_data():
    rng = np.random.default_rng(0)
    ratings = pd.DataFrame(rng.choice(["ok", "bad", "unsure"], size=(40, 4), p=[0.6, 0.3, 0.1]))
    table, cats = rating_counts(ratings)
    assert cats == ["bad", "ok", "unsure"] and np.all(table.sum(axis=1) == 4)
    assert fleiss_kappa(table) == pytest.approx(sm_fleiss(table, method="fleiss"), abs=1e-12)


def test_cohen_kappa_by_hand_and_statsmodels():
    a = np.array(["y", "y", "n", "n", "y"])
    b = np.array(["y", "n", "n", "n", "y"])
    # p_o = 0.8, p_e = 0.6*0.4 + 0.4*0.6 = 0.48
    assert cohen_kappa(a, b) == pytest.approx((0.8 - 0.48) / 0.52)
    table = pd.crosstab(a, b).to_numpy()
    assert cohen_kappa(a, b) == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)


def test_pairwise_and_degenerate_cases():
    ratings = pd.DataFrame({"j1": [1, 0, 1, 1], "j2": [1, 0, 0, 1], "j3": [1, 0, 1, 1]})
    t = pairwise_cohen_kappa(ratings).set_index(["rater_a", "rater_b"])
    assert len(t) == 3 and t.loc[("j1", "j3"), "kappa"] == 1.0
    assert np.isnan(cohen_kappa(np.ones(3), np.ones(3)))  # one category only: undefined
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa(np.array([[2, 0], [1, 2]]))


def test_kappa_by_hand():
    # po = 3/4; rater a: yes 1/2, no 1/2; rater b: yes 3/4, no 1/4; pe = 1/2*3/4 + 1/2*1/4 = 1/2
    assert cohen_kappa(["y", "y", "n", "n"], ["y", "y", "y", "n"]) == pytest.approx(0.5)
    assert cohen_kappa([0, 1, 2], [0, 1, 2]) == 1.0
    assert cohen_kappa([0, 1], [1, 0]) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))  # one shared label: undefined
    with pytest.raises(ValueError, match="equal-length"):
        cohen_kappa([1], [1, 2])
    with pytest.raises(ValueError, match="non-empty"):
        cohen_kappa([], [])
    with pytest.raises(ValueError, match="missing"):
        cohen_kappa([1, None], [1, 2])
