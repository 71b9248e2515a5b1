"""lm-evaluation-harness outputs, every layout it has written, read as one schema (``SAMPLE_SCHEMA``) for
landscapes without running a model.

File names, all real:
- 0.4.3 on (``EvaluationTracker``): ``<output>/<model_name_sanitized>/samples_<task>_<date>.jsonl``
  beside ``results_<date>.json`` (``<name>_<date>.json`` beside the samples when ``--output_path``
  named a ``.json`` file); the same records as Parquet rows (``samples_<task>_<date>.parquet``: the Open
  LLM Leaderboard's "details" datasets, pushed by ``EvaluationTracker`` and served by the Hub as Parquet),
  and the first leaderboard's ``details_<task>_<date>.parquet`` (``connectors.landscape.lm_eval_details``);
- 0.4.0-0.4.2 and the main branch of April 2024: ``<output>/<model_args sanitized>_<task>.jsonl``
  (JSON lines, or one JSON array) beside one ``results.json`` (model args with ``/`` and ``=`` made ``__``,
  ``pretrained__ORG__MODEL``; from commit e9a40543 only ``/`` and other characters Windows refuses,
  ``pretrained=ORG__MODEL``). The name alone cannot say where the model args end and the task begins
  (``arc_easy``), so the task is the longest task of ``results.json`` the name ends with;
- v0.3 ``--write_out``: ``<task>_write_out_info.json`` (``connectors.landscape.lm_eval_write_out``), the
  model named by a ``results.json`` beside it, else by the folder.

The results file gives the model (``model_name``, else ``pretrained=`` of the model args, else the
folder name), each task's metrics (``"acc,none"``), its ``output_type`` (a task that is not
``multiple_choice`` is refused up front, naming the task and file) and its group: the root of
``group_subtasks`` (0.4.2 on), else the top-level entry of ``groups`` that precedes the task in
``results`` (early 0.4 lists a group, its subgroups, then their tasks), else ``mmlu`` for ``mmlu_*``.
Records are read by ``connectors.landscape.lm_eval_records``, the items from their documents
(``connectors.landscape.lm_eval_items``); each row says which probability it holds (``letters`` with
its label mass, or ``continuations``).
"""
from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import fsspec
import pyarrow as pa

from connectors.landscape.lm_eval_details import DETAILS_FILE, details_record, is_details_row
from connectors.landscape.lm_eval_records import (
    NORMALISATIONS,
    SAMPLE_SCHEMA,
    LmEvalError,
    RecordError,
    doc_id_of,
    iter_parquet_records,
    iter_records,
    record_row,
    request_kind,
)
from connectors.landscape.lm_eval_write_out import WRITE_OUT_FILE, as_record

__all__ = ["NORMALISATIONS", "SAMPLE_SCHEMA", "LmEvalError", "LmEvalRun", "LmEvalSamples", "find_lm_eval_runs",
           "read_lm_eval_results", "read_lm_eval_samples"]

SAMPLES_FILE = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.(?:jsonl|parquet)$")
# results_<date>.json, or <stem>_<date>.json when --output_path named a .json file (samples then beside it)
RESULTS_FILE = re.compile(r"_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.json$")
EARLY_RESULTS = "results.json"
READABLE = "multiple_choice"
WHY_NOT = {
    "generate_until": "its responses are generated text, not per-option log-likelihoods",
    "loglikelihood_rolling": "it scores whole texts (perplexity), with no options",
    "loglikelihood": "it scores one continuation per document, with no options",
}


@dataclass(frozen=True)
class LmEvalSamples:
    """One samples file: scorable rows (``SAMPLE_SCHEMA``), and the records left out with line and reason."""

    path: str
    task: str
    date: str | None
    table: pa.Table
    rejected: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    unit: str = "line"  # what a rejection's "line" counts: a line of a JSON file, a row of a Parquet file

    @property
    def probability(self) -> str | None:
        """``letters`` or ``continuations`` (both joined by "+" if a task mixes them); None without rows."""
        kinds = sorted(set(self.table.column("probability").to_pylist()))
        return "+".join(kinds) if kinds else None


