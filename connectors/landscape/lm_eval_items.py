"""The item an lm-eval record scores, read from its document: question, option texts and gold index.

Why the document and not the prompt: the prompt (``arguments``' context) holds a subject preamble, the
options as "A. ..." lines, "Answer:" and any few-shot examples, so it matches no reference question and
its continuations (" A".." D" for MMLU) are not the options' texts. Each task family keeps its item in
known document fields (as lm-eval's task YAMLs read them); a record whose document has none of these
layouts, or whose layout disagrees with the number of scored continuations, falls back to the
``generic`` rule: the first request's context as the question and the continuations as the options.
The rule used is returned so every row can say where its item came from.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

GENERIC = "generic"
LETTER_KEYS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _strings(value: Any) -> list[str] | None:
    return list(value) if isinstance(value, list) and value and all(isinstance(v, str) for v in value) else None


def _index(value: Any, k: int) -> int | None:
    """An integer gold (0-based) or its digit string, when it names one of ``k`` options."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and 0 <= value < k else None


def _keyed(choices: Any, key: Any) -> tuple[list[str], int] | None:
    """``choices {text, label}`` and an answer key naming one label (ARC, CommonsenseQA, OpenBookQA)."""
    if not isinstance(choices, dict):
        return None
    texts, labels = _strings(choices.get("text")), _strings(choices.get("label"))
    if texts is None or labels is None or len(texts) != len(labels) or not isinstance(key, str) or labels.count(key) != 1:
        return None
    return texts, labels.index(key)


def _mmlu(doc: dict) -> tuple[str, list[str], int] | None:
    options = _strings(doc.get("choices"))
    if not isinstance(doc.get("question"), str) or options is None:
        return None
    gold = _index(doc.get("answer"), len(options))
    if gold is None and isinstance(doc.get("answer"), str) and doc["answer"] in LETTER_KEYS[: len(options)]:
        gold = LETTER_KEYS.index(doc["answer"])  # some MMLU copies give the answer as a letter
    return (doc["question"], options, gold) if gold is not None else None


def _arc(doc: dict) -> tuple[str, list[str], int] | None:
    found = _keyed(doc.get("choices"), doc.get("answerKey"))
    return (doc["question"], *found) if found and isinstance(doc.get("question"), str) else None


def _openbookqa(doc: dict) -> tuple[str, list[str], int] | None:
    found = _keyed(doc.get("choices"), doc.get("answerKey"))
    return (doc["question_stem"], *found) if found and isinstance(doc.get("question_stem"), str) else None


def _hellaswag(doc: dict) -> tuple[str, list[str], int] | None:
    """lm-eval's hellaswag ``process_docs`` keeps the raw fields and adds ``query``, ``choices`` (the endings
    cleaned of "[title]" and double spaces) and ``gold``; the cleaned endings are the options it scores."""
    endings = _strings(doc.get("choices")) or _strings(doc.get("endings"))
    ctx = doc.get("ctx")
    if endings is None or not isinstance(ctx, str):
        return None
    gold = _index(doc.get("gold", doc.get("label")), len(endings))
    return (ctx, endings, gold) if gold is not None else None


def _winogrande(doc: dict) -> tuple[str, list[str], int] | None:
    fields = ("sentence", "option1", "option2")
    if any(not isinstance(doc.get(f), str) for f in fields) or doc.get("answer") not in ("1", "2"):
        return None
    return doc["sentence"], [doc["option1"], doc["option2"]], int(doc["answer"]) - 1


def _piqa(doc: dict) -> tuple[str, list[str], int] | None:
    if any(not isinstance(doc.get(f), str) for f in ("goal", "sol1", "sol2")):
        return None
    gold = _index(doc.get("label"), 2)
    return (doc["goal"], [doc["sol1"], doc["sol2"]], gold) if gold is not None else None


def _copa(doc: dict) -> tuple[str, list[str], int] | None:
    """COPA's item is the premise and whether the cause or the effect is asked (lm-eval's ``doc_to_text``
    joins them as "because"/"therefore")."""
    if any(not isinstance(doc.get(f), str) for f in ("premise", "choice1", "choice2", "question")):
        return None
    gold = _index(doc.get("label"), 2)
    question = f"{doc['premise']} ({doc['question']}?)"
    return (question, [doc["choice1"], doc["choice2"]], gold) if gold is not None else None


# Tried in order; the first whose fields the document has (and whose option count equals the scored
# continuations) gives the item. CommonsenseQA shares ARC's layout (question, choices {text, label},
# answerKey), so the task name tells them apart.
RULES: dict[str, Callable[[dict], tuple[str, list[str], int] | None]] = {
    "winogrande": _winogrande, "piqa": _piqa, "copa": _copa, "hellaswag": _hellaswag,
    "openbookqa": _openbookqa, "arc": _arc, "mmlu": _mmlu,
}


def _named_rule(task: str, rule: str) -> str:
    if rule == "arc" and any(part in task.lower() for part in ("commonsense", "csqa")):
        return "commonsense_qa"
    return rule


def document_item(doc: Any, task: str, k: int) -> tuple[str, list[str], int, str] | None:
    """(question, option texts, gold index, rule) from the document of a record scoring ``k`` options,
    or None when no task-family rule reads it (the caller then uses the ``generic`` rule)."""
    if not isinstance(doc, dict):
        return None
    for name, rule in RULES.items():
        found = rule(doc)
        if found is not None and len(found[1]) == k:
            return (*found, _named_rule(task, name))
    return None
