"""The question sample: n askable items drawn once by a seeded hash of their ids.

Why a hash of the id and not a shuffle: the sample must be the same for every model, condition and
rerun, whatever the file order, the sharding of the read, or the library versions. Each askable
item gets its key from ``audit.stats.draws.hash_keys`` (the one sampling key of every audit) and
the n smallest keys are drawn: simple random sampling without replacement, a function of the ids
and the seed only, and mergeable across batches (keep the n smallest per batch, then the n
smallest of those). Which rows are askable is ``audit.mcqa.items.from_row``'s rule, the landscape
audit's too; the others are counted by reason and never drawn, so a sample of n is n askable questions.
"""
from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa

from audit.contamination.choices import DEFAULT_N
from audit.mcqa.items import REASONS, McqaItem, from_row
from audit.stats.choices import DEFAULT_SEED
from audit.stats.draws import hash_keys


@dataclass(frozen=True)
class Sample:
    """The drawn items in draw order (ascending key), with what was seen and skipped by reason."""

    seed: int
    n: int
    items: tuple[McqaItem, ...]
    population: int
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)

    def manifest(self) -> dict:
        return {"seed": self.seed, "n": self.n, "population": self.population,
                "eligible": self.population - sum(self.skipped.values()),
                "skipped": {reason: {"count": count, "meaning": REASONS[reason]} for reason, count in sorted(self.skipped.items())},
                "ids": list(self.ids)}


def draw_sample(batches: Iterable[pa.RecordBatch | pa.Table], n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> Sample:
    """Draw n askable items from batches in the shared item schema.

    Raises when an id repeats (the draw would not be a function of the ids) or when fewer than n
    items are askable (a smaller sample than asked for must not pass as the requested one).
    """
    if n < 1:
        raise ValueError(f"sample size must be >= 1, got {n}")
    seen: set[str] = set()
    skipped: Counter[str] = Counter()
    kept: list[tuple[int, str, McqaItem]] = []  # the n smallest (key, id) so far: memory bounded by n + one batch
    for batch in batches:
        found = []
        for row in batch.to_pylist():
            item_id = row.get("id")
            if not isinstance(item_id, str) or not item_id:
                raise ValueError(f"item {row!r:.80}: expected a non-empty string id")
            if item_id in seen:
                raise ValueError(f"item id {item_id!r} occurs more than once; the sample needs unique ids")
            seen.add(item_id)
            item = from_row(row)
            if isinstance(item, McqaItem):
                found.append(item)
            else:
                skipped[item.reason] += 1
        keys = hash_keys([item.id for item in found], seed) if found else []
        kept = heapq.nsmallest(n, kept + [(int(k), item.id, item) for k, item in zip(keys, found)], key=lambda e: (e[0], e[1]))
    eligible = len(seen) - sum(skipped.values())
    if eligible < n:
        detail = ", ".join(f"{count} {reason}" for reason, count in sorted(skipped.items())) or "none skipped"
        raise ValueError(f"asked for {n} questions but only {eligible} of {len(seen)} items are askable ({detail})")
    return Sample(seed=seed, n=n, items=tuple(item for _, _, item in kept), population=len(seen), skipped=dict(skipped))
