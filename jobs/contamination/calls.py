"""Between the call plan and the model stages: calls as prompt rows, answered rows as results, cells as outcomes.

Ray-free, so the job (Ray Data actor pools) and the GPU bench (one backend in-process) run the same
steps. A call's row carries its own decoding (``max_new_tokens``, ``temperature``, ``top_p``,
``seed``: ``connectors.models.batches.ROW_PARAMS``), so the clean relay and every seeded noisy
router slot of a router model share one stage and its batches. The row id is the call key.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from audit.contamination.answers import Outcome
from audit.contamination.outcomes import outcome_record
from audit.contamination.plan import NOISY, Call, CallPlan, CallResult, PlanConfig, WorkerTask, call_result, worker_call, worker_outcome
from audit.contamination.prompts import PromptSet
from audit.mcqa.items import McqaItem
from connectors.models.batches import GENERATION_COLUMNS
from jobs.common.models.answers import Skips, Unusable, unusable_answers

CALL_SCHEMA = pa.schema([
    ("id", pa.string()), ("system", pa.string()), ("user", pa.string()), ("answer_prefix", pa.string()),
    ("max_new_tokens", pa.int64()), ("temperature", pa.float64()), ("top_p", pa.float64()), ("seed", pa.int64()),
    ("role", pa.string()), ("model", pa.string()), ("question_id", pa.string()), ("condition", pa.string()),
    ("slot", pa.string()),
])
PROMPT_TEXT = ("system", "user", "answer_prefix")  # left out of calls.parquet: the sample and the prompt hashes rebuild them


def call_rows(calls: Sequence[Call]) -> pa.Table:
    """One prompt row per call: its ``Prompt``'s turns and its ``Decoding``."""
    return pa.Table.from_pylist([{
        "id": c.key, "system": c.prompt.system, "user": c.prompt.user, "answer_prefix": c.prompt.answer_prefix,
        "max_new_tokens": c.decoding.max_new_tokens,
        "temperature": c.decoding.temperature, "top_p": c.decoding.top_p, "seed": c.decoding.seed, "role": c.role,
        "model": c.model, "question_id": c.question_id, "condition": c.condition, "slot": ".".join(map(str, c.slot)),
    } for c in calls], schema=CALL_SCHEMA)


EMPTY_ROUTER = "empty router output"
UNPARSABLE = "unparsable worker answer"


def unusable(batch: pa.Table, items: Mapping[str, McqaItem]) -> list[Unusable | None]:
    """Per answered row, why it is of no use to the audit (None: usable): its call's error (with the reason
    code and transient flag its backend set), a router output with no text (it blocks every cell it feeds),
    or a worker reply without one valid letter."""
    out: list[Unusable | None] = []
    failures = unusable_answers(batch)
    for role, question, text, failure in zip(*(batch.column(c).to_pylist() for c in ("role", "question_id", "text")), failures):
        if failure is not None:
            out.append(failure)
        elif role == "router":
            out.append(None if (text or "").strip() else Unusable(EMPTY_ROUTER, "empty_router"))
        else:
            status = worker_outcome(items[question], call_result(text)).status
            out.append(Unusable(UNPARSABLE, "unparsable") if status == "unparsable" else None)
    return out


def empty_answers() -> pa.Table:
    """An answered table with no rows (a step with nothing to call)."""
    schema = CALL_SCHEMA
    for f in GENERATION_COLUMNS:
        schema = schema.append(f)
    return schema.empty_table()


def results_of(answered: pa.Table) -> dict[str, CallResult]:
    """Key -> result of every answered row (an error becomes ``failed`` or ``timeout`` by its reason code)."""
    return {key: call_result(text, error, code) for key, text, error, code in zip(
        *(answered.column(c).to_pylist() for c in ("id", "text", "error", "error_code")))}


