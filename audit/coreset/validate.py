"""Value checks for HT-Coreset inputs, raised before any sampling work starts.

Why a separate module: connectors check schemas (columns and types); these checks concern the
*values* the design depends on: labels that are 0/1 on every row, finite scores, at least one
positive, a budget the negatives can fill, and prediction files that cover the design exactly.
Every message names the source (a file name, or whatever the caller passes as ``source``), the
column, and what was expected, so a failing job points at the row data rather than at a stack.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

_EXAMPLES = 5  # offending values quoted in a message


class CoresetValueError(ValueError):
    """A value an HT-Coreset input breaks a rule with; its message already names the source and the column, so a
    caller passes it on as it is (errors as data: the type says so, not the text)."""


def _examples(values: np.ndarray) -> str:
    shown = [repr(v) for v in np.asarray(values).tolist()[:_EXAMPLES]]
    more = f" (and {len(values) - _EXAMPLES} more)" if len(values) > _EXAMPLES else ""
    return ", ".join(shown) + more


def require_columns(frame: pd.DataFrame, columns: Sequence[str], source: str) -> None:
    """Raise if any of ``columns`` is absent from ``frame``."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise CoresetValueError(
            f"{source}: missing column(s) {missing}; expected {list(columns)}, found {list(frame.columns)}"
        )


def _binary(values: object, column: str, source: str, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise CoresetValueError(f"{source}: column {column!r} must be one-dimensional, got shape {arr.shape}")
    missing = pd.isna(arr)
    if missing.any():
        raise CoresetValueError(
            f"{source}: column {column!r} has {int(missing.sum())} missing value(s); expected {what} 0/1 on every row"
        )
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind in "iuf":
        bad = ~np.isin(arr, (0, 1))
        if bad.any():
            raise CoresetValueError(
                f"{source}: column {column!r} is not binary; expected {what} 0/1, "
                f"found {_examples(np.unique(arr[bad]))}"
            )
        return arr.astype(bool)
    uniques = pd.unique(arr)
    bad_values = [v for v in uniques if isinstance(v, str) or v not in (0, 1)]
    if bad_values:
        raise CoresetValueError(
            f"{source}: column {column!r} is not binary; expected {what} 0/1, "
            f"found {_examples(np.asarray(bad_values, dtype=object))}"
        )
    return arr.astype(bool)


def binary_labels(values: object, column: str = "label", source: str = "targets") -> np.ndarray:
    """Labels as a bool array; missing values and anything but 0/1 (or True/False) raise."""
    return _binary(values, column, source, "a label")


def binary_predictions(values: object, column: str, source: str) -> np.ndarray:
    """Predictions as a bool array.

    A missing prediction (an LLM that returned nothing, or unparsable output) is rejected here on
    purpose: the caller must decide explicitly how such rows count (usually as negative) and record
    that decision, instead of the estimator silently dropping rows and biasing the HT totals.
    """
    return _binary(values, column, source, "a prediction")


def finite_scores(values: object, column: str, source: str) -> np.ndarray:
    """Scorer probabilities as float64; NaN, infinities and values outside [0, 1] raise."""
    arr = np.asarray(values, dtype=np.float64)
    nan = np.isnan(arr)
    if nan.any():
        raise CoresetValueError(
            f"{source}: column {column!r} has {int(nan.sum())} NaN score(s); "
            "expected a probability in [0, 1] on every row"
        )
    out = (arr < 0.0) | (arr > 1.0)
    if out.any():
        raise CoresetValueError(
            f"{source}: column {column!r} has {int(out.sum())} score(s) outside [0, 1], e.g. {_examples(arr[out])}"
        )
    return arr


def require_positives(labels: np.ndarray, column: str, source: str) -> int:
    """Return the positive count; a table with none cannot anchor a positive census."""
    return require_positive_count(int(np.count_nonzero(labels)), column, source)


def require_positive_count(n_pos: int, column: str, source: str) -> int:
    """``require_positives`` for a count merged over blocks (a distributed build never holds the labels)."""
    if n_pos == 0:
        raise CoresetValueError(
            f"{source}: column {column!r} has no positive rows; the design keeps every positive "
            "and sizes the negative budget from their count, so at least one is required"
        )
    return n_pos


def require_budget(budget: int, n_negatives: int, source: str) -> None:
    """A negative budget must be positive and no larger than the negative population."""
    if budget < 1:
        raise CoresetValueError(f"{source}: negative budget is {budget}; expected at least 1 row")
    if budget > n_negatives:
        raise CoresetValueError(
            f"{source}: negative budget of {budget} rows is larger than the {n_negatives} "
            "negatives in the table; lower the budget multiplier or evaluate the full table"
        )


def align_predictions(
    design_ids: object,
    prediction_ids: object,
    values: np.ndarray,
    id_column: str,
    source: str,
) -> np.ndarray:
    """Reorder prediction rows to the design order, checking the ids match one to one.

    ``values`` has one row per prediction id (any trailing shape, e.g. runs). Duplicate ids, design
    ids without a prediction and prediction ids outside the design all raise: a prediction file that
    covers the design only partly would bias every HT total, and extra ids mean the wrong file.
    """
    pred_index = pd.Index(np.asarray(prediction_ids))
    design_index = pd.Index(np.asarray(design_ids))
    values = np.asarray(values)
    if len(values) != len(pred_index):
        raise CoresetValueError(f"{source}: {len(values)} prediction rows but {len(pred_index)} values in {id_column!r}")
    dup = pred_index.duplicated()
    if dup.any():
        raise CoresetValueError(
            f"{source}: column {id_column!r} repeats {int(dup.sum())} id(s), "
            f"e.g. {_examples(np.asarray(pred_index[dup]))}; expected one prediction per design row"
        )
    position = pred_index.get_indexer(design_index)
    absent = position < 0
    if absent.any():
        raise CoresetValueError(
            f"{source}: column {id_column!r} lacks {int(absent.sum())} of the "
            f"{len(design_index)} design id(s), e.g. {_examples(np.asarray(design_index[absent]))}; "
            "expected a prediction for every design row"
        )
    extra = ~pred_index.isin(design_index)
    if extra.any():
        raise CoresetValueError(
            f"{source}: column {id_column!r} has {int(extra.sum())} id(s) not in the design, "
            f"e.g. {_examples(np.asarray(pred_index[extra]))}; expected exactly the design ids"
        )
    return values[position]
