"""One lm-evaluation-harness samples file, record by record, as landscape rows or named rejections.

The record layouts, all real (lm-eval's ``evaluator.py`` builds the record, its writers differ; v0.3
write-out objects and first-leaderboard details rows are turned into records by
``lm_eval_write_out`` and ``lm_eval_details``):
- 0.4.3 on (``EvaluationTracker.save_results_samples``): JSON lines, one object per document and
  filter; ``arguments`` as ``{"gen_args_<i>": {"arg_0": context, "arg_1": continuation}}``,
  ``resps``/``filtered_resps`` values as strings (``sanitize_list``), ``target`` as ``str``.
- 0.4.0-0.4.2 (``__main__.py``): one JSON array, ``indent=2``, in a file still named ``.jsonl``;
  ``arguments`` as a list of pairs, numbers and booleans as JSON values, ``target`` as written by the
  task (an int for an index), no ``filter`` key (``none``). A record is named by the line it starts on.
- the 0.4.3-on records as Parquet rows (``iter_parquet_records``), named by their row.

What a record means follows lm-eval's ``ConfigurableTask.process_results`` for ``multiple_choice``:
the prediction is the argmax of the per-option log-likelihoods (first on ties); with
``acc_mutual_info`` the requests are doubled by the unconditional ``("", option)`` pairs (after the
options from 0.4.3, interleaved with them before), and ``acc`` reads the conditional ones. A
``multiple_input`` task (Winogrande, "partial scoring") puts the options in the contexts and scores
one shared continuation (early 0.4 could keep only one flat ``[context, continuation]`` pair beside
one answer per option); its gold index is ``doc_to_text(doc)``, which the samples do not record, so
it is read from the document's Winogrande fields.
Where a record carries lm-eval's own ``acc``, the row's correctness must equal it, or the record is
rejected: what the landscape shows is what lm-eval scored.

The item (question, option texts, gold) comes from the document by task family
(``connectors.landscape.lm_eval_items``), the rule named in ``item_rule``. The probability is said per
row: ``letters`` where every continuation is a single option label (" A".." D", MMLU's default prompt):
the log-likelihoods are the letter distribution at one position restricted to the labels, and their
mass Σ exp(loglik) is the row's ``label_mass``; otherwise ``continuations``: each option's summed
continuation log-likelihood, ``raw`` or divided by its length in characters (``length``, lm-eval's
``acc_norm``), with no label mass.

A bad record is a rejection naming its line and reason (not JSON, not UTF-8, not an object, a
``doc_id`` that is not an integer or repeats, ...); a file whose requests are not multiple choice
(``generate_until``, ``loglikelihood_rolling``, ``loglikelihood``) is an ``LmEvalError``.
"""
from __future__ import annotations

import ast
import json
import math
from collections.abc import Iterator
from typing import Any

import fsspec
import numpy as np
import pyarrow as pa

from audit.mcqa.items import LETTERS, gold_index_problem, options_problem
from connectors.landscape.lm_eval_items import GENERIC, document_item

LETTER_PROBABILITY = "letters"  # every continuation a single option label: the letter distribution, with its label mass
CONTINUATION_PROBABILITY = "continuations"  # the options' continuation log-likelihoods, raw or per character
NORMALISATIONS = ("raw", "length")
SAMPLE_SCHEMA = pa.schema([
    ("id", pa.string()), ("source_id", pa.string()), ("benchmark", pa.string()), ("perturbation", pa.string()),
    ("variant", pa.int64()), ("doc_id", pa.int64()), ("question", pa.string()), ("options", pa.list_(pa.string())),
    ("k", pa.int64()), ("gold", pa.int64()), ("option_logprobs", pa.list_(pa.float64())),
    ("is_greedy", pa.list_(pa.bool_())), ("filter", pa.string()), ("lm_eval_acc", pa.float64()),
    ("probability", pa.string()), ("error", pa.string()),
    ("continuations", pa.list_(pa.string())), ("label_mass", pa.float64()), ("item_rule", pa.string()),
    ("task", pa.string()), ("group", pa.string()), ("model", pa.string()),
])
INT64 = (-(2**63), 2**63 - 1)


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
        except (ValueError, RecursionError) as exc:  # an integer over Python's digit limit, nesting past the stack
            yield line_no, None, f"not readable JSON ({type(exc).__name__}: {str(exc)[:80]})"
            continue
        yield line_no, record, None


