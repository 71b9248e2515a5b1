"""The shipped American <-> other spelling inventory, loaded once per process.

The CSV in ``data/`` is derived from VarCon, breame and the hyperreality lists by
``build_inventory.py`` (sources, commits and licences in ``data/SOURCES.md``); the runtime reads
only this file, never the source lists.
"""
from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

INVENTORY_FILE = "spelling_inventory.csv"


@dataclass(frozen=True)
class Pair:
    """One inventory row: the American and the other spelling, where it came from, its class."""

    american: str
    other: str
    source: str
    category: str  # "spelling" or "lexical"

    @property
    def label(self) -> str:
        return f"{self.american}/{self.other}"


def _raw() -> str:
    return resources.files("audit.conventions.data").joinpath(INVENTORY_FILE).read_text("utf-8")


def inventory_sha256() -> str:
    """sha256 of the shipped CSV: what a run manifest records, so results name their inventory."""
    return hashlib.sha256(_raw().encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def load_inventory() -> tuple[Pair, ...]:
    """All pairs of the shipped CSV, in file order."""
    raw = _raw()
    rows = list(csv.DictReader(io.StringIO(raw)))
    expected = ["american", "other", "source", "category"]
    if not rows or list(rows[0]) != expected:
        raise ValueError(f"{INVENTORY_FILE}: expected columns {expected}")
    return tuple(Pair(r["american"], r["other"], r["source"], r["category"]) for r in rows)


def word_varieties(include_lexical: bool = False) -> dict[str, tuple[str, str, str]]:
    """Each inventory word -> (variety, category, pair label); the first pair of a word wins.

    The build drops words listed on both sides, so a word has one variety. Lexical pairs
    (``gasoline``/``petrol``) are optional: many are polysemous (``bar``, ``flat``).
    """
    table: dict[str, tuple[str, str, str]] = {}
    for pair in load_inventory():
        if pair.category == "lexical" and not include_lexical:
            continue
        table.setdefault(pair.american, ("american", pair.category, pair.label))
        table.setdefault(pair.other, ("other", pair.category, pair.label))
    return table


def american_to_other(include_lexical: bool = False) -> dict[str, str]:
    """``{american: other}`` for the scorer audit's spelling swaps; the first pair of a word wins.

    The same pairs the detector counts, so a variant rewrites exactly what the conventions audit
    would flag; lexical pairs stay out by default (``flat`` for ``apartment`` is not a spelling).
    """
    table: dict[str, str] = {}
    for pair in load_inventory():
        if pair.category == "spelling" or include_lexical:
            table.setdefault(pair.american, pair.other)
    return table
