"""One lm-evaluation-harness samples file, record by record, as landscape rows or named rejections.

Two layouts, both real (lm-eval's ``evaluator.py`` builds the record, its writers differ):
- 0.4.3 on (``EvaluationTracker.save_results_samples``): JSON lines, one object per document and
  filter; ``arguments`` as ``{"gen_args_<i>": {"arg_0": context, "arg_1": continuation}}``,
  ``resps``/``filtered_resps`` values as strings (``sanitize_list``), ``target`` as ``str``.
- 0.4.0-0.4.2 (``__main__.py``): one JSON array, ``indent=2``, in a file still named ``.jsonl``;
  ``arguments`` as a list of pairs, numbers and booleans as JSON values, ``target`` as written by the
  task (an int for an index), no ``filter`` key (``none``). A record is named by the line it starts on.

What a record means follows lm-eval's ``ConfigurableTask.process_results`` for ``multiple_choice``:
the prediction is the argmax of the per-option log-likelihoods (first on ties); with
``acc_mutual_info`` the requests are doubled by the unconditional ``("", option)`` pairs (after the
options from 0.4.3, interleaved with them before), and ``acc`` reads the conditional ones. A
``multiple_input`` task (Winogrande, "partial scoring") puts the options in the contexts and scores
one shared continuation; its gold index is ``doc_to_text(doc)``, which the samples do not record,
so it is read from the document's Winogrande fields (``sentence``, ``option1``, ``option2``,
``answer`` "1"/"2"), as lm-eval's winogrande and xwinograd tasks define it.
Where a record carries lm-eval's own ``acc``, the row's correctness must equal it, or the record is
rejected: what the landscape shows is what lm-eval scored.

A bad record is a rejection naming its line and reason (not JSON, not UTF-8, not an object, a
``doc_id`` that is not an integer or repeats, ...); a file whose requests are not multiple choice
(``generate_until``, ``loglikelihood_rolling``, ``loglikelihood``) is an ``LmEvalError``.
"""
from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from audit.mcqa.items import LETTERS, gold_index_problem, options_problem

PROBABILITY_KIND = "continuation_loglikelihood"
SAMPLE_SCHEMA = pa.schema([
    ("id", pa.string()), ("source_id", pa.string()), ("benchmark", pa.string()), ("perturbation", pa.string()),
    ("variant", pa.int64()), ("doc_id", pa.int64()), ("question", pa.string()), ("options", pa.list_(pa.string())),
    ("k", pa.int64()), ("gold", pa.int64()), ("option_logprobs", pa.list_(pa.float64())),
    ("is_greedy", pa.list_(pa.bool_())), ("filter", pa.string()), ("lm_eval_acc", pa.float64()),
    ("probability", pa.string()), ("error", pa.string()),
])
WINOGRANDE_ANSWER = {"1": 0, "2": 1}  # lm-eval's winogrande/xwinograd doc_to_text


class LmEvalError(ValueError):
    """An lm-eval output that cannot be read as a multiple-choice samples file (names the file)."""


class RecordError(ValueError):
    """One record that cannot be a landscape row; the message is the reason."""


def iter_records(path: str, raw: bytes) -> Iterator[tuple[int, Any, str | None]]:
    """(line, record, problem) per record of a samples file's bytes; ``problem`` set when the record is unreadable.

    The early layout is told by its first line, ``[`` alone (``json.dumps(..., indent=2)`` of a list); a
    JSON-lines file whose first line is an array (``[1, 2]``) is JSON lines with a bad first line.
    """
    if raw.lstrip().split(b"\n", 1)[0].strip() == b"[" or raw.strip() == b"[]":
        yield from _array_records(path, raw)
        return
    for line_no, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield line_no, None, f"not UTF-8 (byte 0x{line[exc.start]:02x} at byte {exc.start + 1} of the line)"
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            yield line_no, None, f"not JSON ({exc.msg})"
            continue
        yield line_no, record, None