@dataclass(frozen=True)
class LmEvalRun:
    """A samples file with the model and metrics of its results file (when present); ``problem`` says
    why it cannot be read at all (a task that is not multiple choice, an early-0.4 file without its
    results.json), so the run can count and name it and read the rest."""

    task: str
    date: str | None
    samples_path: str
    results_path: str | None
    model: str
    metrics: dict[str, Any]
    output_type: str | None = None
    problem: str | None = None
    notes: tuple[str, ...] = ()
    group: str | None = None


def refusal(task: str, path: str, kind: str, source: str) -> str:
    """Why a task that is not multiple choice has no landscape, naming the task and the file."""
    return (f"{path}: task {task} is a {kind} task ({source}): {WHY_NOT.get(kind, 'it has no per-option log-likelihoods')}; "
            "only multiple_choice tasks have a landscape")


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(value), "null")


def _dropped_duplicates(lines_of: dict[tuple[int, str], list[int]], rows: list[dict], rejected: list[dict],
                        task: str) -> list[dict]:
    """Rows without any document written twice; every copy's line gets a rejection naming all of them."""
    repeated: dict[int, tuple[int, str]] = {}
    for (doc_id, filt), lines in lines_of.items():
        if len(lines) > 1:
            where = " and ".join(map(str, lines)) if len(lines) == 2 else ", ".join(map(str, lines))
            of = "" if filt == "none" else f" (filter {filt})"
            for line in lines:
                repeated[line] = (doc_id, f"doc_id {doc_id}{of} appears on lines {where}: every copy dropped (lm-eval "
                                          "writes one record per document and filter)")
    already = {r["line"] for r in rejected}
    rejected += [{"line": line, "id": f"{task}:{doc_id}", "reason": reason} for line, (doc_id, reason) in repeated.items()
                 if line not in already]
    return [row for row in rows if row["_line"] not in repeated]


def _records(path: str, name: str):
    if name.endswith(".parquet"):
        return iter_parquet_records(path)
    with fsspec.open(path, "rb") as fh:
        raw = fh.read()
    return iter_records(path, raw)


def read_lm_eval_samples(path: str, task: str | None = None, normalization: str = "raw", model: str | None = None,
                         group: str | None = None) -> LmEvalSamples:
    """Read one samples file (any layout); bad records are returned with their line (row) and reason.

    A file whose requests are not multiple choice (``generate_until``, ``loglikelihood_rolling``,
    ``loglikelihood``) is an ``LmEvalError`` naming the task and file, not a set of rejections.
    ``normalization`` (``raw`` or ``length``) applies to continuation log-likelihoods, never to letters.
    """
    if normalization not in NORMALISATIONS:
        raise ValueError(f"normalization {normalization!r} is not one of {NORMALISATIONS}")
    name = PurePosixPath(path).name
    match = SAMPLES_FILE.search(name) or DETAILS_FILE.search(name)
    write_out = WRITE_OUT_FILE.match(name)
    task = task or (match.group("task") if match else write_out.group("task") if write_out else name.removesuffix(".jsonl"))
    rows, rejected = [], []
    lines_of: dict[tuple[int, str], list[int]] = defaultdict(list)
    records, kind_known = 0, False
    for line, record, problem in _records(path, name):
        records += 1
        if problem is None and not isinstance(record, dict):
            problem = f"a JSON {_json_type(record)}, not an object"
        if problem is None and (write_out or is_details_row(record)):
            try:
                record = as_record(record) if write_out else details_record(record, line - 1)
            except RecordError as exc:
                problem = str(exc)
        if problem is not None:
            rejected.append({"line": line, "id": None, "reason": problem})
            continue
        if not kind_known:
            try:
                kind = request_kind(record)
            except RecordError:
                kind = None  # this record's own rejection says why; the next one decides
            if kind is not None and kind != READABLE:
                unit = "row" if name.endswith(".parquet") else "line"
                raise LmEvalError(refusal(task, path, kind, f"{unit} {line}'s requests"))
            kind_known = kind is not None
        try:
            doc_id = doc_id_of(record)
            lines_of[(doc_id, str(record.get("filter", "none")))].append(line)
            row = record_row(record, task, normalization, model, group)
        except RecordError as exc:
            doc = record.get("doc_id")
            named = isinstance(doc, int) and not isinstance(doc, bool) and doc.bit_length() < 64
            rejected.append({"line": line, "id": f"{task}:{doc}" if named else None, "reason": str(exc)})
            continue
        rows.append({**row, "_line": line})
    if records == 0:
        raise LmEvalError(f"{path}: no samples")
    rows = _dropped_duplicates(lines_of, rows, rejected, task)
    table = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "_line"} for r in rows], schema=SAMPLE_SCHEMA)
    return LmEvalSamples(path, task, match.group("date") if match else None, table,
                         sorted(rejected, key=lambda r: r["line"]), records=records,
                         unit="row" if name.endswith(".parquet") else "line")


