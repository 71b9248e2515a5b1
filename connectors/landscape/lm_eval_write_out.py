"""lm-eval v0.3 ``--write_out`` files (``<task>_write_out_info.json``) as lm-eval 0.4 sample records.

Much of 2023's published evaluation is in this form. lm-eval's v0.3 ``evaluator.evaluate`` (master
branch, ``lm_eval/evaluator.py`` from 2023) writes per task one JSON array (``indent=4``), one object per
document: ``doc_id`` (the position in the task's documents after lm-eval shuffled them with seed 42, not
the dataset's index), ``prompt_<i>`` (request ``i``'s arguments joined: context + continuation),
``logit_<i>`` (its response: the log-likelihood alone where the task took ``[0]`` of it, as
``MultipleChoiceTask`` does, else ``[loglikelihood, is_greedy]``), ``truth`` (the gold index for
``MultipleChoiceTask`` and Winogrande, else ``doc_to_target(doc)``) and each metric as a string
(``"acc": "1.0"``). The file is read record by record like an early-0.4 JSON array
(``lm_eval_records.iter_records``), each object turned into a record here. The document itself is not
written, so items follow the generic rule (``split_prompts`` says where the context ends).
"""
from __future__ import annotations

import os
import re
from typing import Any

from connectors.landscape.lm_eval_records import RecordError

WRITE_OUT_FILE = re.compile(r"(?P<task>.+)_write_out_info\.json$")
_NUMBERED = re.compile(r"(?P<kind>prompt|logit)_(?P<i>\d+)$")


def split_prompts(prompts: list[str]) -> tuple[list[str], list[str]]:
    """(contexts, continuations) of one document's joined prompts: lm-eval's continuations start with the
    target delimiter " ", so the context ends at a space of the prompts' common prefix: the one after the
    last line's "Label:" (v0.3's question-answer prompts end "Answer:"), else the last one. Options that
    share their first words with no such label before them keep those words in the context."""
    if len(prompts) < 2:
        raise RecordError(f"{len(prompts)} prompt(s): a multiple-choice document has one per option")
    prefix = os.path.commonprefix(prompts)
    line = prefix.rfind("\n") + 1
    colon = prefix.rfind(": ", line)  # "Answer: ": options may share their first words ("Planetary days ...")
    cut = colon + 1 if colon >= 0 else prefix.rfind(" ")
    if cut < 0:
        raise RecordError("the prompts share no context ending in a space: cannot tell context from continuation")
    return [p[:cut] for p in prompts], [p[cut:] for p in prompts]


def _numbered(entry: dict, kind: str) -> list[Any]:
    found = {int(m["i"]): v for k, v in entry.items() if (m := _NUMBERED.match(k)) and m["kind"] == kind}
    if sorted(found) != list(range(len(found))):
        raise RecordError(f"{kind}_<i> keys are not 0..{len(found) - 1}")
    return [found[i] for i in range(len(found))]


def _response(value: Any) -> list[Any]:
    """``[loglikelihood, is_greedy]`` of one logit (is_greedy None when the task kept only the number)."""
    if isinstance(value, list) and len(value) == 2:
        return [value[0], value[1]]
    return [value, None]


def as_record(entry: Any) -> dict:
    """One write-out object as an lm-eval 0.4 sample record (list-of-pairs ``arguments``, ``filtered_resps``,
    ``target``, ``acc``), for ``record_row``; a RecordError says why it cannot be one."""
    if not isinstance(entry, dict):
        raise RecordError("not an object")
    prompts, logits = _numbered(entry, "prompt"), _numbered(entry, "logit")
    if not all(isinstance(p, str) for p in prompts):
        raise RecordError("a prompt_<i> is not a string")
    if len(prompts) != len(logits):
        raise RecordError(f"{len(prompts)} prompts for {len(logits)} logits")
    if "truth" not in entry:
        raise RecordError("no truth")
    contexts, continuations = split_prompts(prompts)
    record = {"doc_id": entry.get("doc_id"), "doc": None, "target": entry["truth"],
              "arguments": [[c, t] for c, t in zip(contexts, continuations)],
              "filtered_resps": [_response(v) for v in logits]}
    if "acc" in entry:
        try:
            record["acc"] = float(entry["acc"])
        except (TypeError, ValueError):
            raise RecordError(f"acc {entry['acc']!r:.20} is not a number") from None
    return record
