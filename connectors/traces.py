"""Inputs of the trace audit: a rubric of regex steps, reasoning traces, raters' labels.

**Rubric** (YAML ``.yaml``/``.yml`` or JSON ``.json``)::

    description: what the rubric checks          # optional
    steps:
      - name: cites_amount                        # unique, non-empty
        pattern: '\\$\\s?\\d'                       # Python regex, matched anywhere (re.search)
        ignore_case: true                         # optional, default true

**Traces** (CSV, Parquet or JSONL; one or several files): one row per (id, model) with the trace
text (null: the model gave none; it passes no step) and, unless verdicts come from a design and
predictions, a verdict column: ``correct``/``incorrect`` (any case), true/false or 1/0 (1 = correct).
CSV values may span lines (quoted), as reasoning traces do.

**Ratings** (CSV, Parquet or JSONL): one row per rated trace, keyed by the traces' id and model
columns, and one column per rater or judge holding its category label; every rater must rate
every row (Fleiss' kappa needs a complete table). Labels are compared as text, so 1 and "1" agree.

Every problem is raised before any work, naming the file and the column or rubric step.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import yaml

from audit.safe_yaml import load_yaml
from audit.traces.rubric import RubricStep
from connectors.coreset.predictions import Predictions
from connectors.coreset.targets import (
    EXTENSIONS,
    TargetError,
    check_columns,
    detect_format,
    read_columns,
    schema_names,
)
from connectors.io.fs import FileRef, describe, expand, fingerprint

RUBRIC_EXTENSIONS = (".yaml", ".yml", ".json")
STEP_KEYS = {"name", "pattern", "ignore_case"}
CORRECT = {"correct", "true", "1"}
INCORRECT = {"incorrect", "false", "0"}
_TABLES = tuple(e for exts in EXTENSIONS.values() for e in exts)


@dataclass(frozen=True)
class Rubric:
    """Compiled steps in file order, the optional description, and the file (for the manifest)."""

    steps: list[RubricStep]
    description: str | None
    file: FileRef


@dataclass(frozen=True)
class TraceColumns:
    """Column names shared by the traces and the ratings; ``verdict`` None: verdicts come from a design."""

    id: str = "id"
    model: str = "model"
    trace: str = "trace"
    verdict: str | None = None

    def names(self) -> list[str]:
        return list(dict.fromkeys(c for c in (self.id, self.model, self.trace, self.verdict) if c))


@dataclass(frozen=True, eq=False)
class Traces:
    """Trace rows: ids, models, texts (None where absent), verdicts (bool, True = correct) or None."""

    ids: np.ndarray
    models: np.ndarray
    texts: list[str | None]
    correct: np.ndarray | None
    source: str
    files: list[FileRef]

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.files)


def _step(url: str, i: int, entry: object) -> RubricStep:
    where = f"{url}: step #{i + 1}"
    if not isinstance(entry, dict):
        raise TargetError(f"{where}: expected a mapping with 'name' and 'pattern', got {entry!r}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TargetError(f"{where}: 'name' must be a non-empty string, got {name!r}")
    where = f"{url}: step {name!r}"
    unknown = sorted(set(entry) - STEP_KEYS)
    if unknown:
        raise TargetError(f"{where}: unknown key(s) {unknown}; expected {sorted(STEP_KEYS)}")
    pattern, ignore_case = entry.get("pattern"), entry.get("ignore_case", True)
    if not isinstance(pattern, str) or not pattern:
        raise TargetError(f"{where}: 'pattern' must be a non-empty regex string, got {pattern!r}")
    if not isinstance(ignore_case, bool):
        raise TargetError(f"{where}: 'ignore_case' must be true or false, got {ignore_case!r}")
    try:
        return RubricStep(name, pattern, ignore_case)
    except ValueError as err:
        raise TargetError(f"{where}: invalid regex {pattern!r} ({err.__cause__})") from err


def read_rubric(path: str) -> Rubric:
    """The rubric's steps, compiled; bad YAML/JSON, a bad step or an invalid regex names file and step."""
    files = expand([path], RUBRIC_EXTENSIONS)
    if len(files) != 1:
        raise TargetError(f"{path}: expected one rubric file, found {len(files)}")
    ref = files[0]
    with ref.open() as fh:
        text = fh.read().decode("utf-8")
    try:
        data = json.loads(text) if ref.url.lower().endswith(".json") else load_yaml(text)
    except (ValueError, RecursionError, yaml.YAMLError) as err:  # JSONDecodeError, int digits, nesting too deep
        raise TargetError(f"{ref.url}: not valid {'JSON' if ref.url.lower().endswith('.json') else 'YAML'} ({err})") from err
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list) or not data["steps"]:
        raise TargetError(f"{ref.url}: expected a mapping with a non-empty list 'steps' of {{name, pattern, ignore_case}}")
    unknown = sorted(set(data) - {"steps", "description"})
    if unknown:
        raise TargetError(f"{ref.url}: unknown top-level key(s) {unknown}; expected 'steps' and optionally 'description'")
    steps = [_step(ref.url, i, entry) for i, entry in enumerate(data["steps"])]
    names = [s.name for s in steps]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise TargetError(f"{ref.url}: step name(s) {repeated} repeat; expected unique names")
    description = data.get("description")
    return Rubric(steps=steps, description=None if description is None else str(description), file=ref)