@dataclass(frozen=True)
class WorkerStep:
    """The worker calls to make (unique keys, in task order) and, per cell, its call or its blocked outcome."""

    calls: tuple[Call, ...]
    cells: tuple[tuple[WorkerTask, Call | Outcome], ...]


def worker_step(plan: CallPlan, items: Mapping[str, McqaItem], router_results: Mapping[str, CallResult], prompts: PromptSet,
                config: PlanConfig) -> WorkerStep:
    """Every cell's worker call from the router results; a cell with an unusable router output is blocked."""
    cells, calls = [], {}
    for task in plan.worker_tasks:
        step = worker_call(task, items[task.question_id], router_results, prompts, config)
        cells.append((task, step))
        if isinstance(step, Call):
            calls.setdefault(step.key, step)
    return WorkerStep(tuple(calls.values()), tuple(cells))


def outcome_frame(step: WorkerStep, items: Mapping[str, McqaItem], answers: Mapping[str, CallResult]) -> pd.DataFrame:
    """The outcome table: one row per cell, its category, correctness and the worker's raw reply."""
    rows = []
    for task, call in step.cells:
        if isinstance(call, Outcome):
            rows.append(outcome_record(task, call))
            continue
        result = answers[call.key]
        rows.append(outcome_record(task, worker_outcome(items[task.question_id], result), result.text))
    return pd.DataFrame(rows, columns=["question_id", "model", "condition", "r", "correct", "status", "answer"])


def _sum(table: pa.Table, column: str) -> int:
    return int(pc.sum(table.column(column)).as_py() or 0) if table.num_rows else 0


def _counts(table: pa.Table) -> dict[str, int]:
    """Calls, cache hits, call errors by category, empty outputs and tokens (all, and computed in this run)."""
    results = results_of(table)
    errors = [r.error for r in results.values()]
    fresh = table.filter(pc.invert(table.column("cached"))) if table.num_rows else table
    return {
        "calls": table.num_rows, "cache_hits": _sum(table, "cached"), "computed": fresh.num_rows,
        "failed": errors.count("failed"), "timeout": errors.count("timeout"),
        "empty_outputs": sum(r.error is None and not (r.text or "").strip() for r in results.values()),
        "prompt_tokens": _sum(table, "prompt_tokens"), "completion_tokens": _sum(table, "completion_tokens"),
        "computed_prompt_tokens": _sum(fresh, "prompt_tokens"), "computed_completion_tokens": _sum(fresh, "completion_tokens"),
    }


def call_accounting(routers: pa.Table, workers: pa.Table, step: WorkerStep, items: Mapping[str, McqaItem]) -> dict:
    """The manifest's call and token accounting: per role (router calls split clean/noisy), per model, in total;
    per role and in total the unusable answers by reason (``unusable``)."""
    noisy = routers.column("condition").to_pylist().count(NOISY)
    blocked: dict[str, int] = {}
    for _, call in step.cells:
        if isinstance(call, Outcome):
            blocked[call.status] = blocked.get(call.status, 0) + 1
    both = pa.concat_tables([routers, workers])
    return {
        "router": {**_counts(routers), "clean_calls": routers.num_rows - noisy, "noisy_calls": noisy,
                   "unusable": Skips.of(unusable(routers, items)).to_json()},
        "worker": {**_counts(workers), "cells": len(step.cells), "blocked_cells": dict(sorted(blocked.items())),
                   "unusable": Skips.of(unusable(workers, items)).to_json()},
        "per_model": {model: _counts(both.filter(pc.equal(both.column("model"), model)))
                      for model in sorted(set(both.column("model").to_pylist()))},
        "total": {**_counts(both), "unusable": Skips.of(unusable(both, items)).to_json()},
    }


def stored_calls(table: pa.Table) -> pa.Table:
    """The answered rows as ``calls.parquet`` keeps them: keys, roles, decoding, outputs; no prompt text."""
    return table.drop_columns([c for c in PROMPT_TEXT if c in table.column_names])
