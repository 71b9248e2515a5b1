"""The seeded draw of MCQA items: per benchmark, ``n`` items by hash key (``audit.stats.draws``).

Every model, perturbation and rerun of a run sees the same items, whatever the file order; a larger
``n`` contains the smaller draw. Ineligible rows were left out before the draw (``items.from_row``),
so a draw of ``n`` is ``n`` askable items.
"""
from __future__ import annotations

from collections.abc import Sequence

from audit.mcqa.items import McqaItem
from audit.stats.draws import sample_positions


def sample_items(items: Sequence[McqaItem], n: int | None, seed: int) -> list[McqaItem]:
    """``n`` items of each benchmark (all when it has fewer), input order kept."""
    out: list[McqaItem] = []
    for benchmark in dict.fromkeys(item.benchmark for item in items):
        group = [item for item in items if item.benchmark == benchmark]
        out += [group[i] for i in sample_positions([item.source_id for item in group], n, seed, stream=benchmark)]
    return out