def _verdicts(values: np.ndarray, column: str, url: str) -> np.ndarray:
    """correct/incorrect, true/false or 1/0 (1 = correct) as bool; anything else names file and column."""
    missing = pd.isna(values)
    if missing.any():
        raise TargetError(f"{url}: column {column!r} has {int(missing.sum())} missing verdict(s); "
                          "expected correct/incorrect on every row")
    text = pd.Series(values, dtype=object).map(lambda v: str(v).strip().lower())
    text = text.replace({"1.0": "1", "0.0": "0"})
    bad = ~text.isin(CORRECT | INCORRECT)
    if bad.any():
        raise TargetError(f"{url}: column {column!r} has verdict(s) {sorted(set(text[bad]))[:5]}; "
                          "expected correct/incorrect, true/false or 1/0")
    return text.isin(CORRECT).to_numpy()


def _frame(table: pa.Table) -> pd.DataFrame:
    """Columns as objects with blank strings as null: a CSV cell left empty reads as "", not as null."""
    frame = pd.DataFrame({c: table.column(c).to_numpy(zero_copy_only=False) for c in table.column_names})
    return frame.apply(lambda col: col if pd.api.types.is_numeric_dtype(col)
                       else col.map(lambda v: None if isinstance(v, str) and not v.strip() else v))


def _trace_frame(ref: FileRef, columns: TraceColumns) -> pd.DataFrame:
    table = read_columns(ref, detect_format(ref.url), columns.names(), newlines_in_values=True)
    kind = table.schema.field(columns.trace).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind)):
        raise TargetError(f"{ref.url}: column {columns.trace!r} has type {kind}; expected the trace text")
    frame = _frame(table)
    for key in (columns.id, columns.model):
        if frame[key].isna().any():
            raise TargetError(f"{ref.url}: column {key!r} has {int(frame[key].isna().sum())} missing value(s); "
                              "expected one on every row")
    frame[columns.model] = frame[columns.model].astype(str)
    if columns.verdict:
        frame[columns.verdict] = _verdicts(frame[columns.verdict].to_numpy(object), columns.verdict, ref.url)
    return frame


def _duplicates(frame: pd.DataFrame, keys: list[str], source: str, what: str) -> None:
    dup = frame.duplicated(keys)
    if dup.any():
        first = tuple(frame.loc[dup, keys].iloc[0])
        raise TargetError(f"{source}: columns {keys} repeat {int(dup.sum())} pair(s), e.g. {first!r}; "
                          f"expected one {what} per id and model")


def read_traces(paths: list[str], columns: TraceColumns) -> Traces:
    """Every trace file, checked: id and model on every row, one trace per (id, model), valid verdicts."""
    files = expand(list(paths), _TABLES)
    source = describe(files)
    frame = pd.concat([_trace_frame(ref, columns) for ref in files], ignore_index=True)
    _duplicates(frame, [columns.id, columns.model], source, "trace")
    texts = [t if isinstance(t, str) else None for t in frame[columns.trace]]
    correct = frame[columns.verdict].to_numpy(bool) if columns.verdict else None
    return Traces(ids=frame[columns.id].to_numpy(), models=frame[columns.model].to_numpy(object), texts=texts,
                  correct=correct, source=source, files=files)


def _shown(values: np.ndarray, n: int = 5) -> str:
    shown = ", ".join(repr(v) for v in np.asarray(values).tolist()[:n])
    return shown + (f" (and {len(values) - n} more)" if len(values) > n else "")


