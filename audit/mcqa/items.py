"""Multiple-choice items: one item type and one eligibility rule for every audit that asks for a letter.

Rows come in the shared benchmark schema (``id, benchmark, question, passage, instructions,
options, gold``) where ``gold`` holds the answer *text*; a row may instead carry ``gold_index``
(lm-eval's samples give an index). ``from_row`` turns a row into a ``McqaItem`` or a ``Rejected``
with a reason code (``REASONS``) and a detail naming what is wrong, so the same benchmark row is
scorable in the landscape audit exactly when it is drawable in the contamination audit, and an
item the audits cannot ask is counted by reason, never dropped silently and never a crash.

Options are compared as written, after collapsing white space: "rr" and "Rr" are two options (a
real ARC-Challenge item has both), "Paris" and "Paris " are one.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MIN_OPTIONS = 2
MAX_OPTIONS = len(LETTERS)

# reason code -> what it means (reported with the counts)
REASONS = {
    "too_few_options": "fewer than two options, so not a multiple-choice question",
    "too_many_options": f"more than {MAX_OPTIONS} options, more than there are letters",
    "empty_option": "an option is empty or not text",
    "duplicate_options": "two options read the same, so a letter would not name one answer",
    "gold_index_invalid": "the answer index is not an integer",
    "gold_index_out_of_range": "the answer index names no option",
    "no_gold": "no gold answer",
    "multiple_gold": "more than one gold answer, so no single correct letter",
    "gold_not_in_options": "the gold answer is not one of the options",
    "empty_question": "neither a question nor a passage",
}


def _plain(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class McqaItem:
    """One askable item: options in order and the 0-based index of the correct one.

    ``source_id`` is the benchmark's id, shared by every perturbed copy; ``id`` is unique per copy
    (``source_id`` itself for the unperturbed item, ``source_id#rot2`` for a rotation).
    """

    id: str
    benchmark: str
    question: str
    options: tuple[str, ...]
    gold: int
    passage: str | None = None
    instructions: str | None = None
    source_id: str = ""
    perturbation: str = "none"
    variant: int = 0
    note: str = ""

    def __post_init__(self) -> None:
        if not self.source_id:
            object.__setattr__(self, "source_id", self.id)

    @property
    def k(self) -> int:
        return len(self.options)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(LETTERS[: self.k])

    @property
    def gold_label(self) -> str:
        return LETTERS[self.gold]

    def labels_phrase(self) -> str:
        """The valid letters as a prompt names them: ``A, B, C or D``."""
        return _phrase(self.labels)

    def with_options(self, options: Sequence[str], gold: int, note: str = "", **changes: Any) -> McqaItem:
        return replace(self, options=tuple(options), gold=gold, note=note or self.note, **changes)


def _phrase(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]


@dataclass(frozen=True)
class Rejected:
    """An item left out: its reason code (a key of ``REASONS``) and what exactly is wrong."""

    id: str
    benchmark: str
    reason: str
    detail: str = ""
    perturbation: str = "none"

    def describe(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else self.reason


def options_problem(options: Sequence[Any]) -> tuple[str, str] | None:
    """(reason, detail) when the options cannot be asked with letters, else None."""
    if len(options) < MIN_OPTIONS:
        return "too_few_options", f"{len(options)} option(s)"
    if len(options) > MAX_OPTIONS:
        return "too_many_options", f"{len(options)} options"
    for i, option in enumerate(options):
        if not isinstance(option, str) or not option.strip():
            return "empty_option", f"option {LETTERS[i]} is {option!r:.40}"
    seen: dict[str, int] = {}
    for i, option in enumerate(options):
        key = _plain(option)
        if key in seen:
            return "duplicate_options", f"options {LETTERS[seen[key]]} and {LETTERS[i]} both read {key!r:.60}"
        seen[key] = i
    return None


def gold_index_problem(gold_index: Any, k: int) -> tuple[str, str] | None:
    """(reason, detail) when ``gold_index`` names none of ``k`` options, else None."""
    if isinstance(gold_index, bool) or not isinstance(gold_index, int):
        return "gold_index_invalid", f"answer index {gold_index!r:.40}"
    if not 0 <= gold_index < k:
        return "gold_index_out_of_range", f"answer index {gold_index} outside the {k} options"
    return None


def _gold_index(row: Mapping[str, Any], options: Sequence[str]) -> int | tuple[str, str]:
    if row.get("gold_index") is not None:
        index = row["gold_index"]
        return gold_index_problem(index, len(options)) or index
    gold = list(row.get("gold") or [])
    if not gold:
        return "no_gold", ""
    if len(gold) > 1:
        return "multiple_gold", f"{len(gold)} gold answers"
    hits = [i for i, option in enumerate(options) if option == gold[0]]
    hits = hits or [i for i, option in enumerate(options) if isinstance(gold[0], str) and _plain(option) == _plain(gold[0])]
    if not hits:
        return "gold_not_in_options", f"gold answer {gold[0]!r:.60}"
    return hits[0]  # one hit: options are distinct after white space is collapsed


def from_row(row: Mapping[str, Any]) -> McqaItem | Rejected:
    """A row of the shared schema as an item, or why it cannot be one (checks in the order a reviewer would)."""
    item_id, benchmark = str(row.get("id")), str(row.get("benchmark") or "")
    options = list(row.get("options") or [])
    problem = options_problem(options)
    index = _gold_index(row, options) if problem is None else None
    if isinstance(index, tuple):
        problem, index = index, None
    if problem is None and not (row.get("question") or "").strip() and not (row.get("passage") or "").strip():
        problem = "empty_question", ""
    if problem is not None or index is None:
        return Rejected(item_id, benchmark, *(problem or ("no_gold", "")))
    return McqaItem(id=item_id, benchmark=benchmark, question=row.get("question") or "", options=tuple(options),
                    gold=index, passage=row.get("passage") or None, instructions=row.get("instructions") or None)


def mcqa_items(rows: Iterable[Mapping[str, Any]]) -> tuple[list[McqaItem], list[Rejected]]:
    """Items and rejections from rows of the shared schema (``Table.to_pylist()`` or dicts)."""
    items: list[McqaItem] = []
    rejected: list[Rejected] = []
    for row in rows:
        found = from_row(row)
        if isinstance(found, McqaItem):
            items.append(found)
        else:
            rejected.append(found)
    return items, rejected


def standardise_csqa(item: McqaItem) -> McqaItem:
    """CommonsenseQA's five options to four, so its results are comparable with 4-option sets.

    Drop E; when E is the answer, drop D instead and E takes D's place (and letter). Items that
    do not have exactly five options are returned unchanged.
    """
    if item.k != 5:
        return item
    if item.gold == 4:
        return item.with_options(item.options[:3] + (item.options[4],), 3, note="csqa 5->4: D dropped, E relabelled D")
    return item.with_options(item.options[:4], item.gold, note="csqa 5->4: E dropped")


def format_problem(item: McqaItem) -> str:
    """The item as plain text (passage, instructions, question, lettered options): what the
    contamination audit's routers read."""
    parts = []
    for label, value in (("Passage", item.passage), ("Instructions", item.instructions)):
        if value and value.strip():
            parts.append(f"{label}: {value.strip()}")
    parts.append(f"Question: {item.question.strip()}")
    options = "\n".join(f"{letter}. {text}" for letter, text in zip(item.labels, item.options))
    parts.append(f"Options:\n{options}")
    return "\n\n".join(parts)
