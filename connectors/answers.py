"""Inputs of the scorer audit: a benchmark's gold references, model answers, reviewed variants.

Why here: the scorer audit (``audit.scoring``) works on in-memory tables; reading files, choosing
their layout and naming the file and row of a bad value is a connector's job. Every error names
the file and the 1-based data row (the header is not a data row), so a user can open the file at
the line; nothing is dropped silently.

Gold references come through the benchmark connectors: for DROP's official JSON the validated
answers are kept (the official scorer takes the best over them) and each answer is one bag of
spans; for every other benchmark each gold string is an alternative answer and, for TruthfulQA's
ranking, the options that are not gold are the incorrect references.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd

from audit.scoring.drop import parse_drop_dataset
from audit.scoring.sensitivity import GoldReferences
from audit.scoring.variants import VARIANT_COLUMNS
from connectors.benchmark_presets import (
    csv_records,
    guess_format,
    json_records,
    open_text,
)
from connectors.benchmarks import (
    BenchmarkError,
    BenchmarkSpec,
    benchmark_files,
    iter_file_batches,
)

_VARIANT_REQUIRED = ("question_id", "original", "variant", "transformation")


def _drop_official(path: str, encoding: str) -> dict | None:
    """The parsed file when it is DROP's official JSON (``{passage_id: {passage, qa_pairs}}``)."""
    if guess_format(path) != "json":
        return None
    with open_text(path, encoding) as handle:
        data = json.load(handle)
    if isinstance(data, dict) and all(isinstance(v, dict) and "qa_pairs" in v for v in data.values()):
        return data
    return None


def read_gold_references(spec: BenchmarkSpec) -> dict[str, GoldReferences]:
    """Question id -> gold references of every item of ``spec``; an item without gold is an error."""
    golds: dict[str, GoldReferences] = {}
    for path in benchmark_files(spec):
        official = _drop_official(path, spec.encoding) if spec.preset == "drop" else None
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


def _records(path: str, encoding: str) -> tuple[list[str], Iterable[dict]]:
    fmt = guess_format(path)
    if fmt == "csv":
        return csv_records(path, encoding)
    if fmt in ("json", "jsonl"):
        return json_records(path, encoding)
    if fmt == "parquet":  # a file, or a folder of parts (a run's variants.parquet)
        frame = pd.read_parquet(path)
        return list(frame.columns), frame.to_dict("records")
    raise BenchmarkError(f"{path}: answers and variants are read from CSV/TSV, JSON(L) or Parquet, not {fmt!r}")


def _string(value: object, path: str, row: int, field: str, allow_int: bool = False) -> str:
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise BenchmarkError(f"{path}: data row {row}: field {field!r} must be a string, got {type(value).__name__} {value!r:.60}")
    return value


def read_answers(path: str, id_column: str = "question_id", answer_column: str = "answer",
                 encoding: str = "utf-8") -> pd.DataFrame:
    """Model answers as ``(question_id, answer)``: one row per answer, in file order."""
    columns, records = _records(path, encoding)
    missing = [c for c in (id_column, answer_column) if c not in columns]
    if missing:
        raise BenchmarkError(f"{path}: missing column(s) {missing}; file has columns {list(columns)}")
    rows = [(_string(r.get(id_column), path, n, id_column, allow_int=True), _string(r.get(answer_column), path, n, answer_column))
            for n, r in enumerate(records, start=1)]
    if not rows:
        raise BenchmarkError(f"{path}: no answers")
    return pd.DataFrame(rows, columns=["question_id", "answer"])


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
        rows.append({**row, "status": status, "reason": "" if reason is None or reason != reason else str(reason)})
    if not rows:
        raise BenchmarkError(f"{path}: no variants")
    return pd.DataFrame(rows, columns=list(VARIANT_COLUMNS))
