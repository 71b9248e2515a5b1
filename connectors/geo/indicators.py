"""World Bank indicators, one value per country and indicator (the latest year, kept with it).

The shipped table (``connectors/data/worldbank/indicators.csv``, CC BY 4.0, derived by
``scripts/derive/shipped_data.py`` from the World Bank WDI files listed in its README) is the
default; a user can pass their own CSV in the same long layout: ``alpha3, indicator, year, value``.
"""
from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pandas as pd

COLUMNS = ("alpha3", "indicator", "year", "value")


def shipped_path() -> Path:
    return Path(str(resources.files("connectors") / "data" / "worldbank" / "indicators.csv"))


def read_indicators(path: str | Path | None = None) -> tuple[pd.DataFrame, str]:
    """(wide table indexed by alpha3 with ``<indicator>`` and ``<indicator>_year`` columns, sha256)."""
    path = Path(path) if path else shipped_path()
    raw = path.read_bytes()
    df = pd.read_csv(path)
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: indicator table lacks column(s) {missing}; expected {list(COLUMNS)}")
    bad = df[pd.to_numeric(df["value"], errors="coerce").isna() | (pd.to_numeric(df["value"], errors="coerce") < 0)]
    if len(bad):
        row = int(bad.index[0]) + 2
        raise ValueError(f"{path}:{row}: field value: expected a non-negative number, got {bad.iloc[0]['value']!r}")
    dup = df.duplicated(["alpha3", "indicator"])
    if dup.any():
        row = int(df.index[dup][0]) + 2
        raise ValueError(f"{path}:{row}: duplicate (alpha3, indicator) {tuple(df.loc[dup].iloc[0][['alpha3', 'indicator']])}")
    values = df.pivot(index="alpha3", columns="indicator", values="value")
    years = df.pivot(index="alpha3", columns="indicator", values="year").add_suffix("_year")
    return values.join(years), hashlib.sha256(raw).hexdigest()
