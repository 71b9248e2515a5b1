"""Items of the shared benchmark schema as single-answer multiple-choice problems with letters.

The audit asks for one option letter, so an item qualifies only when it has between 2 and 26
options and exactly one gold answer text that names exactly one option. Anything else is counted
by reason (``INELIGIBLE``) and never drawn, so a sample of n is n answerable questions.

Items are mappings with the fields of ``connectors.benchmarks.ITEM_SCHEMA`` (``id``, ``benchmark``,
``question``, ``passage``, ``instructions``, ``options``, ``gold``); gold holds answer texts.
"""
from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

LETTERS = string.ascii_uppercase
MIN_OPTIONS = 2

# reason -> what it means (reported with the counts)
INELIGIBLE = {
    "no_options": "fewer than two options, so not a multiple-choice question",
    "too_many_options": f"more than {len(LETTERS)} options, more than there are letters",
    "no_gold": "no gold answer",
    "multiple_gold": "more than one gold answer, so no single correct letter",
    "gold_not_in_options": "the gold answer is not one of the options",
    "ambiguous_gold": "the gold answer text appears as more than one option",
}

Item = Mapping[str, Any]


def ineligibility(item: Item) -> str | None:
    """Why ``item`` cannot be asked as one-letter multiple choice (a key of ``INELIGIBLE``), or None."""
    options = list(item.get("options") or [])
    gold = list(item.get("gold") or [])
    if len(options) < MIN_OPTIONS:
        return "no_options"
    if len(options) > len(LETTERS):
        return "too_many_options"
    if not gold:
        return "no_gold"
    if len(gold) > 1:
        return "multiple_gold"
    hits = options.count(gold[0])
    if hits == 0:
        return "gold_not_in_options"
    if hits > 1:
        return "ambiguous_gold"
    return None


def letters(item: Item) -> tuple[str, ...]:
    """The option letters of ``item``: A, B, ... one per option."""
    return tuple(LETTERS[: len(item.get("options") or [])])


def gold_letter(item: Item) -> str:
    """The letter of the gold option; the item must be eligible."""
    reason = ineligibility(item)
    if reason is not None:
        raise ValueError(f"item {item.get('id')!r}: {INELIGIBLE[reason]}")
    return LETTERS[list(item["options"]).index(item["gold"][0])]


def letters_phrase(item: Item) -> str:
    """The valid letters as the worker prompt names them: ``A, B, C or D``."""
    valid = letters(item)
    return valid[0] if len(valid) == 1 else f"{', '.join(valid[:-1])} or {valid[-1]}"


def format_problem(item: Item) -> str:
    """The item as the routers see it: passage, instructions, question, then lettered options."""
    parts = []
    for label, key in (("Passage", "passage"), ("Instructions", "instructions")):
        value = item.get(key)
        if value and value.strip():
            parts.append(f"{label}: {value.strip()}")
    parts.append(f"Question: {(item.get('question') or '').strip()}")
    options = "\n".join(f"{letter}. {text}" for letter, text in zip(letters(item), item.get("options") or []))
    parts.append(f"Options:\n{options}")
    return "\n\n".join(parts)