def iter_parquet_records(path: str, batch_rows: int = 1024) -> Iterator[tuple[int, Any, str | None]]:
    """(row, record, None) per row of a samples table stored as Parquet: the Open LLM Leaderboard's "details"
    datasets are lm-eval's ``samples_<task>_<date>.jsonl`` pushed by ``EvaluationTracker`` and served by the
    Hub as Parquet, one row per record, the JSON objects as structs (``arguments.gen_args_<i>``: null where a
    record has fewer requests than the widest one), ``resps``/``filtered_resps`` as lists of strings.
    Rows are numbered from 1, read batch by batch."""
    import pyarrow.parquet as pq

    try:
        handle = fsspec.open(path, "rb").open()
        parquet = pq.ParquetFile(handle)
    except (OSError, ValueError) as exc:
        raise LmEvalError(f"{path}: not a Parquet file ({str(exc)[:120]})") from exc
    row = 0
    with handle:
        batches = parquet.iter_batches(batch_size=batch_rows)
        while True:
            try:
                batch = next(batches, None)
            except (OSError, ValueError) as exc:  # a damaged row group: what follows row N cannot be located
                raise LmEvalError(f"{path}: row {row + 1} on: unreadable Parquet ({str(exc)[:120]})") from exc
            if batch is None:
                return
            for record in batch.to_pylist():
                row += 1
                yield row, record, None


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
    resps = record.get("filtered_resps")
    several = isinstance(resps, list) and len(resps) > 1  # one flat pair scored once per option: partial evaluation
    return "loglikelihood" if len(args) == 1 and not several else "multiple_choice"


def _arguments(arguments: Any) -> list[list[Any]]:
    """Each request's arguments in order, from the sanitised dict (0.4.3 on; as Parquet rows a struct whose
    requests a shorter record lacks are null), the list of lists (0.4.0-0.4.2), or one flat
    ``[context, continuation]`` pair (early-0.4 partial evaluation, one answer per option in ``resps``)."""
    if isinstance(arguments, list) and len(arguments) == 2 and all(isinstance(a, str) for a in arguments):
        return [list(arguments)]
    if isinstance(arguments, dict):
        arguments = {k: v for k, v in arguments.items() if v is not None}
        try:
            keys = sorted(arguments, key=lambda k: int(str(k).rsplit("_", 1)[-1]))
        except ValueError:
            raise RecordError(f"arguments keys {sorted(arguments)!r:.80} are not gen_args_<i>") from None
        out = []
        for key in keys:
            value = arguments[key]
            if not isinstance(value, dict):
                raise RecordError(f"arguments[{key!r}] is not an object")
            out.append([value[k] for k in sorted(value, key=lambda k: int(str(k).rsplit("_", 1)[-1]))
                        if value[k] is not None])
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


