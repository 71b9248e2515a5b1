"""Numbers for JSON: undefined values (NaN, inf) become ``None``, numpy scalars plain Python numbers.

Why one helper: a share with no signals or a kappa with one shared label is undefined, not zero;
JSON has no NaN, and Python's ``json`` would write a bare ``NaN`` that strict readers (browsers,
jq) reject. Every summary, analysis and report table goes through ``finite``/``records``.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd


def finite(value: Any) -> Any:
    """``None`` for NaN/inf, plain Python numbers for numpy scalars, anything else unchanged."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows of a DataFrame as JSON-ready dicts."""
    return [{k: finite(v) for k, v in row.items()} for row in frame.to_dict("records")]
