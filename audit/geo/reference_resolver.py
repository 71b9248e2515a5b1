"""A deliberately plain resolver: one regex alternation, one caption at a time.

It is what most people write first, so it is the baseline the bench measures against, and being
written independently of the Aho–Corasick path (Python ``re``, its own scoring loop) it is the
oracle the tests compare that path with, caption by caption.
"""
from __future__ import annotations

import re
from collections import defaultdict

import pyarrow as pa

from audit.geo.lexicon import MATCH_WEIGHTS
from audit.geo.normalize import normalize_text, search_pattern


class RegexResolver:
    def __init__(self, entries: pa.Table):
        rows = entries.select(["alias_norm", "country_alpha2", "match_type", "requires_city_before"]).to_pylist()
        self.by_pattern: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            self.by_pattern[search_pattern(row["alias_norm"])].append(row)
        # Longest first: Python tries alternatives in order, so this is leftmost-longest.
        alternation = "|".join(re.escape(p) for p in sorted(self.by_pattern, key=lambda p: (-len(p), p)))
        self.regex = re.compile(alternation)

    def resolve(self, caption: str | None) -> tuple[str | None, str, list[tuple[str, str, str]]]:
        """(country or None, outcome, sorted distinct (alias, country, match_type))."""
        text = normalize_text(caption or "")
        hits = [(m.start(), m.end(), m.group(0)) for m in self.regex.finditer(text)]
        kept: list[tuple[int, int, dict]] = []
        for i, (start, end, pattern) in enumerate(hits):
            after_city = i > 0 and hits[i - 1][1] == start and any(r["match_type"] == "city" for r in self.by_pattern[hits[i - 1][2]])
            for row in self.by_pattern[pattern]:
                if row["match_type"] == "region" and after_city:
                    kept = [k for k in kept if not (k[2]["match_type"] == "city" and k[1] == start)]
                elif row["requires_city_before"]:
                    continue
                kept.append((start, end, row))
        distinct = sorted({(r["alias_norm"], r["country_alpha2"], r["match_type"]) for _, _, r in kept})
        scores: dict[str, int] = defaultdict(int)
        for _, country, mtype in distinct:
            scores[country] += MATCH_WEIGHTS[mtype]
        if not scores:
            return None, "unresolved", distinct
        ranked = sorted(scores.values(), reverse=True)
        if len(scores) == 1:
            return next(iter(scores)), "single_country", distinct
        if ranked[0] > ranked[1]:
            return max(scores, key=scores.get), "weighted_majority", distinct
        return None, "ambiguous", distinct
