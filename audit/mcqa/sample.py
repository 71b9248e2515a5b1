"""The seeded draw of MCQA items, one for every audit: per benchmark, ``n`` items by hash key (``audit.stats.draws``).

Every model, perturbation, condition and rerun of a run sees the same items, whatever the file order, the
batching of the read or the library versions; a larger ``n`` contains the smaller draw; the landscape and
contamination audits draw the same items of a benchmark under one seed. An item's key is
``hash_keys(stream_ids([source_id], benchmark), seed)``: the benchmark is the stream, so two benchmarks whose
ids coincide are drawn independently. Ineligible rows are left out before the draw (``items.from_row``),
counted by reason, so a draw of ``n`` is ``n`` askable items.

Two ways in, one draw:

- ``sample_items``: items already in memory (the landscape's, after its own checks), input order kept;
  a benchmark with fewer than ``n`` items gives all of them, or under ``strict`` is an error.
- ``draw_sample``: rows streamed in batches of the shared item schema (the contamination audit's read),
  memory bounded by ``n`` per benchmark plus one batch (keep the ``n`` smallest keys so far: the draw is
  mergeable across batches); always strict -- a smaller sample than asked for must not pass as the
  requested one -- and ids must be unique (the draw would not be a function of the ids).
"""
from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from audit.mcqa.items import REASONS, McqaItem, from_row
from audit.stats.choices import DEFAULT_SEED
from audit.stats.draws import hash_keys, sample_positions, stream_ids

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class Sample:
    """The drawn items in draw order (per benchmark, ascending key), with what was seen and skipped by reason."""

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


def _too_few(benchmark: str, n: int, eligible: int, seen: int, skipped: Counter[str]) -> ValueError:
    detail = ", ".join(f"{count} {reason}" for reason, count in sorted(skipped.items())) or "none skipped"
    where = f"{benchmark}: " if benchmark else ""
    return ValueError(f"{where}asked for {n} questions but only {eligible} of {seen} items are askable ({detail})")


def sample_items(items: Sequence[McqaItem], n: int | None, seed: int, strict: bool = False) -> list[McqaItem]:
    """``n`` items of each benchmark, input order kept: all of a benchmark with fewer, or under ``strict`` an error."""
    out: list[McqaItem] = []
    for benchmark in dict.fromkeys(item.benchmark for item in items):
        group = [item for item in items if item.benchmark == benchmark]
        if strict and n is not None and len(group) < n:
            raise _too_few(benchmark, n, len(group), len(group), Counter())
        out += [group[i] for i in sample_positions([item.source_id for item in group], n, seed, stream=benchmark)]
    return out


def draw_sample(batches: Iterable[pa.RecordBatch | pa.Table], n: int, seed: int = DEFAULT_SEED) -> Sample:
    """Draw ``n`` askable items of each benchmark from batches in the shared item schema (strict: see the
    module docstring). Raises when an id repeats or when a benchmark has fewer than ``n`` askable items."""
    if n < 1:
        raise ValueError(f"sample size must be >= 1, got {n}")
    seen: set[str] = set()
    skipped: Counter[str] = Counter()
    kept: dict[str, list[tuple[int, str, McqaItem]]] = {}  # per benchmark, the n smallest (key, keyed id) so far
    for batch in batches:
        found: dict[str, list[McqaItem]] = {}
        for row in batch.to_pylist():
            item_id = row.get("id")
            if not isinstance(item_id, str) or not item_id:
                raise ValueError(f"item {row!r:.80}: expected a non-empty string id")
            if item_id in seen:
                raise ValueError(f"item id {item_id!r} occurs more than once; the sample needs unique ids")
            seen.add(item_id)
            item = from_row(row)
            if isinstance(item, McqaItem):
                found.setdefault(item.benchmark, []).append(item)
            else:
                skipped[item.reason] += 1
        for benchmark, group in found.items():
            keyed = stream_ids([item.source_id for item in group], benchmark)
            fresh = [(int(k), str(s), item) for k, s, item in zip(hash_keys(keyed, seed), keyed, group)]
            kept[benchmark] = heapq.nsmallest(n, kept.get(benchmark, []) + fresh, key=lambda e: (e[0], e[1]))
    eligible = len(seen) - sum(skipped.values())
    if not kept or any(len(group) < n for group in kept.values()):
        short = [b for b, group in kept.items() if len(group) < n]
        benchmark = short[0] if short and len(kept) > 1 else ""
        raise _too_few(benchmark, n, len(kept[short[0]]) if short else eligible, len(seen), skipped)
    items = tuple(item for group in kept.values() for _, _, item in group)
    return Sample(seed=seed, n=n, items=items, population=len(seen), skipped=dict(skipped))
