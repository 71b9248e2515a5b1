"""The per-question outcome table: one row per (question, worker model, condition, r).

Columns: ``question_id``, ``model``, ``condition`` (``forward_full`` or ``noisy_rewrite``), ``r``
(1 for ``forward_full``; 1..M for ``noisy_rewrite``), ``correct`` (0/1; empty when not scored),
``status`` (a category of ``audit.contamination.answers.STATUSES``) and ``answer`` (the worker's
raw reply, optional). The job writes it; ``--outcomes`` reads one, so published or hand-built
tables go through the same statistics.

``check_outcomes`` turns any frame with those columns into the canonical table or raises naming
source, data row and field. Rules: without a ``status`` column every row must be scored (0/1), so a
failure cannot hide as an empty cell; ``answered`` needs 0/1; ``unparsable`` is wrong (0; an empty
value becomes 0, a 1 is a contradiction); the unscored categories ignore ``correct``. One row per
(question, model, condition, r).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import pandas as pd

from audit.contamination.answers import SCORED, STATUSES, Outcome
from audit.contamination.plan import CLEAN, CONDITIONS, WorkerTask

REQUIRED = ("question_id", "model", "condition", "r", "correct")
OPTIONAL = ("status", "answer")
COLUMNS = REQUIRED + OPTIONAL
KEY = ("question_id", "model", "condition", "r")
SOURCE, ROW = "_source", "_row"  # provenance a reader may attach, so messages name file and data row


class OutcomeError(ValueError):
    """A bad outcome table; the message names the source, the data row and the field."""


def outcome_record(task: WorkerTask, outcome: Outcome, answer: str | None = None) -> dict:
    """One row of the outcome table for a planned cell."""
    return {"question_id": task.question_id, "model": task.model, "condition": task.condition, "r": task.r,
            "correct": outcome.correct, "status": outcome.status, "answer": answer}


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT


def _question_id(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) and value.strip() else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value.strip())
    return None


def _router_count(value: object) -> int | None:
    number = _integer(value)
    return number if number is not None and number >= 1 else None


_BINARY = {"0": 0, "1": 1, "false": 0, "true": 1}


def _binary(value: object) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        return _BINARY.get(value.strip().lower())
    return None


class _Rows:
    """Names the place of row ``i`` (0-based position) in messages."""

    def __init__(self, frame: pd.DataFrame, source: str, labels: Mapping[str, str]):
        self.sources = frame[SOURCE].tolist() if SOURCE in frame else None
        self.rows = frame[ROW].tolist() if ROW in frame else None
        self.source, self.labels = source, labels

    def where(self, i: int) -> str:
        source = self.sources[i] if self.sources else self.source
        return f"{source}: data row {self.rows[i] if self.rows else i + 1}"

    def error(self, i: int, field: str, problem: str) -> OutcomeError:
        return OutcomeError(f"{self.where(i)}, field {self.labels.get(field, field)!r}: {problem}")


def _convert(values: list, rows: _Rows, field: str, fn: Callable[[object], object], expected: str,
             optional: bool = False) -> list:
    out = []
    for i, value in enumerate(values):
        if _missing(value):
            if not optional:
                raise rows.error(i, field, f"missing; expected {expected}")
            out.append(None)
            continue
        converted = fn(value)
        if converted is None:
            raise rows.error(i, field, f"expected {expected}, got {value!r:.60}")
        out.append(converted)
    return out


def check_outcomes(frame: pd.DataFrame, source: str = "outcomes", labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The canonical outcome table from ``frame``; raises ``OutcomeError`` at the first bad value.

    ``labels`` maps canonical field names to the names the source file uses, for messages.
    """
    labels = dict(labels or {})
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise OutcomeError(f"{source}: missing column(s) {[labels.get(c, c) for c in missing]}; "
                           f"found {[c for c in frame.columns if c not in (SOURCE, ROW)]}")
    if frame.empty:
        raise OutcomeError(f"{source}: no outcome rows")
    rows = _Rows(frame, source, labels)
    qid = _convert(frame["question_id"].tolist(), rows, "question_id", _question_id, "a string or integer id")
    model = _convert(frame["model"].tolist(), rows, "model", _text, "a model name")
    condition = _convert(frame["condition"].tolist(), rows, "condition", lambda v: v if v in CONDITIONS else None,
                         f"one of {list(CONDITIONS)}")
    r = _convert(frame["r"].tolist(), rows, "r", _router_count, "an integer >= 1", optional=True)
    correct = _convert(frame["correct"].tolist(), rows, "correct", _binary, "0 or 1", optional=True)
    has_status = "status" in frame.columns
    status = (_convert(frame["status"].tolist(), rows, "status", lambda v: v if v in STATUSES else None, f"one of {list(STATUSES)}")
              if has_status else ["answered"] * len(frame))
    for i in range(len(frame)):
        if condition[i] == CLEAN:
            if r[i] not in (None, 1):
                raise rows.error(i, "r", f"the clean condition {CLEAN!r} has r = 1, got {r[i]}")
            r[i] = 1
        elif r[i] is None:
            raise rows.error(i, "r", "missing; expected the number of routers (an integer >= 1)")
        if status[i] == "answered" and correct[i] is None:
            hint = "" if has_status else " (without a status column every row must be scored; add one to record failures)"
            raise rows.error(i, "correct", f"missing; expected 0 or 1{hint}")
        if status[i] == "unparsable":
            if correct[i] == 1:
                raise rows.error(i, "correct", "is 1 but the status is 'unparsable' (an unreadable answer cannot be correct)")
            correct[i] = 0
        elif status[i] not in SCORED:
            correct[i] = None
    answer = (_convert(frame["answer"].tolist(), rows, "answer", lambda v: v if isinstance(v, str) else str(v), "text", optional=True)
              if "answer" in frame.columns else [None] * len(frame))
    out = pd.DataFrame({"question_id": qid, "model": model, "condition": condition, "r": pd.array(r, dtype="int64"),
                        "correct": pd.array(correct, dtype="Int8"), "status": status, "answer": pd.Series(answer, dtype=object)})
    duplicated = out.duplicated(list(KEY), keep=False).to_numpy()
    if duplicated.any():
        first = int(duplicated.nonzero()[0][0])
        same = (out[list(KEY)] == out.loc[first, list(KEY)]).all(axis=1).to_numpy().nonzero()[0]
        raise OutcomeError(f"{rows.where(same[0])} and {rows.where(same[1])}: both hold (question_id, model, condition, r) = "
                           f"{(qid[first], model[first], condition[first], r[first])}; expected one row per question, model and setting")
    return out


def category_counts(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Rows per category for every (model, condition, r) in the table, plus ``absent``: questions of
    the table (any question id it holds) that have no row at all for that cell."""
    n_questions = outcomes["question_id"].nunique()
    counts = (outcomes.groupby(["model", "condition", "r", "status"]).size().unstack("status", fill_value=0)
              .reindex(columns=list(STATUSES), fill_value=0))
    counts["absent"] = n_questions - counts.sum(axis=1)
    return counts.reset_index().rename_axis(columns=None)