def _array_records(path: str, raw: bytes) -> Iterator[tuple[int, Any, str | None]]:
    """The records of an early-0.4 file (one JSON array), each numbered by the line it starts on."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise LmEvalError(f"{path}: line {line}: not UTF-8 (byte 0x{raw[exc.start]:02x}); a JSON-array samples file "
                          "(lm-eval 0.4.0-0.4.2) is one document, so nothing of it can be read") from exc
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    while True:
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == "]":
            return
        line = text.count("\n", 0, pos) + 1
        try:
            record, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise LmEvalError(f"{path}: line {line}: the record starting there is not JSON ({exc.msg} at line "
                              f"{exc.lineno}); a JSON-array samples file (lm-eval 0.4.0-0.4.2) is one document, so "
                              "nothing of it can be read") from exc
        yield line, record, None
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos += 1


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def request_kind(record: dict) -> str:
    """What lm-eval asked the model, from the shape of one record's ``arguments``: ``multiple_choice``,
    ``generate_until`` (a context and generation kwargs), ``loglikelihood_rolling`` (one text, no
    continuation) or ``loglikelihood`` (one context and one continuation)."""
    args = _arguments(record.get("arguments"))
    if any(len(a) == 1 for a in args):
        return "loglikelihood_rolling"
    if any(isinstance(a[1], dict) for a in args):
        return "generate_until"
    return "loglikelihood" if len(args) == 1 else "multiple_choice"


def _arguments(arguments: Any) -> list[list[Any]]:
    """Each request's arguments in order, from the sanitised dict (0.4.3 on) or the list of lists (0.4.0-0.4.2)."""
    if isinstance(arguments, dict):
        try:
            keys = sorted(arguments, key=lambda k: int(str(k).rsplit("_", 1)[-1]))
        except ValueError:
            raise RecordError(f"arguments keys {sorted(arguments)!r:.80} are not gen_args_<i>") from None
        out = []
        for key in keys:
            value = arguments[key]
            if not isinstance(value, dict):
                raise RecordError(f"arguments[{key!r}] is not an object")
            out.append([value[k] for k in sorted(value, key=lambda k: int(str(k).rsplit("_", 1)[-1]))])
        return out
    if isinstance(arguments, list) and all(isinstance(a, list) for a in arguments):
        return arguments
    raise RecordError(f"arguments is neither the gen_args_<i> object nor a list of requests: {arguments!r:.80}")


def _pairs(record: dict) -> list[tuple[str, str]]:
    args = _arguments(record.get("arguments"))
    if not args:
        raise RecordError("no requests in arguments")
    for i, a in enumerate(args):
        if len(a) != 2 or not isinstance(a[0], str) or not isinstance(a[1], str):
            raise RecordError(f"request {i} is not a (context, continuation) pair of strings: {a!r:.80}")
    return [(a[0], a[1]) for a in args]


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RecordError(f"log-likelihood {value!r:.40} is not a number")
    try:
        return float(value)  # "nan", "-inf" and numbers
    except ValueError:
        raise RecordError(f"log-likelihood {value!r:.40} is not a number") from None


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("True", "False"):
        return value == "True"
    raise RecordError(f"is_greedy {value!r:.40} is not a boolean")


def _responses(record: dict) -> list[tuple[float, bool]]:
    """Each request's ``[loglikelihood, is_greedy]`` from ``filtered_resps``."""
    resps = record.get("filtered_resps")
    if not isinstance(resps, list):
        raise RecordError("no filtered_resps list")
    out = []
    for resp in resps:
        if not isinstance(resp, list) or len(resp) != 2:
            raise RecordError(f"filtered_resps entry {resp!r:.60} is not [loglikelihood, is_greedy]")
        out.append((_float(resp[0]), _bool(resp[1])))
    return out


def doc_id_of(record: dict) -> int:
    """The record's ``doc_id``: a JSON integer (not a bool, not 1.7, not "3"), or a RecordError."""
    if "doc_id" not in record:
        raise RecordError("no doc_id")
    value = record["doc_id"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"doc_id {json.dumps(value)[:40]} is not an integer")
    return value


def _gold_from_target(target: Any, options: list[str]) -> int:
    """lm-eval's gold for a single-input task: an int is the index; a digit string is one (``doc_to_target``
    templates render to text, which lm-eval reads back as an index); other text names the option it equals."""
    if isinstance(target, list):
        raise RecordError(f"several gold targets {target!r:.40}; the landscape needs exactly one")
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    text = str(target)
    if text.strip().isdigit():
        return int(text)
    if text.startswith("[") and text.endswith("]"):
        try:
            if isinstance(ast.literal_eval(text), list):
                raise RecordError(f"several gold targets {text!r:.40}; the landscape needs exactly one")
        except (ValueError, SyntaxError):
            pass
    hits = [i for i, o in enumerate(options) if o == text.strip()]
    if len(hits) != 1:
        raise RecordError(f"target {text!r:.60} is neither an index nor the text of one option")
    return hits[0]


