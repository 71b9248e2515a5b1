"""lm-evaluation-harness outputs: ``--log_samples`` JSONL and ``results_*.json``, for landscapes
without running a model.

lm-eval (``EvaluationTracker.save_results_samples``) writes, per task,
``<output>/<model_name_sanitized>/samples_<task>_<date>.jsonl``: one JSON object per document
and filter with ``doc_id``, ``doc``, ``target`` (written as ``str``), ``arguments``
(``{"gen_args_<i>": {"arg_0": context, "arg_1": continuation}}``; older versions wrote a list of
pairs), ``resps``, ``filtered_resps`` (for a multiple-choice task one ``[loglikelihood,
is_greedy]`` per option, values written as strings by ``sanitize_list``), ``filter`` and the
metric values. ``results_<date>.json`` beside it holds ``results[task]["acc,none"]``, the
``config`` (``model``, ``model_args``) and ``model_name``.

**What the numbers are.** lm-eval scores each option as a continuation of the context: the
summed log-likelihood of the option's tokens (``" Paris"``), one sequence per option. A softmax
over those is a different distribution from the final-position label distribution this suite's
backends read (one forward, the letters ``A``..``D``): long options are penalised, and nothing
says where the rest of the mass went. Rows carry ``probability = "continuation_loglikelihood"``
and a report must say which kind it shows.
"""
from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import fsspec
import pyarrow as pa

from audit.mcqa.items import gold_index_problem, options_problem

PROBABILITY_KIND = "continuation_loglikelihood"
SAMPLES_FILE = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl$")
RESULTS_FILE = re.compile(r"results_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.json$")
SAMPLE_SCHEMA = pa.schema([
    ("id", pa.string()), ("source_id", pa.string()), ("benchmark", pa.string()), ("perturbation", pa.string()),
    ("variant", pa.int64()), ("doc_id", pa.int64()), ("question", pa.string()), ("options", pa.list_(pa.string())),
    ("k", pa.int64()), ("gold", pa.int64()), ("option_logprobs", pa.list_(pa.float64())),
    ("is_greedy", pa.list_(pa.bool_())), ("filter", pa.string()), ("probability", pa.string()), ("error", pa.string()),
])


class LmEvalError(ValueError):
    """An lm-eval output that cannot be read as a multiple-choice samples file (names the file)."""


@dataclass(frozen=True)
class LmEvalSamples:
    """One samples file: scorable rows (``SAMPLE_SCHEMA``), and the rows left out with reasons."""

    path: str
    task: str
    date: str | None
    table: pa.Table
    rejected: list[dict[str, Any]] = field(default_factory=list)
    probability: str = PROBABILITY_KIND


@dataclass(frozen=True)
class LmEvalRun:
    """A samples file with the model and metrics of its ``results_<date>.json`` (when present)."""

    task: str
    date: str
    samples_path: str
    results_path: str | None
    model: str
    metrics: dict[str, Any]


def _float(value: Any) -> float:
    if isinstance(value, bool):
        raise TypeError("a log-likelihood, not a boolean")
    return float(value)  # "nan", "-inf" and numbers; anything else raises ValueError


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("True", "true"):
        return True
    if value in ("False", "false"):
        return False
    raise ValueError(f"{value!r} is not a boolean")


def _pairs(arguments: Any) -> list[tuple[str, str]]:
    """(context, continuation) per request, from the sanitised dict or the older list layout."""
    if isinstance(arguments, dict):
        keys = sorted(arguments, key=lambda k: int(k.rsplit("_", 1)[-1]))
        return [(arguments[k]["arg_0"], arguments[k]["arg_1"]) for k in keys]
    return [(a[0], a[1]) for a in arguments]


def _response(resp: Any) -> tuple[float, bool]:
    """One option's ``[loglikelihood, is_greedy]`` (unwrapping the ``resps`` nesting if present)."""
    while isinstance(resp, list) and resp and isinstance(resp[0], list):
        resp = resp[0]
    if not isinstance(resp, (list, tuple)) or len(resp) != 2:
        raise ValueError(f"expected [loglikelihood, is_greedy], got {resp!r:.80}")
    return _float(resp[0]), _bool(resp[1])


def _gold(target: str, options: list[str]) -> int | str:
    """Gold index from lm-eval's stringified target: an index, or the text of one option."""
    text = str(target).strip()
    if text.isdigit():
        return int(text)
    if text.startswith("["):
        try:
            if isinstance(ast.literal_eval(text), list):
                return "several gold targets; the landscape needs exactly one"
        except (ValueError, SyntaxError):
            pass
    hits = [i for i, o in enumerate(options) if o.strip() == text]
    return hits[0] if len(hits) == 1 else f"target {text!r:.60} is neither an index nor one option's text"


