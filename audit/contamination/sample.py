"""The question sample: n eligible items drawn once by a seeded hash of their ids.

Why a hash of the id and not a shuffle: the sample must be the same for every model, condition and
rerun, whatever the file order, the sharding of the read, or the library versions. Each eligible
item gets the key ``SHA-256(f"{seed}:{id}")`` (first 8 bytes, big-endian) and the n smallest keys
are drawn: simple random sampling without replacement (keys are exchangeable pseudo-random
numbers), a function of the ids and the seed only, and mergeable across batches (keep the n
smallest per batch, then the n smallest of those). SHA-256 rather than a library hash so that a
published seed names the same questions forever; equal keys (probability ~n²/2⁶⁵) order by id.
"""
from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa

from audit.contamination.items import INELIGIBLE, ineligibility

DEFAULT_N = 100
DEFAULT_SEED = 42


def sample_key(item_id: str, seed: int) -> int:
    """The draw key of one item id under ``seed`` (smaller keys are drawn first)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{item_id}".encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Sample:
    """The drawn items in draw order (ascending key), with what was seen and skipped by reason."""

    seed: int
    n: int
    items: tuple[dict, ...]
    population: int
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item["id"] for item in self.items)

    def manifest(self) -> dict:
        return {"seed": self.seed, "n": self.n, "population": self.population,
                "eligible": self.population - sum(self.skipped.values()),
                "skipped": {reason: {"count": count, "meaning": INELIGIBLE[reason]} for reason, count in sorted(self.skipped.items())},
                "ids": list(self.ids)}


def draw_sample(batches: Iterable[pa.RecordBatch | pa.Table], n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> Sample:
    """Draw n eligible items from batches in the shared item schema.

    Raises when an id repeats (the draw would not be a function of the ids) or when fewer than n
    items are eligible (a smaller sample than asked for must not pass as the requested one).
    """
    if n < 1:
        raise ValueError(f"sample size must be >= 1, got {n}")
    seen: set[str] = set()
    skipped: Counter[str] = Counter()
    kept: list[tuple[int, str, dict]] = []  # the n smallest (key, id) so far: memory bounded by n + one batch
    for batch in batches:
        entries = []
        for item in batch.to_pylist():
            item_id = item.get("id")
            if not isinstance(item_id, str) or not item_id:
                raise ValueError(f"item {item!r:.80}: expected a non-empty string id")
            if item_id in seen:
                raise ValueError(f"item id {item_id!r} occurs more than once; the sample needs unique ids")
            seen.add(item_id)
            reason = ineligibility(item)
            if reason is not None:
                skipped[reason] += 1
                continue
            entries.append((sample_key(item_id, seed), item_id, item))
        kept = heapq.nsmallest(n, kept + entries, key=lambda e: (e[0], e[1]))
    eligible = len(seen) - sum(skipped.values())
    if eligible < n:
        detail = ", ".join(f"{count} {reason}" for reason, count in sorted(skipped.items())) or "none skipped"
        raise ValueError(f"asked for {n} questions but only {eligible} of {len(seen)} items are eligible ({detail})")
    return Sample(seed=seed, n=n, items=tuple(item for _, _, item in kept), population=len(seen), skipped=dict(skipped))
