"""Multiple-choice items: checked once, then immutable through prompting and perturbation.

Rows come in the shared benchmark schema (``id, benchmark, question, passage, instructions,
options, gold``) where ``gold`` holds the answer *text*; a row may instead carry ``gold_index``
(lm-eval's samples give an index). An item the landscape cannot score is never dropped silently
and never crashes a run: it becomes a ``Rejected`` with its reason, counted in the manifest.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_OPTIONS = len(LETTERS)


@dataclass(frozen=True)
class McqaItem:
    """One scorable item: options in order and the 0-based index of the correct one.

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

    def with_options(self, options: Sequence[str], gold: int, note: str = "", **changes: Any) -> McqaItem:
        return replace(self, options=tuple(options), gold=gold, note=note or self.note, **changes)


@dataclass(frozen=True)
class Rejected:
    """An item left out, with why (``answer index 4 outside the 4 options``, ...)."""

    id: str
    benchmark: str
    reason: str
    perturbation: str = "none"


def rejection_reason(options: Sequence[Any], gold_index: Any) -> str | None:
    """Why options + gold cannot be scored, or None. Checks run in the order a reviewer would."""
    if len(options) < 2:
        return f"fewer than two options ({len(options)})"
    if len(options) > MAX_OPTIONS:
        return f"{len(options)} options; at most {MAX_OPTIONS} have letter labels"
    for i, option in enumerate(options):
        if not isinstance(option, str) or not option.strip():
            return f"option {LETTERS[i]} is empty"
    seen: dict[str, int] = {}
    for i, option in enumerate(options):
        key = " ".join(option.split()).casefold()
        if key in seen:
            return f"duplicate options {LETTERS[seen[key]]} and {LETTERS[i]} ({option.strip()!r:.60})"
        seen[key] = i
    if isinstance(gold_index, bool) or not isinstance(gold_index, int):
        return f"answer index {gold_index!r} is not an integer"
    if not 0 <= gold_index < len(options):
        return f"answer index {gold_index} outside the {len(options)} options"
    return None


def _gold_index(row: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The gold index of a row: ``gold_index`` if given, else the position of the one gold text."""
    if row.get("gold_index") is not None:
        return row["gold_index"], None
    gold = list(row.get("gold") or [])
    if len(gold) != 1:
        return None, "no gold answer" if not gold else f"{len(gold)} gold answers; MCQA needs exactly one"
    options = list(row.get("options") or [])
    hits = [i for i, option in enumerate(options) if option == gold[0]]
    if not hits:
        hits = [i for i, option in enumerate(options) if isinstance(option, str) and option.strip() == gold[0].strip()]
    if not hits:
        return None, f"gold answer {gold[0]!r:.60} is not one of the options"
    return hits[0], None


def mcqa_items(rows: Iterable[Mapping[str, Any]]) -> tuple[list[McqaItem], list[Rejected]]:
    """Items and rejections from rows of the shared schema (``Table.to_pylist()`` or dicts)."""
    items: list[McqaItem] = []
    rejected: list[Rejected] = []
    for row in rows:
        item_id, benchmark = str(row.get("id")), str(row.get("benchmark") or "")
        options = list(row.get("options") or [])
        index, problem = _gold_index(row)
        problem = problem or rejection_reason(options, index)
        if problem is None and not (row.get("question") or "").strip() and not (row.get("passage") or "").strip():
            problem = "empty question"
        if problem is not None:
            rejected.append(Rejected(item_id, benchmark, problem))
            continue
        items.append(McqaItem(id=item_id, benchmark=benchmark, question=row.get("question") or "",
                              options=tuple(options), gold=index, passage=row.get("passage") or None,
                              instructions=row.get("instructions") or None))
    return items, rejected


def standardise_csqa(item: McqaItem) -> McqaItem:
    """CommonsenseQA's five options to four, so its landscape is comparable with 4-option sets.

    Drop E; when E is the answer, drop D instead and E takes D's place (and letter). Items that
    do not have exactly five options are returned unchanged.
    """
    if item.k != 5:
        return item
    if item.gold == 4:
        return item.with_options(item.options[:3] + (item.options[4],), 3, note="csqa 5->4: D dropped, E relabelled D")
    return item.with_options(item.options[:4], item.gold, note="csqa 5->4: E dropped")



def sample_indices(ids: Sequence[str], benchmark: str, n: int | None, seed: int) -> list[int]:
    """Positions of ``n`` of one benchmark's ``ids`` chosen by seeded hash: the ``n`` smallest
    sha256(seed, benchmark, id), returned in input order.

    Why a hash and not a shuffle: the sample does not depend on file order or on how the input
    was split, a larger ``n`` contains the smaller sample, every model of a run (or every lm-eval
    samples file of a task) gets the same items, and adding items to a benchmark keeps every
    earlier choice that still ranks. All positions when ``n`` is None or not smaller.
    """
    if n is None or n >= len(ids):
        return list(range(len(ids)))
    if n < 1:
        raise ValueError(f"sample size must be at least 1, got {n}")
    keys = [hashlib.sha256(f"{seed}\x1f{benchmark}\x1f{item_id}".encode()).hexdigest() for item_id in ids]
    return sorted(sorted(range(len(ids)), key=keys.__getitem__)[:n])


def sample_items(items: Sequence[McqaItem], n: int | None, seed: int) -> list[McqaItem]:
    """``sample_indices`` per benchmark over items (input order kept)."""
    out: list[McqaItem] = []
    for benchmark in dict.fromkeys(item.benchmark for item in items):
        group = [item for item in items if item.benchmark == benchmark]
        out += [group[i] for i in sample_indices([item.id for item in group], benchmark, n, seed)]
    return out