def _winogrande(doc: Any, contexts: list[str]) -> tuple[str, list[str], int]:
    """(sentence, [option1, option2], gold) of a multiple-input record, from its Winogrande-layout document."""
    fields = ("sentence", "option1", "option2", "answer")
    if not isinstance(doc, dict) or any(not isinstance(doc.get(f), str) for f in fields):
        raise RecordError("multiple_input record (the options are the contexts): lm-eval takes its gold from the task's "
                          "doc_to_text, which the samples do not record; only documents with Winogrande's sentence, "
                          "option1, option2 and answer can be read")
    if doc["answer"] not in WINOGRANDE_ANSWER:
        raise RecordError(f"answer {doc['answer']!r:.20} is not '1' or '2'")
    if len(contexts) != 2:
        raise RecordError(f"{len(contexts)} contexts for Winogrande's two options")
    stem = doc["sentence"].split("_", 1)[0]
    for i, (context, option) in enumerate(zip(contexts, (doc["option1"], doc["option2"]))):
        if stem + option not in context:
            raise RecordError(f"context {i} does not contain option{i + 1} {option!r:.40} after the sentence's start")
    return doc["sentence"], [doc["option1"], doc["option2"]], WINOGRANDE_ANSWER[doc["answer"]]


def _unconditional_layout(pairs: list[tuple[str, str]]) -> str | None:
    """Where an ``acc_mutual_info`` record's unconditional ``("", option)`` requests are: ``"after"`` the
    options (lm-eval 0.4.3 on, ``lls[:k]``), ``"interleaved"`` with them (0.4.0-0.4.2, ``lls[::2]``), or None.
    Nothing else has exactly half its contexts empty in either pattern: a single-input task has one
    context for every option."""
    n = len(pairs)
    empty = [i for i, (ctx, _) in enumerate(pairs) if ctx == ""]
    if n % 2 or len(empty) != n // 2:
        return None
    if empty == list(range(n // 2, n)):
        return "after"
    return "interleaved" if empty == list(range(1, n, 2)) else None


def _conditional(pairs: list[tuple[str, str]], resps: list[tuple[float, bool]]):
    """The conditional requests and responses of an ``acc_mutual_info`` record."""
    layout = _unconditional_layout(pairs)
    if layout is None:
        raise RecordError("acc_mutual_info record whose unconditional ('', option) requests are neither the second half "
                          "nor every other request")
    return (pairs[: len(pairs) // 2], resps[: len(pairs) // 2]) if layout == "after" else (pairs[::2], resps[::2])


def record_row(record: dict, task: str) -> dict[str, Any]:
    """One record as a landscape row (``SAMPLE_SCHEMA`` fields), or a RecordError with the reason."""
    doc_id = doc_id_of(record)
    pairs = _pairs(record)
    resps = _responses(record)
    if len(resps) != len(pairs):
        raise RecordError(f"{len(resps)} filtered_resps for {len(pairs)} requests")
    metrics = record.get("metrics") if isinstance(record.get("metrics"), list) else list(record)
    if "acc_mutual_info" in metrics or (len(pairs) > 2 and _unconditional_layout(pairs)):
        pairs, resps = _conditional(pairs, resps)
    contexts = [ctx for ctx, _ in pairs]
    continuations = [cont for _, cont in pairs]
    gold: int | None = None
    if len(set(contexts)) > 1 and len(set(continuations)) == 1:
        question, options, gold = _winogrande(record.get("doc"), contexts)
    else:
        question, options = contexts[0], [c.strip() for c in continuations]
    problem = options_problem(options)
    if problem is None:
        gold = _gold_from_target(record.get("target"), options) if gold is None else gold
        problem = gold_index_problem(gold, len(options))
    if problem:
        raise RecordError(f"{problem[0]}: {problem[1]}")
    lls = [r[0] for r in resps]
    acc = record.get("acc")
    lm_eval_acc = float(acc) if isinstance(acc, (int, float)) and not isinstance(acc, bool) else None
    if lm_eval_acc is not None and not np.isnan(lls).any() and float(int(np.argmax(lls)) == gold) != lm_eval_acc:
        raise RecordError(f"the gold option {LETTERS[gold]} read here disagrees with lm-eval's own acc "
                          f"{lm_eval_acc:g} for this record")
    filt = str(record.get("filter", "none"))
    item_id = f"{task}:{doc_id}" if filt == "none" else f"{task}:{doc_id}@{filt}"
    return {"id": item_id, "source_id": item_id, "benchmark": task, "perturbation": "none", "variant": 0, "doc_id": doc_id,
            "question": question, "options": options, "k": len(options), "gold": gold, "option_logprobs": lls,
            "is_greedy": [r[1] for r in resps], "filter": filt, "lm_eval_acc": lm_eval_acc,
            "probability": PROBABILITY_KIND, "error": None}
