"""Arrow in, Arrow out: what the model actor's ``__call__`` does with one batch.

A prompt batch has ``PROMPT_SCHEMA`` columns (``audit.landscape.prompts.prompt_rows`` makes
them for the landscape; extra columns pass through untouched). ``score_prompt_batch`` appends the backend's
answer per row: ``option_logprobs`` (list<double>, label order), ``label_mass``, ``pred_index``
and ``pred_label`` (the top label; null on error), ``error`` and ``cached`` (``ChoiceScorer``
adds ``backend_report``, the call accounting). ``generate_prompt_batch``
appends ``text``, token counts, ``finish_reason`` and ``error`` for the generation audits. A failed
answer also carries ``error_code`` (its reason code) and ``error_transient`` (whether a rerun may pass),
set by the backend where it failed: a job decides from them, never from the message.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import pyarrow as pa

from audit.mcqa.prompt import Prompt
from connectors.models.base import GREEDY, Decoding, ModelBackend

PROMPT_SCHEMA = pa.schema([
    ("id", pa.string()), ("system", pa.string()), ("user", pa.string()), ("answer_prefix", pa.string()),
    ("labels", pa.list_(pa.string())),
])
CHOICE_COLUMNS = pa.schema([
    ("option_logprobs", pa.list_(pa.float64())), ("label_mass", pa.float64()), ("pred_index", pa.int32()),
    ("pred_label", pa.string()), ("error", pa.string()), ("error_code", pa.string()), ("error_transient", pa.bool_()),
    ("cached", pa.bool_()),
])
REPORT_COLUMN = "backend_report"
GENERATION_COLUMNS = pa.schema([
    ("text", pa.string()), ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
    ("finish_reason", pa.string()), ("error", pa.string()), ("error_code", pa.string()), ("error_transient", pa.bool_()),
    ("cached", pa.bool_()),
])


def _prompts(batch: pa.Table | pa.RecordBatch) -> list[Prompt]:
    missing = [f.name for f in PROMPT_SCHEMA if f.name not in batch.schema.names and f.name != "labels"]
    if missing:
        raise ValueError(f"prompt batch lacks column(s) {missing}; expected {PROMPT_SCHEMA.names}")
    return [Prompt(user=u, system=s, answer_prefix=a or "") for u, s, a in zip(
        batch.column("user").to_pylist(), batch.column("system").to_pylist(), batch.column("answer_prefix").to_pylist())]


def _append(batch: pa.Table | pa.RecordBatch, columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    for field in schema:
        if field.name in table.schema.names:
            table = table.drop_columns([field.name])
        table = table.append_column(field, pa.array(columns[field.name], field.type))
    return table


def score_prompt_batch(backend: ModelBackend, batch: pa.Table | pa.RecordBatch) -> pa.Table:
    """The batch with the label log-probs of every row (one forward per row)."""
    if "labels" not in batch.schema.names:
        raise ValueError("prompt batch lacks column 'labels' (the option letters to score)")
    labels = batch.column("labels").to_pylist()
    scores = backend.choice_logprobs(_prompts(batch), labels)
    cols: dict[str, list] = {f.name: [] for f in CHOICE_COLUMNS}
    for item_labels, s in zip(labels, scores):
        top = None if s.logprobs is None else max(range(len(s.logprobs)), key=lambda i: (s.logprobs[i], -i))
        cols["option_logprobs"].append(None if s.logprobs is None else list(s.logprobs))
        cols["label_mass"].append(s.label_mass)
        cols["pred_index"].append(top)
        cols["pred_label"].append(None if top is None else item_labels[top])
        cols["error"].append(s.error)
        cols["error_code"].append(s.error_code)
        cols["error_transient"].append(None if s.error is None else s.transient)
        cols["cached"].append(s.cached)
    return _append(batch, cols, CHOICE_COLUMNS)


ROW_PARAMS = ("max_new_tokens", "temperature", "top_p", "seed")


def row_params(batch: pa.Table | pa.RecordBatch, params: Decoding) -> list[Decoding] | None:
    """Per-row settings when the batch has columns named after ``ROW_PARAMS`` (a null keeps ``params``' value), else None."""
    present = [name for name in ROW_PARAMS if name in batch.schema.names]
    if not present:
        return None
    columns = {name: batch.column(name).to_pylist() for name in present}
    return [replace(params, **{n: columns[n][i] for n in present if columns[n][i] is not None}) for i in range(batch.num_rows)]


def generate_prompt_batch(backend: ModelBackend, batch: pa.Table | pa.RecordBatch,
                          params: Decoding = GREEDY) -> pa.Table:
    """The batch with one generation per row; columns ``max_new_tokens``, ``temperature``, ``top_p`` or
    ``seed`` set that row's decoding (the contamination audit's seeded router slots share one batch)."""
    per_row = row_params(batch, params)
    out = backend.generate(_prompts(batch), params) if per_row is None else backend.generate_each(_prompts(batch), per_row)
    cols = {f.name: [getattr(g, f.name) for g in out] for f in GENERATION_COLUMNS if f.name != "error_transient"}
    cols["error_transient"] = [None if g.error is None else g.transient for g in out]
    return _append(batch, cols, GENERATION_COLUMNS)


class ChoiceScorer:
    """The model stage as a callable class for ``map_batches(ChoiceScorer, fn_constructor_kwargs=...,
    compute=ActorPoolStrategy(...), num_gpus=1, batch_format="pyarrow")``: the backend is built
    once per actor, in the actor (no model is pickled), behind the response cache when
    ``cache_root`` is given. Ray-free: a test or a single process calls it directly.

    Each output batch also carries ``backend_report`` (JSON, on the batch's first row, null on
    the others): the backend's resolved ``settings()`` and what this batch cost (counter deltas:
    cache hits and misses, forward passes, HTTP requests, retries, failures). Why in the rows:
    an actor's counters die with it, and its output rows are the one thing that comes back, so
    ``merge_backend_reports`` over a model's output gives the manifest its call accounting.
    """

    def __init__(self, spec: str, settings: dict | None = None, cache_root: str | None = None) -> None:
        from connectors.models.registry import open_backend

        self.backend = open_backend(spec, settings, cache_root)

    def __call__(self, batch: pa.Table | pa.RecordBatch) -> pa.Table:
        before = Counter(self.backend.counters)
        out = score_prompt_batch(self.backend, batch)
        delta = {k: v - before.get(k, 0) for k, v in self.backend.counters.items() if v - before.get(k, 0)}
        report = json.dumps({"settings": self.backend.settings(), "counters": delta}, sort_keys=True, default=str)
        column = [report] + [None] * (out.num_rows - 1) if out.num_rows else []
        if REPORT_COLUMN in out.column_names:
            out = out.drop_columns([REPORT_COLUMN])
        return out.append_column(pa.field(REPORT_COLUMN, pa.string()), pa.array(column, pa.string()))


def merge_backend_reports(reports: Iterable[str | None]) -> dict[str, Any]:
    """One model's ``backend_report`` values merged: summed counters and the distinct settings
    (one entry unless actors resolved settings differently, which the manifest should show)."""
    counters: Counter[str] = Counter()
    settings: list[dict[str, Any]] = []
    for text in reports:
        if text is None:
            continue
        report = json.loads(text)
        counters.update(report["counters"])
        if report["settings"] not in settings:
            settings.append(report["settings"])
    if "requests" in counters:  # an HTTP backend's calls: retries and failures said even when none (a refused call is never retried)
        for name in ("retries", "failures"):
            counters.setdefault(name, 0)
    return {"settings": settings, "counters": dict(sorted(counters.items()))}


class TextGenerator:
    """Same as ``ChoiceScorer`` for generation (the contamination audit's routers and worker)."""

    def __init__(self, spec: str, settings: dict | None = None, cache_root: str | None = None,
                 params: dict | None = None) -> None:
        from connectors.models.registry import open_backend

        self.backend = open_backend(spec, settings, cache_root)
        self.params = Decoding(**{**(params or {}), "stop": tuple((params or {}).get("stop", ()))})

    def __call__(self, batch: pa.Table | pa.RecordBatch) -> pa.Table:
        return generate_prompt_batch(self.backend, batch, self.params)
