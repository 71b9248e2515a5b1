"""Prediction files: a model's 0/1 outputs on the coreset, one row per (id, run).

CSV, Parquet or JSONL (also ``.gz``), one or several files per predictor (sharded outputs are
concatenated). Without a run column each id has one prediction; with one (a seed, a sample index),
each run becomes a column and every run must cover the same ids; a predictor whose files lack the run
column has one run. Missing predictions (an LLM that
returned nothing or output that did not parse) are an error naming the file and column unless the
caller counts them as negative, in which case the count is kept so the report can say so.

Input contract of the diagnostics (one source of truth per fact, so no two columns can disagree):

- ``prediction``: the parsed verdict, 0/1; null (empty CSV cell, JSON null) means no verdict was
  parsed. A pipeline that writes a default 0 for failed parses hides its failures as negatives.
- ``response`` (optional): the raw model output. Null, missing or blank means nothing came back
  ("no response"); text with a null prediction is "unparsable" output.
- ``group`` (optional): the group (typology) the model names for a positive verdict; blank or
  null means it named none.

Optional columns (run, group, response) must be in every file of a predictor or in none; a
predictor without one skips the diagnostics that need it, and ``read_all_predictions`` rejects a
column found in no file at all (a misspelt flag, not a predictor without it).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from audit.coreset.validate import binary_predictions
from connectors.coreset.targets import (
    EXTENSIONS,
    TargetError,
    detect_format,
    read_columns,
    schema_names,
)
from connectors.io.fs import FileRef, describe, expand, fingerprint

Missing = Literal["error", "negative"]
OPTIONAL = ("run", "group", "response")


@dataclass(frozen=True)
class PredictionColumns:
    id: str = "id"
    prediction: str = "prediction"
    run: str | None = None
    group: str | None = None
    response: str | None = None

    def names(self) -> list[str]:
        return list(dict.fromkeys(c for c in (self.id, self.prediction, self.run, self.group, self.response) if c))

    def values(self) -> list[str]:
        """The per-(id, run) value columns, pivoted to one column per run."""
        return list(dict.fromkeys(c for c in (self.prediction, self.group, self.response) if c))


@dataclass(frozen=True, eq=False)
class Predictions:
    """One predictor: ids (m,), 0/1 values (m, k) for k runs, run names, missing count, files.

    ``parsed`` (m, k) is False where the file held no verdict (counted negative in ``values``);
    ``groups`` and ``responses`` (m, k) are None when the predictor's files lack those columns.
    """

    name: str
    ids: np.ndarray
    values: np.ndarray
    runs: tuple[str, ...]
    missing_as_negative: int
    source: str
    files: list[FileRef]
    parsed: np.ndarray
    groups: np.ndarray | None = None
    responses: np.ndarray | None = None

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.files)


def _as_frame(table: pa.Table, columns: PredictionColumns) -> pd.DataFrame:
    frame = pd.DataFrame({c: table.column(c).to_numpy(zero_copy_only=False) for c in columns.names()})
    if columns.run:
        frame[columns.run] = frame[columns.run].astype(str)
    return frame


def _wide(frame: pd.DataFrame, columns: PredictionColumns, source: str) -> tuple[np.ndarray, dict[str, np.ndarray], tuple[str, ...]]:
    """(ids, {value column: (m, k) objects}, run names) with every run covering the same ids exactly once."""
    if frame[columns.id].isna().any():
        raise TargetError(f"{source}: column {columns.id!r} has {int(frame[columns.id].isna().sum())} missing id(s)")
    if not columns.run:
        return frame[columns.id].to_numpy(), {c: frame[[c]].to_numpy(object) for c in columns.values()}, (columns.prediction,)
    dup = frame.duplicated([columns.id, columns.run])
    if dup.any():
        first = frame[dup].iloc[0]
        raise TargetError(
            f"{source}: columns {columns.id!r} and {columns.run!r} repeat {int(dup.sum())} (id, run) pair(s), "
            f"e.g. ({first[columns.id]!r}, {first[columns.run]!r}); expected one prediction per id and run"
        )
    wide = {c: frame.pivot(index=columns.id, columns=columns.run, values=c) for c in columns.values()}
    first = wide[columns.prediction]
    counts = frame.groupby(columns.run)[columns.id].size()
    short = counts[counts < len(first)]
    if len(short):
        raise TargetError(
            f"{source}: column {columns.run!r}: run(s) {short.index.tolist()} cover {short.tolist()} of the "
            f"{len(first)} ids the other runs cover; expected every run on the same ids"
        )
    runs = tuple(str(r) for r in first.columns)
    return first.index.to_numpy(), {c: w.to_numpy(object) for c, w in wide.items()}, runs


def _present_columns(name: str, files: list[FileRef], columns: PredictionColumns) -> PredictionColumns:
    """Drop the optional columns none of the files has; one that only some files have is an error."""
    available = [set(schema_names(ref)) for ref in files]
    for field in OPTIONAL:
        column = getattr(columns, field)
        if not column:
            continue
        has = [column in names for names in available]
        if any(has) and not all(has):
            lacking = [f.url for f, h in zip(files, has) if not h]
            raise TargetError(f"{lacking[0]}: column {column!r} not found, but other files of predictor {name!r} "
                              "have it; expected it in every file or in none")
        if not any(has):
            dropped: dict[str, Any] = {field: None}
            columns = replace(columns, **dropped)
    return columns


def _named_groups(values: np.ndarray) -> np.ndarray:
    """Predicted groups with surrounding spaces removed; blank or null means none named (None)."""
    def one(v: object) -> object:
        if isinstance(v, str):
            return v.strip() or None
        return None if pd.isna(v) else v

    return np.vectorize(one, otypes=[object])(values) if values.size else values


def read_predictions(
    name: str, paths: list[str], columns: PredictionColumns, missing: Missing = "error"
) -> Predictions:
    """Read one predictor's files, check ids, runs and values; ids are aligned to a design later."""
    files = expand(list(paths), tuple(e for exts in EXTENSIONS.values() for e in exts))
    source = describe(files)
    columns = _present_columns(name, files, columns)
    frames = [_as_frame(read_columns(ref, detect_format(ref.url), columns.names(), newlines_in_values=True), columns)
              for ref in files]
    frame = pd.concat(frames, ignore_index=True)
    ids, wide, runs = _wide(frame, columns, source)
    raw = wide[columns.prediction]
    absent = pd.isna(raw)
    n_missing = int(absent.sum())
    if n_missing and missing == "negative":
        raw = np.where(absent, 0, raw)
    values = np.column_stack(
        [binary_predictions(raw[:, j], columns.prediction if not columns.run else f"{columns.prediction} (run {r})", source)
         for j, r in enumerate(runs)]
    )
    return Predictions(
        name=name, ids=ids, values=values, runs=runs, missing_as_negative=n_missing if missing == "negative" else 0,
        source=source, files=files, parsed=~absent,
        groups=_named_groups(wide[columns.group]) if columns.group else None,
        responses=wide[columns.response] if columns.response else None,
    )


def read_all_predictions(predictors: list[tuple[str, list[str]]], columns: PredictionColumns,
                         missing: Missing = "error") -> list[Predictions]:
    """Every predictor's files; an optional group or response column that no file has is an error."""
    out = [read_predictions(name, paths, columns, missing) for name, paths in predictors]
    for flag, column, attr in (("--group-column", columns.group, "groups"), ("--response-column", columns.response, "responses")):
        if column and all(getattr(p, attr) is None for p in out):
            raise TargetError(f"{', '.join(p.source for p in out)}: column {column!r} ({flag}) not found in any "
                              "prediction file")
    return out
