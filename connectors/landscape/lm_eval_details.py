"""The Open LLM Leaderboard's first "details" tables (2023-24, ``details_<task>_<date>.parquet``) as lm-eval records.

Those tables were written by lighteval's ``DetailsLogger`` running the harness's tasks
(``harness|arc:challenge|25``), one row per document. Schema: ``huggingface/lighteval`` @
010dc620955ceb369733b9958714969761083eb1, ``src/lighteval/logging/info_loggers.py``, ``DetailsLogger.Detail``
and ``DetailsLogger.log``: ``example`` (the document's query), ``full_prompt`` (with the few-shot examples),
``choices`` (the continuations scored), ``gold_index`` (a list), ``predictions`` (per choice the
(log-likelihood, argmax equals the continuation) pair of a log-likelihood response), ``metrics``
(``{"acc": 1.0, "acc_norm": 0.0}``), ``input_tokens``, ``cont_tokens``, ``truncated``, ``padded``,
``pred_logits``, ``specifics``. No document fields: items follow the generic rule, with ``example`` (the
query without the few-shot examples) as each request's context.
The later leaderboard's details are lm-eval's own samples files (``samples_<task>_<date>``), read as such.
"""
from __future__ import annotations

import re
from typing import Any

from connectors.landscape.lm_eval_records import RecordError

DETAILS_FILE = re.compile(r"details_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.parquet$")
DETAILS_COLUMNS = ("example", "choices", "gold_index", "predictions")


def is_details_row(record: Any) -> bool:
    return isinstance(record, dict) and all(c in record for c in DETAILS_COLUMNS) and "arguments" not in record


def _greedy(value: Any) -> bool | None:
    """The pair's second value: a Parquet list column holds one type, so (float, bool) pairs are stored as 0.0/1.0."""
    if isinstance(value, bool) or value is None:
        return value
    return bool(value) if value in (0, 1) else None


def details_record(row: dict, index: int) -> dict:
    """One details row as an lm-eval record (``doc_id`` the row's position, from 0)."""
    choices, predictions, gold = row["choices"], row["predictions"], row["gold_index"]
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise RecordError("choices is not a list of strings")
    if not isinstance(predictions, list) or len(predictions) != len(choices):
        raise RecordError(f"{len(predictions) if isinstance(predictions, list) else 'no'} predictions for "
                          f"{len(choices)} choices")
    if not isinstance(gold, list) or len(gold) != 1:
        raise RecordError(f"gold_index {gold!r:.40} is not one index; the landscape needs exactly one gold option")
    resps = [[p[0], _greedy(p[1])] if isinstance(p, (list, tuple)) and len(p) == 2 else [p, None] for p in predictions]
    record = {"doc_id": index, "doc": None, "target": gold[0], "arguments": [[row["example"], c] for c in choices],
              "filtered_resps": resps}
    metrics = row.get("metrics")
    if isinstance(metrics, dict) and isinstance(metrics.get("acc"), (int, float)):
        record["acc"] = float(metrics["acc"])
    return record