def _bool(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value  # None: not recorded (lm-eval v0.3 kept only the log-likelihood of MultipleChoiceTask requests)
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
    if not INT64[0] <= value <= INT64[1]:
        raise RecordError(f"doc_id is a {value.bit_length()}-bit integer, beyond the 64 bits of a document index")
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


def _partial(doc: Any, task: str, contexts: list[str] | None, k: int) -> tuple[str, list[str], int]:
    """(sentence, [option1, option2], gold) of a multiple-input record (the options are in the contexts, one
    continuation shared), from its Winogrande-layout document. ``contexts`` is None when the record keeps one
    flat pair for all its answers (early 0.4); otherwise each context must hold its option."""
    found = document_item(doc, task, k)
    if found is None or found[3] != "winogrande":
        raise RecordError("multiple_input record (the options are the contexts): lm-eval takes its gold from the task's "
                          "doc_to_text, which the samples do not record; only documents with Winogrande's sentence, "
                          "option1, option2 and answer '1'/'2' can be read")
    sentence, options, gold, _ = found
    stem = sentence.split("_", 1)[0]
    for i, (context, option) in enumerate(zip(contexts or [], options)):
        if stem + option not in context:
            raise RecordError(f"context {i} does not contain option{i + 1} {option!r:.40} after the sentence's start")
    return sentence, options, gold


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


def _scored_length(continuation: str) -> int:
    """The characters lm-eval's acc_norm divides by: the choice without the target delimiter (" ") the
    request put before it (``len(choice)`` of ``doc_to_choice`` in ``process_results``); at least 1."""
    return max(len(continuation[1:] if continuation.startswith(" ") else continuation), 1)


def is_letter_task(continuations: list[str]) -> bool:
    """Every continuation a single option label in order (" A", " B", ...): its log-likelihoods are the
    letter distribution at one position, restricted to the labels, so their mass means what it means for a
    model run."""
    return [c.strip() for c in continuations] == list(LETTERS[: len(continuations)])


def probabilities(lls: list[float], continuations: list[str], normalization: str) -> tuple[list[float], str, float]:
    """(option log-probabilities, probability kind, label mass) of one record's conditional log-likelihoods."""
    if is_letter_task(continuations):
        return lls, LETTER_PROBABILITY, math.fsum(math.exp(x) for x in lls)
    if normalization == "length":
        lls = [x / _scored_length(c) for x, c in zip(lls, continuations)]
    return lls, CONTINUATION_PROBABILITY, float("nan")


def _item(record: dict, task: str, contexts: list[str] | None, continuations: list[str]) -> tuple[str, list[str], int, str]:
    """(question, options, gold, rule): a partial evaluation's from its Winogrande document; otherwise the task
    family's document fields, else the generic rule (first context, stripped continuations, gold from target)."""
    k = len(continuations)
    if contexts is None or (len(set(contexts)) > 1 and len(set(continuations)) == 1):
        return (*_partial(record.get("doc"), task, contexts, k), "winogrande")
    found = document_item(record.get("doc"), task, k)
    if found is not None:
        question, options, gold, rule = found
    else:
        question, options, rule = contexts[0], [c.strip() for c in continuations], GENERIC
        gold = None
    # what lm-eval scored must be k distinct continuations; two documents' options reading alike (an MMLU item
    # with options A and B both "687") is the item's defect to report, not a reason to drop what was scored
    problem = options_problem([c.strip() for c in continuations])
    if problem is None:
        gold = _gold_from_target(record.get("target"), options) if gold is None else gold
        problem = gold_index_problem(gold, len(options))
    if problem:
        raise RecordError(f"{problem[0]}: {problem[1]}")
    return question, options, gold, rule


def record_row(record: dict, task: str, normalization: str = "raw", model: str | None = None,
               group: str | None = None) -> dict[str, Any]:
    """One record as a landscape row (``SAMPLE_SCHEMA`` fields), or a RecordError with the reason."""
    doc_id = doc_id_of(record)
    pairs = _pairs(record)
    resps = _responses(record)
    flat = len(pairs) == 1 and len(resps) > 1  # early 0.4 partial evaluation: one pair kept, one answer per option
    if flat:
        contexts, continuations = None, [pairs[0][1]] * len(resps)
    else:
        if len(resps) != len(pairs):
            raise RecordError(f"{len(resps)} filtered_resps for {len(pairs)} requests")
        metrics = record.get("metrics") if isinstance(record.get("metrics"), list) else list(record)
        if "acc_mutual_info" in metrics or (len(pairs) > 2 and _unconditional_layout(pairs)):
            pairs, resps = _conditional(pairs, resps)
        contexts, continuations = [ctx for ctx, _ in pairs], [cont for _, cont in pairs]
    question, options, gold, rule = _item(record, task, contexts, continuations)
    lls = [r[0] for r in resps]
    acc = record.get("acc")
    lm_eval_acc = float(acc) if isinstance(acc, (int, float)) and not isinstance(acc, bool) else None
    if lm_eval_acc is not None and not np.isnan(lls).any() and float(int(np.argmax(lls)) == gold) != lm_eval_acc:
        raise RecordError(f"the gold option {LETTERS[gold]} read here disagrees with lm-eval's own acc "
                          f"{lm_eval_acc:g} for this record")
    option_logprobs, kind, mass = probabilities(lls, continuations, normalization)
    filt = str(record.get("filter", "none"))
    item_id = f"{task}:{doc_id}" if filt == "none" else f"{task}:{doc_id}@{filt}"
    return {"id": item_id, "source_id": item_id, "benchmark": task, "perturbation": "none", "variant": 0, "doc_id": doc_id,
            "question": question, "options": options, "k": len(options), "gold": gold, "option_logprobs": option_logprobs,
            "is_greedy": [r[1] for r in resps], "filter": filt, "lm_eval_acc": lm_eval_acc,
            "probability": kind, "error": None, "continuations": continuations, "label_mass": mass, "item_rule": rule,
            "task": task, "group": group, "model": model}