def traced_rows(pred: Predictions, traced: np.ndarray, design_ids: pd.Index, id_column: str, model: str) -> np.ndarray:
    """The prediction row of each traced id of one model.

    Why only the traced ids: the audit reads the verdicts of the traces it has, so a prediction file
    needs those and no others (a design row nobody traced needs no prediction). Still refused: an id
    twice (which prediction is the verdict?) and ids outside the design (the wrong file).
    """
    index = pd.Index(np.asarray(pred.ids))
    if index.duplicated().any():
        raise TargetError(f"{pred.source}: column {id_column!r} repeats {int(index.duplicated().sum())} id(s), e.g. "
                          f"{_shown(index[index.duplicated()])}; expected one prediction per id")
    outside = ~index.isin(design_ids)
    if outside.any():
        raise TargetError(f"{pred.source}: column {id_column!r} has {int(outside.sum())} id(s) not in the design, e.g. "
                          f"{_shown(index[outside])}; expected design ids")
    position = index.get_indexer(traced)
    if (position < 0).any():
        raise TargetError(f"{pred.source}: column {id_column!r} lacks a prediction for {int((position < 0).sum())} of the "
                          f"{len(traced)} traced id(s) of model {model!r}, e.g. {_shown(traced[position < 0])}; expected "
                          "one for every traced id (design rows without a trace need none)")
    return position


def join_verdicts(traces: Traces, design: pd.DataFrame, predictors: list[Predictions], columns: TraceColumns,
                  design_url: str) -> np.ndarray:
    """Verdict of each trace from the design's label and its model's prediction (True = correct).

    A prediction the file left empty (nothing returned, unparsable output) is an incorrect verdict:
    the model did not answer. Each model needs one run, with a prediction for each id it traced.
    """
    by_name = {p.name: p for p in predictors}
    unknown = sorted(set(traces.models) - set(by_name))
    if unknown:
        raise TargetError(f"{traces.source}: column {columns.model!r} has model(s) {unknown} without --predictions; "
                          f"expected one of {sorted(by_name)}")
    design_index = pd.Index(design["id"].to_numpy())
    row = design_index.get_indexer(traces.ids)
    if np.any(row < 0):
        absent = traces.ids[row < 0]
        raise TargetError(f"{traces.source}: column {columns.id!r} has {len(absent)} id(s) not in the design "
                          f"{design_url}, e.g. {absent[:5].tolist()}")
    labels = design["label"].to_numpy(bool)
    correct = np.zeros(len(traces.ids), dtype=bool)
    for name, pred in by_name.items():
        if len(pred.runs) != 1:
            raise TargetError(f"{pred.source}: predictor {name!r} has {len(pred.runs)} runs; the trace audit "
                              "joins one verdict per (id, model), so give one run per model")
        mine = traces.models == name
        at = traced_rows(pred, traces.ids[mine], design_index, columns.id, name)
        correct[mine] = pred.parsed[at, 0] & (pred.values[at, 0] == labels[row[mine]])
    return correct


def read_ratings(path: str, id_column: str, model_column: str, raters: list[str] | None,
                 traces: Traces) -> tuple[pd.DataFrame, FileRef]:
    """Raters' labels (rows: rated traces, columns: raters) as text, checked complete and keyed to traces."""
    files = expand([path], _TABLES)
    if len(files) != 1:
        raise TargetError(f"{path}: expected one ratings file, found {len(files)}")
    ref = files[0]
    names = schema_names(ref)
    check_columns(ref.url, names, [id_column, model_column, *(raters or [])])
    raters = raters or [c for c in names if c not in (id_column, model_column)]
    if len(raters) < 2:
        raise TargetError(f"{ref.url}: {len(raters)} rater column(s) {raters}; agreement needs at least two")
    table = read_columns(ref, detect_format(ref.url), [id_column, model_column, *raters], newlines_in_values=True)
    frame = _frame(table)
    for column in (id_column, model_column, *raters):
        gaps = frame[column].isna()
        if gaps.any():
            raise TargetError(f"{ref.url}: column {column!r} has {int(gaps.sum())} missing value(s); "
                              "expected every rater on every rated trace")
    frame[model_column] = frame[model_column].astype(str)
    _duplicates(frame, [id_column, model_column], ref.url, "rating row")
    known = pd.MultiIndex.from_arrays([traces.ids, traces.models])
    keys = pd.MultiIndex.from_arrays([frame[id_column].to_numpy(), frame[model_column].to_numpy(object)])
    stray = ~keys.isin(known)
    if stray.any():
        raise TargetError(f"{ref.url}: columns {[id_column, model_column]} have {int(stray.sum())} rated trace(s) "
                          f"not in the traces, e.g. {keys[stray][0]!r}")
    return frame[raters].astype(str).set_axis(keys), ref