def read_lm_eval_results(path: str) -> dict[str, Any]:
    """A results file: model name, model args, per-task metrics (``"acc,none"`` ...) and output types."""
    with fsspec.open(path, "rb") as fh:
        raw = fh.read()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LmEvalError(f"{path}: not a JSON document ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise LmEvalError(f"{path}: no 'results' object; not an lm-eval results file")
    config = data.get("config") or {}
    configs = data.get("configs") or {}
    model = data.get("model_name") or _pretrained(config.get("model_args")) or config.get("model")
    return {"model": model, "model_args": config.get("model_args"), "results": data["results"],
            "output_types": {t: c.get("output_type") for t, c in configs.items() if isinstance(c, dict)},
            "tasks": sorted(set(data["results"]) | set(configs)), "groups": task_groups(data),
            "n_samples": data.get("n-samples", {}), "versions": data.get("versions", {}), "path": path}


def task_groups(data: dict) -> dict[str, str]:
    """Task -> the lm-eval group it is pooled into (the root, for nested groups like mmlu > mmlu_stem).

    ``group_subtasks`` (0.4.2 on) names each group's members. Early 0.4 has only ``groups`` (the group
    metrics) and lists ``results`` as lm-eval prints them: a group, then its subgroups and tasks (aliases
    indented " - ", "  - "); an indented entry belongs to the last top-level group listed before it.
    """
    parent: dict[str, str] = {}
    subtasks = data.get("group_subtasks")
    if isinstance(subtasks, dict):
        for group, members in subtasks.items():
            for member in members if isinstance(members, list) else []:
                if isinstance(member, str) and member != group:
                    parent[member] = group
        out = {}
        for task in parent:
            root, seen = task, set()
            while root in parent and root not in seen:
                seen.add(root)
                root = parent[root]
            out[task] = root
        return {t: g for t, g in out.items() if t not in subtasks or not subtasks[t]}
    groups = data.get("groups")
    if not isinstance(groups, dict) or not groups:
        return {}
    out, current = {}, None
    for name, metrics in data["results"].items():
        alias = metrics.get("alias", name) if isinstance(metrics, dict) else name
        top = not (isinstance(alias, str) and alias.startswith((" ", "-")))  # lm-eval indents a group's members
        if top:
            current = name if name in groups else None
        elif current is not None:
            out[name] = current
    return out


def group_of(task: str, info: dict) -> str | None:
    """The task's lm-eval group from its results file, else its family for MMLU subjects (``mmlu_*``)."""
    found = (info.get("groups") or {}).get(task)
    if found:
        return found
    return "mmlu" if task.startswith("mmlu_") else None


def _pretrained(model_args: Any) -> str | None:
    if isinstance(model_args, dict):
        return model_args.get("pretrained") or model_args.get("model")
    if isinstance(model_args, str):
        for part in model_args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model"):
                return value.strip()
    return None


def _walk(root: str) -> Iterator[str]:
    fs, base = fsspec.core.url_to_fs(root)
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    for path in sorted(fs.find(base)):
        yield path if protocol in ("file", "local") else f"{protocol}://{path}"


def _metrics(info: dict, task: str) -> dict[str, Any]:
    metrics = (info.get("results") or {}).get(task, {})
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)}