def _row(record: dict[str, Any], task: str) -> dict[str, Any]:
    pairs = _pairs(record["arguments"])
    resps = [_response(r) for r in record["filtered_resps"]]
    if len(resps) != len(pairs):
        raise ValueError(f"{len(resps)} filtered_resps for {len(pairs)} requests")
    if any(ctx == "" for ctx, _ in pairs) and 2 * sum(ctx == "" for ctx, _ in pairs) == len(pairs):
        keep = [i for i, (ctx, _) in enumerate(pairs) if ctx != ""]  # acc_mutual_info's unconditional half
        pairs, resps = [pairs[i] for i in keep], [resps[i] for i in keep]
    contexts = {ctx for ctx, _ in pairs}
    continuations = [cont for _, cont in pairs]
    # multiple_input tasks (winogrande) vary the context and share the continuation
    options = [ctx for ctx, _ in pairs] if len(contexts) > 1 and len(set(continuations)) == 1 else [c.strip() for c in continuations]
    gold = _gold(record.get("target", ""), options)
    filt = str(record.get("filter", "none"))
    doc_id = int(record["doc_id"])
    item_id = f"{task}:{doc_id}" if filt == "none" else f"{task}:{doc_id}@{filt}"
    found = None if isinstance(gold, str) else (options_problem(options) or gold_index_problem(gold, len(options)))
    problem = gold if isinstance(gold, str) else (f"{found[0]}: {found[1]}" if found else None)
    return {"id": item_id, "source_id": item_id, "benchmark": task, "perturbation": "none", "variant": 0, "doc_id": doc_id,
            "question": pairs[0][0] if len(contexts) == 1 else "", "options": options, "k": len(options),
            "gold": None if isinstance(gold, str) else gold, "option_logprobs": [r[0] for r in resps],
            "is_greedy": [r[1] for r in resps], "filter": filt, "probability": PROBABILITY_KIND, "problem": problem}


def read_lm_eval_samples(path: str, task: str | None = None) -> LmEvalSamples:
    """Read one ``samples_<task>_<date>.jsonl``; bad rows are returned with their line and reason.

    A file whose responses are text (a ``generate_until`` task) is an error, not a set of
    rejections: nothing in it is a log-likelihood.
    """
    name = PurePosixPath(path).name
    match = SAMPLES_FILE.search(name)
    task = task or (match.group("task") if match else name.removesuffix(".jsonl"))
    rows, rejected = [], []
    with fsspec.open(path, "rt", encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                row = _row(record, task)
            except json.JSONDecodeError as exc:
                rejected.append({"line": line_no, "id": None, "reason": f"not JSON ({exc.msg})"})
                continue
            except (KeyError, ValueError, TypeError, IndexError) as exc:
                resps = record.get("filtered_resps") if isinstance(record, dict) else None
                if line_no == 1 and resps and all(isinstance(r, str) for r in resps) and not _numeric(resps[0]):
                    raise LmEvalError(f"{path}: line 1: filtered_resps hold text, not log-likelihoods; "
                                      "only multiple-choice (loglikelihood) tasks have a landscape") from exc
                rejected.append({"line": line_no, "id": f"{task}:{record.get('doc_id')}", "reason": f"{type(exc).__name__}: {exc}"})
                continue
            problem = row.pop("problem")
            if problem:
                rejected.append({"line": line_no, "id": row["id"], "reason": problem})
                continue
            row["error"] = None
            rows.append(row)
    if not rows and not rejected:
        raise LmEvalError(f"{path}: no samples")
    table = pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)
    return LmEvalSamples(path, task, match.group("date") if match else None, table, rejected)


def _numeric(value: str) -> bool:
    try:
        float(value)
        return True
    except ValueError:
        return False


def read_lm_eval_results(path: str) -> dict[str, Any]:
    """``results_<date>.json``: model name, model args and per-task metrics (``"acc,none"`` ...)."""
    with fsspec.open(path, "rt", encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise LmEvalError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or "results" not in data:
        raise LmEvalError(f"{path}: no 'results' object; not an lm-eval results file")
    config = data.get("config") or {}
    model = data.get("model_name") or _pretrained(config.get("model_args")) or config.get("model")
    return {"model": model, "model_args": config.get("model_args"), "results": data["results"],
            "n_samples": data.get("n-samples", {}), "versions": data.get("versions", {}), "path": path}


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


def find_lm_eval_runs(root: str) -> list[LmEvalRun]:
    """Every samples file under ``root`` with its model: from the ``results_<date>.json`` of the
    same folder and date when there is one, else the folder name (lm-eval's sanitised model name)."""
    files = list(_walk(root))
    results = {}
    for path in files:
        m = RESULTS_FILE.search(PurePosixPath(path).name)
        if m:
            results[(str(PurePosixPath(path).parent), m.group("date"))] = path
    runs = []
    for path in files:
        m = SAMPLES_FILE.search(PurePosixPath(path).name)
        if not m:
            continue
        folder = str(PurePosixPath(path).parent)
        res_path = results.get((folder, m.group("date")))
        info = read_lm_eval_results(res_path) if res_path else {}
        metrics = (info.get("results") or {}).get(m.group("task"), {})
        runs.append(LmEvalRun(m.group("task"), m.group("date"), path, res_path, info.get("model") or PurePosixPath(folder).name,
                              {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not math.isnan(v)}))
    if not runs:
        raise LmEvalError(f"{root}: no samples_<task>_<date>.jsonl files (run lm-eval with --log_samples --output_path)")
    return runs
