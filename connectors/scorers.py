"""Inputs of the scorer audit: a benchmark's gold references, model answers, reviewed variants.

Why here: the scorer audit (``audit.scorers``) works on in-memory tables; reading files, choosing
their layout and naming the file and row of a bad value is a connector's job. Every error names
the file and the 1-based data row (the header is not a data row), so a user can open the file at
the line; nothing is dropped silently.

Gold references come through the benchmark connectors: for DROP's official JSON the validated
answers are kept (the official scorer takes the best over them) and each answer is one bag of
spans; for every other benchmark each gold string is an alternative answer and, for TruthfulQA's
ranking, the options that are not gold are the incorrect references.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import pandas as pd
from fsspec.core import url_to_fs

from audit.scorers.drop import parse_drop_dataset
from audit.scorers.sensitivity import GoldReferences
from audit.scorers.variants import VARIANT_COLUMNS
from connectors.benchmarks.formats import csv_records, drop_official, guess_format, json_records
from connectors.benchmarks.read import benchmark_files, iter_file_batches
from connectors.benchmarks.schema import BadRecord, BenchmarkError
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.io.read_report import input_errors

_VARIANT_REQUIRED = ("question_id", "original", "variant", "transformation")


def read_gold_references(spec: BenchmarkSpec) -> dict[str, GoldReferences]:
    """Question id -> gold references of every item of ``spec``; an item without gold is an error."""
    golds: dict[str, GoldReferences] = {}
    for path in benchmark_files(spec):
        # the benchmark connectors' one reader of DROP's official JSON, so every job reads it alike
        official = drop_official(path, spec.encoding) if spec.preset == "drop" and guess_format(path) == "json" else None
        if official is not None:
            for q in parse_drop_dataset(official, path):
                golds[q.query_id] = GoldReferences.of(q.query_id, q.golds)
            continue
        for batch in iter_file_batches(spec, path):
            for item in batch.select(["id", "options", "gold"]).to_pylist():
                gold = item["gold"] or []
                if not gold:
                    raise BenchmarkError(f"{path}: item {item['id']!r}: no gold answer to score against")
                answers = [tuple(gold)] if spec.preset == "drop" else gold  # DROP: one answer, several spans
                incorrect = [o for o in item["options"] or [] if o not in set(gold)]
                golds[item["id"]] = GoldReferences.of(item["id"], answers, incorrect)
    if not golds:
        raise BenchmarkError(f"{', '.join(spec.inputs)}: benchmark {spec.benchmark_name()!r} has no items")
    return golds


def _parquet_folder(path: str) -> bool:
    """A folder of Parquet parts: a run's ``data/variants/`` table (Hive partitions included)."""
    fs, p = url_to_fs(path)
    return fs.isdir(p) and any(f.endswith(".parquet") for f in fs.find(p))


def _records(path: str, encoding: str) -> tuple[list[str], Iterable[dict]]:
    fmt = "parquet" if _parquet_folder(path) else guess_format(path)
    with input_errors(path, BenchmarkError):
        if fmt == "csv":
            columns, records = csv_records(path, encoding)
        elif fmt in ("json", "jsonl"):
            columns, records = json_records(path, encoding)
        elif fmt == "parquet":  # a file, or a folder of parts (a run's data/variants/)
            frame = pd.read_parquet(path)
            frame = frame.astype({c: object for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})
            return list(frame.columns), frame.to_dict("records")
        else:
            raise BenchmarkError(f"{path}: answers and variants are read from CSV/TSV, JSON(L) or Parquet, not {fmt!r}")
    return columns, _strict(records, path)


def _strict(records: Iterable[dict | BadRecord], path: str) -> Iterator[dict]:
    """Answers and variants are scored exactly: a record that cannot be read is an error, never a skip."""
    with input_errors(path, BenchmarkError):
        for record in records:
            if isinstance(record, BadRecord):
                raise record.error
            yield record


def _string(value: object, path: str, row: int, field: str, allow_int: bool = False) -> str:
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise BenchmarkError(f"{path}: data row {row}: field {field!r} must be a string, got {type(value).__name__} {value!r:.60}")
    return value


def read_answers(path: str, id_column: str = "question_id", answer_column: str = "answer",
                 encoding: str = "utf-8") -> pd.DataFrame:
    """Model answers as ``(question_id, answer)``: one row per question, in file order.

    A question id on two rows is an error naming both rows: which answer to score is not ours to pick.
    """
    columns, records = _records(path, encoding)
    missing = [c for c in (id_column, answer_column) if c not in columns]
    if missing:
        raise BenchmarkError(f"{path}: missing column(s) {missing}; file has columns {list(columns)}")
    rows = [(_string(r.get(id_column), path, n, id_column, allow_int=True), _string(r.get(answer_column), path, n, answer_column))
            for n, r in enumerate(records, start=1)]
    if not rows:
        raise BenchmarkError(f"{path}: no answers")
    frame = pd.DataFrame(rows, columns=["question_id", "answer"])
    repeated = frame["question_id"].duplicated(keep=False)
    if repeated.any():
        qid = frame.loc[repeated, "question_id"].iloc[0]
        where = (frame.index[frame["question_id"] == qid] + 1).tolist()
        raise BenchmarkError(f"{path}: field {id_column!r}: {qid!r} on data rows {where} "
                             f"({frame.loc[repeated, 'question_id'].nunique()} id(s) repeat); expected one answer per question")
    return frame


def read_variants(path: str, encoding: str = "utf-8") -> pd.DataFrame:
    """Reviewed or hand-written variants (``VARIANT_COLUMNS``); ``status`` defaults to accepted.

    Why accept them: a maintainer reviews the generated ``variants.parquet``, corrects or rejects
    rows, and scores exactly the reviewed set.
    """
    columns, records = _records(path, encoding)
    missing = [c for c in _VARIANT_REQUIRED if c not in columns]
    if missing:
        raise BenchmarkError(f"{path}: missing column(s) {missing}; file has columns {list(columns)}")
    rows = []
    for n, r in enumerate(records, start=1):
        row = {c: _string(r.get(c), path, n, c, allow_int=c == "question_id") for c in _VARIANT_REQUIRED}
        status = r.get("status") or "accepted"
        if status not in ("accepted", "rejected"):
            raise BenchmarkError(f"{path}: data row {n}: field 'status' must be 'accepted' or 'rejected', got {status!r:.40}")
        reason = r.get("reason")
        blank = reason is None or (isinstance(reason, float) and math.isnan(reason))  # an empty Parquet/CSV cell
        rows.append({**row, "status": status, "reason": "" if blank else str(reason)})
    if not rows:
        raise BenchmarkError(f"{path}: no variants")
    return pd.DataFrame(rows, columns=list(VARIANT_COLUMNS))