def _run(task: str, date: str | None, path: str, res_path: str | None, info: dict, folder: str) -> LmEvalRun:
    kind = (info.get("output_types") or {}).get(task)
    problem = refusal(task, path, kind, f"output_type in {res_path}") if kind is not None and kind != READABLE else None
    notes = (f"{info['error']}; the model is named after the folder and lm-eval's metrics are unknown",) \
        if "error" in info else ()
    return LmEvalRun(task, date, path, res_path, info.get("model") or PurePosixPath(folder).name, _metrics(info, task),
                     kind, problem, notes, group_of(task, info))


def _early_task(name: str, tasks: list[str]) -> str | None:
    """The longest task of results.json that an early-0.4 samples file name ends with (``<args>_<task>.jsonl``)."""
    found = [t for t in tasks if name.endswith(f"_{t}.jsonl")]
    return max(found, key=len) if found else None


def find_lm_eval_runs(root: str) -> list[LmEvalRun]:
    """Every samples file under ``root`` (both naming schemes) with its model and metrics.

    A results file that cannot be read does not stop the others: 0.4.3-on samples beside it are still
    read (model from the folder name, the reason in ``notes``); early-0.4 samples, whose task only
    results.json can name, become runs with the reason as ``problem``.
    """
    files = list(_walk(root))
    infos: dict[str, dict] = {}
    results: dict[tuple[str, str | None], str] = {}
    for path in files:
        p = PurePosixPath(path)
        m = RESULTS_FILE.search(p.name)
        if m or p.name == EARLY_RESULTS:
            results[(str(p.parent), m.group("date") if m else None)] = path
            try:
                infos[path] = read_lm_eval_results(path)
            except LmEvalError as exc:
                infos[path] = {"error": str(exc)}
    runs = []
    for path in files:
        p = PurePosixPath(path)
        folder = str(p.parent)
        m = SAMPLES_FILE.search(p.name)
        if m:
            res_path = results.get((folder, m.group("date")))
            info = infos.get(res_path, {}) if res_path else {}
            runs.append(_run(m.group("task"), m.group("date"), path, res_path, info, folder))
        elif d := DETAILS_FILE.search(p.name):
            runs.append(_run(d.group("task"), d.group("date"), path, None, {}, folder))
        elif w := WRITE_OUT_FILE.match(p.name):
            res_path = results.get((folder, None))
            runs.append(_run(w.group("task"), None, path, res_path, infos.get(res_path, {}) if res_path else {}, folder))
        elif p.suffix == ".jsonl":
            res_path = results.get((folder, None))
            info = infos.get(res_path, {}) if res_path else {}
            task = _early_task(p.name, info.get("tasks", []))
            if task is None:
                why = (info.get("error") or f"no task of {res_path} ends its name") if res_path else \
                    f"not samples_<task>_<date>.jsonl, and no {EARLY_RESULTS} beside it names its task"
                runs.append(LmEvalRun(p.name.removesuffix(".jsonl"), None, path, res_path,
                                      info.get("model") or PurePosixPath(folder).name, {}, None, f"{path}: {why}"))
                continue
            runs.append(_run(task, None, path, res_path, info, folder))
    if not runs:
        raise LmEvalError(f"{root}: no samples_<task>_<date>.jsonl (or .parquet) files, nor early-0.4 <model args>_<task>.jsonl "
                          "beside results.json, nor v0.3 <task>_write_out_info.json; run lm-eval with --log_samples "
                          "--output_path")
    return runs
