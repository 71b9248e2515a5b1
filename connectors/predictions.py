"""Prediction files: a model's 0/1 outputs on the coreset, one row per (id, run).

CSV, Parquet or JSONL (also ``.gz``), one or several files per predictor (sharded outputs are
concatenated). Without a run column each id has one prediction; with one (a seed, a sample index),
each run becomes a column and every run must cover the same ids; a predictor whose files lack the run
column has one run. Missing predictions (an LLM that
returned nothing or output that did not parse) are an error naming the file and column unless the
caller counts them as negative, in which case the count is kept so the report can say so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from audit.sampling.validate import binary_predictions
from connectors.fs import FileRef, expand, fingerprint
from connectors.targets import (
    EXTENSIONS,
    TargetError,
    detect_format,
    read_columns,
    schema_names,
)

Missing = Literal["error", "negative"]


@dataclass(frozen=True)
class PredictionColumns:
    id: str = "id"
    prediction: str = "prediction"
    run: str | None = None

    def names(self) -> list[str]:
        return [c for c in (self.id, self.prediction, self.run) if c]


@dataclass(frozen=True, eq=False)
class Predictions:
    """One predictor: ids (m,), 0/1 values (m, k) for k runs, run names, missing count, files."""

    name: str
    ids: np.ndarray
    values: np.ndarray
    runs: tuple[str, ...]
    missing_as_negative: int
    source: str
    files: list[FileRef]

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.files)


def _source(files: list[FileRef]) -> str:
    return files[0].url if len(files) == 1 else f"{files[0].url} (+{len(files) - 1} more files)"


def _as_frame(table: pa.Table, columns: PredictionColumns) -> pd.DataFrame:
    frame = pd.DataFrame({c: table.column(c).to_numpy(zero_copy_only=False) for c in columns.names()})
    if columns.run:
        frame[columns.run] = frame[columns.run].astype(str)
    return frame


def _wide(frame: pd.DataFrame, columns: PredictionColumns, source: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """(ids, values (m, k) as objects, run names) with every run covering the same ids exactly once."""
    if frame[columns.id].isna().any():
        raise TargetError(f"{source}: column {columns.id!r} has {int(frame[columns.id].isna().sum())} missing id(s)")
    if not columns.run:
        return frame[columns.id].to_numpy(), frame[[columns.prediction]].to_numpy(object), (columns.prediction,)
    dup = frame.duplicated([columns.id, columns.run])
    if dup.any():
        first = frame[dup].iloc[0]
        raise TargetError(
            f"{source}: columns {columns.id!r} and {columns.run!r} repeat {int(dup.sum())} (id, run) pair(s), "
            f"e.g. ({first[columns.id]!r}, {first[columns.run]!r}); expected one prediction per id and run"
        )
    wide = frame.pivot(index=columns.id, columns=columns.run, values=columns.prediction)
    counts = frame.groupby(columns.run)[columns.id].size()
    short = counts[counts < len(wide)]
    if len(short):
        raise TargetError(
            f"{source}: column {columns.run!r}: run(s) {short.index.tolist()} cover {short.tolist()} of the "
            f"{len(wide)} ids the other runs cover; expected every run on the same ids"
        )
    runs = tuple(str(r) for r in wide.columns)
    return wide.index.to_numpy(), wide.to_numpy(object), runs


def read_predictions(
    name: str, paths: list[str], columns: PredictionColumns, missing: Missing = "error"
) -> Predictions:
    """Read one predictor's files, check ids, runs and values; ids are aligned to a design later."""
    files = expand(list(paths), tuple(e for exts in EXTENSIONS.values() for e in exts))
    source = _source(files)
    if columns.run:
        has_run = [columns.run in schema_names(ref) for ref in files]
        if any(has_run) and not all(has_run):
            lacking = [f.url for f, h in zip(files, has_run) if not h]
            raise TargetError(f"{lacking[0]}: column {columns.run!r} not found, but other files of predictor {name!r} "
                              "have it; expected it in every file or in none (one run)")
        if not any(has_run):
            columns = PredictionColumns(columns.id, columns.prediction, None)
    frames = [_as_frame(read_columns(ref, detect_format(ref.url), columns.names()), columns) for ref in files]
    frame = pd.concat(frames, ignore_index=True)
    ids, raw, runs = _wide(frame, columns, source)
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
        source=source, files=files,
    )
