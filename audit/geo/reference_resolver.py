"""A deliberately plain resolver: one regex alternation, one caption at a time.

It is what most people write first, so it is the baseline the bench measures against, and being
written independently of the Aho–Corasick path (Python ``re``, its own scoring loop) it is the
oracle the tests compare that path with, caption by caption, for the weighted rule of the ``paper``
and ``extended`` profiles (mojibake repair, capitals-only aliases such as "US", and a region name
shared by several countries going to the country of the city before it included).
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

import pyarrow as pa

from audit.geo.lexicon import MATCH_WEIGHTS
from audit.geo.mojibake import repair_text
from audit.geo.normalize import normalize_text, search_pattern


class RegexResolver:
    def __init__(self, entries: pa.Table):
        cols = ["alias", "alias_norm", "country_alpha2", "match_type", "requires_city_before"]
        has_case = "case_rule" in entries.column_names
        rows = entries.select(cols + (["case_rule"] if has_case else [])).to_pylist()
        self.by_pattern: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            rule = row.get("case_rule") or "any"
            if rule == "any":
                self.by_pattern[search_pattern(row["alias_norm"])].append(row)
            else:  # written in capitals: searched case-sensitively in the original text's words
                self.by_pattern[" " + "  ".join(_words(row["alias"].upper())) + " "].append(row)
        # Longest first: Python tries alternatives in order, so this is leftmost-longest.
        alternation = "|".join(re.escape(p) for p in sorted(self.by_pattern, key=lambda p: (-len(p), p)))
        self.regex = re.compile(alternation)
        self.cased = {p for p, rs in self.by_pattern.items() if any((r.get("case_rule") or "any") != "any" for r in rs)}

    def resolve(self, caption: str | None) -> tuple[str | None, str, list[tuple[str, str, str]]]:
        """(country or None, outcome, sorted distinct (alias, country, match_type))."""
        text = repair_text(caption or "")
        lower = normalize_text(text)
        hits = [(m.start(), m.end(), m.group(0)) for m in self.regex.finditer(lower) if m.group(0) not in self.cased]
        if self.cased:
            cased = "  " + "  ".join(_words(text)) + "  "
            hits += [(m.start(), m.end(), m.group(0)) for m in re.finditer("|".join(re.escape(p) for p in sorted(self.cased)), cased)]
            hits.sort()
        kept: list[tuple[int, int, dict]] = []
        for i, (start, end, pattern) in enumerate(hits):
            prev = self.by_pattern[hits[i - 1][2]] if i > 0 and hits[i - 1][1] == start else []
            city_countries = {r["country_alpha2"] for r in prev if r["match_type"] == "city"}
            regions = [r for r in self.by_pattern[pattern] if r["match_type"] == "region"]
            agreeing = {r["country_alpha2"] for r in regions} & city_countries
            for row in self.by_pattern[pattern]:
                if row["match_type"] == "region" and city_countries:
                    if agreeing and row["country_alpha2"] not in agreeing:
                        continue
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
            return max(scores, key=scores.__getitem__), "weighted_majority", distinct
        return None, "ambiguous", distinct


def _words(text: str) -> list[str]:
    """The words of ``text`` as ``normalize_text`` splits them, in their original case."""
    return re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text))
