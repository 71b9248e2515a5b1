"""Bad input fails before any work, naming the file and the column."""

import numpy as np
import pandas as pd
import pytest

from audit.coreset.design import DesignConfig, build_design
from audit.coreset.validate import (
    binary_labels,
    binary_predictions,
    finite_scores,
    require_budget,
    require_columns,
    require_positives,
)

SRC = "targets.parquet"


def test_missing_labels():
    with pytest.raises(ValueError, match=r"targets.parquet: column 'label' has 2 missing value\(s\)"):
        binary_labels(np.array([1, np.nan, 0, np.nan]), "label", SRC)
    with pytest.raises(ValueError, match="missing"):
        binary_labels(np.array([1, None, 0], dtype=object), "label", SRC)


def test_non_binary_labels():
    with pytest.raises(ValueError, match=r"targets.parquet: column 'is_laundering' is not binary.*found 2"):
        binary_labels(np.array([0, 1, 2]), "is_laundering", SRC)
    with pytest.raises(ValueError, match="not binary.*'yes'"):
        binary_labels(np.array(["yes", "no"], dtype=object), "label", SRC)
    assert binary_labels(np.array([True, False]), "label", SRC).tolist() == [True, False]
    assert binary_labels(np.array([1.0, 0.0]), "label", SRC).tolist() == [True, False]


def test_nan_and_out_of_range_scores():
    with pytest.raises(ValueError, match=r"targets.parquet: column 'p_lgb' has 1 NaN score"):
        finite_scores([0.1, np.nan], "p_lgb", SRC)
    with pytest.raises(ValueError, match=r"column 'p_lgb' has 1 score\(s\) outside \[0, 1\]"):
        finite_scores([0.1, 1.5], "p_lgb", SRC)


def test_no_positives():
    with pytest.raises(ValueError, match="targets.parquet: column 'label' has no positive rows"):
        require_positives(np.zeros(5, bool), "label", SRC)


def test_budget_larger_than_negatives():
    with pytest.raises(ValueError, match="budget of 11 rows is larger than the 10 negatives"):
        require_budget(11, 10, SRC)


def test_missing_columns():
    with pytest.raises(ValueError, match=r"targets.parquet: missing column\(s\) \['score'\]"):
        require_columns(pd.DataFrame({"id": [1], "label": [0]}), ["id", "label", "score"], SRC)


def test_predictions_must_be_decided():
    with pytest.raises(ValueError, match="run_3.jsonl: column 'pred' has 1 missing value"):
        binary_predictions(np.array([1, None], dtype=object), "pred", "run_3.jsonl")


def test_build_design_reports_bad_tables_by_source():
    ids = np.arange(10)
    labels = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    scores = np.linspace(0, 1, 10)
    config = DesignConfig(tau=0.5, seed=0)
    with pytest.raises(ValueError, match="t.parquet: column 'label' has no positive rows"):
        build_design(ids, np.zeros(10, int), scores, config, source="t.parquet")
    with pytest.raises(ValueError, match="t.parquet: column 'score' has 1 NaN"):
        build_design(ids, labels, np.where(ids == 3, np.nan, scores), config, source="t.parquet")
    with pytest.raises(ValueError, match="t.parquet: negative budget of 18 rows is larger than the 9 negatives"):
        build_design(ids, labels, scores, DesignConfig(tau=0.5, budget_multiplier=18, seed=0), source="t.parquet")
    with pytest.raises(ValueError, match="t.parquet: column 'id' must hold one unique id"):
        build_design(np.zeros(10, int), labels, scores, config, source="t.parquet")
