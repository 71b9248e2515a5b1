"""Deterministic country resolution of caption text, a whole Arrow batch at a time.

The batch is normalized with Arrow kernels and one Aho–Corasick automaton (ahocorasick-rs, chosen by
measurement in bench/bench_resolver.py) scans the Arrow UTF-8 data buffer in place, leftmost-longest
and non-overlapping, so no Python string is made per record. Python only touches the (rare)
matches: it maps each byte offset back to its record with the Arrow offsets, pairs "City, Region",
counts each distinct alias once and scores countries as s(c) = 4·n_country + 3·n_demonym +
2·(n_city + n_region). A record is ``single_country`` (one country matched), ``weighted_majority``
(several, one uniquely highest score), ``ambiguous`` (a tie at the top) or ``unresolved``.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import ahocorasick_rs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.geo.lexicon import MATCH_WEIGHTS
from audit.geo.normalize import normalize_array, search_pattern

OUTCOMES = ("single_country", "weighted_majority", "ambiguous", "unresolved")
UNRESOLVED = OUTCOMES.index("unresolved")
MATCH_TYPES = tuple(MATCH_WEIGHTS)
MATCH_STRUCT = pa.struct([("alias", pa.string()), ("country", pa.string()), ("match_type", pa.string())])


@dataclass(frozen=True)
class Resolution:
    """Per-record result of one batch, aligned with the input rows."""

    country: pa.Array  # string, null unless single_country / weighted_majority
    outcome: pa.Array  # dictionary<int8, string> over OUTCOMES
    score: pa.Array  # int16: winning (or tied top) score, 0 when unresolved
    matches: pa.Array | None  # list<struct<alias, country, match_type>>, when asked for
    match_type_counts: dict[str, int]  # distinct (record, alias) matches by type, for the summary


class CountryResolver:
    """A compiled lexicon. Build once per worker (it is pure state) and call on every batch."""

    def __init__(self, entries: pa.Table):
        cols = entries.select(["alias_norm", "country_alpha2", "match_type", "requires_city_before"]).to_pydict()
        self.countries: list[str] = sorted(set(cols["country_alpha2"]))
        code_index = {c: i for i, c in enumerate(self.countries)}
        patterns: list[bytes] = []
        self._entries: list[list[tuple[str, int, int, bool]]] = []  # per pattern: (alias, country, type, pair_only)
        pattern_ids: dict[str, int] = {}
        for alias, code, mtype, pair_only in zip(*cols.values()):
            pattern = search_pattern(alias)
            if pattern not in pattern_ids:
                pattern_ids[pattern] = len(self._entries)
                self._entries.append([])
                patterns.append(pattern.encode("utf-8"))
            self._entries[pattern_ids[pattern]].append((alias, code_index[code], MATCH_TYPES.index(mtype), bool(pair_only)))
        self._automaton = ahocorasick_rs.BytesAhoCorasick(patterns, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
        self._country_dict = pa.array(self.countries, pa.string())

    def resolve(self, texts: pa.Array | pa.ChunkedArray, with_matches: bool = False) -> Resolution:
        """Resolve every record of ``texts`` (nulls resolve as empty text)."""
        norm = pc.fill_null(normalize_array(texts), "")
        if isinstance(norm, pa.ChunkedArray):
            norm = norm.combine_chunks()
        if norm.type == pa.large_string():
            norm = norm.cast(pa.string())
        n = len(norm)
        offsets = np.frombuffer(norm.buffers()[1], dtype=np.int32, count=n + 1, offset=norm.offset * 4)
        data = norm.buffers()[2]
        found = []
        if data is not None and offsets[-1] > offsets[0]:
            view = memoryview(data).cast("B")[offsets[0]:offsets[-1]]
            found = self._automaton.find_matches_as_indexes(view)

        country_idx = np.full(n, -1, dtype=np.int32)
        outcome = np.full(n, UNRESOLVED, dtype=np.int8)
        score = np.zeros(n, dtype=np.int16)
        type_counts = dict.fromkeys(MATCH_TYPES, 0)
        per_record_matches: dict[int, list[tuple[str, int, int]]] = {}
        if found:
            hits = np.asarray(found, dtype=np.int64)  # (pattern, start, end) in bytes, in text order
            recs = np.searchsorted(offsets - offsets[0], hits[:, 1], side="right") - 1
            grouped: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
            for (pid, start, end), rec in zip(hits.tolist(), recs.tolist()):
                grouped[rec].append((start, end, pid))
            for rec, spans in grouped.items():
                kept = self._select(spans)
                if not kept:
                    continue
                per_record_matches[rec] = kept
                for _, _, mtype in kept:
                    type_counts[MATCH_TYPES[mtype]] += 1
                country_idx[rec], outcome[rec], score[rec] = _decide(kept)

        country = pa.DictionaryArray.from_arrays(
            pa.array(country_idx, mask=country_idx < 0), self._country_dict
        ).cast(pa.string())
        matches = self._matches_array(n, per_record_matches) if with_matches else None
        return Resolution(
            country=country,
            outcome=pa.DictionaryArray.from_arrays(pa.array(outcome), pa.array(OUTCOMES)),
            score=pa.array(score),
            matches=matches,
            match_type_counts=type_counts,
        )

    def _select(self, spans: list[tuple[int, int, int]]) -> list[tuple[str, int, int]]:
        """One record's matches (non-overlapping, in text order) → distinct (alias, country, type).

        Adjacent tokens share no byte: a pattern ends on the first space of a double-space separator
        and the next one starts on the second, so "City, Region" is ``start == previous end``.
        """
        out: list[tuple[str, int, int]] = []
        prev_city_end = -1
        region = MATCH_TYPES.index("region")
        city = MATCH_TYPES.index("city")
        for start, end, pid in spans:
            entries = self._entries[pid]
            follows_city = start == prev_city_end
            prev_city_end = end if any(e[2] == city for e in entries) else -1
            for alias, code, mtype, pair_only in entries:
                if mtype == region and follows_city:
                    # "Paris, Texas": the region decides; the city just before it is dropped.
                    out = [m for m in out if not (m[2] == city and m[3] == start)]
                elif pair_only:
                    continue
                out.append((alias, code, mtype, end))
        return sorted({(a, c, t) for a, c, t, _ in out})

    def _matches_array(self, n: int, per_record: dict[int, list[tuple[str, int, int]]]) -> pa.Array:
        offsets = np.zeros(n + 1, dtype=np.int32)
        aliases, codes, types = [], [], []
        for rec in sorted(per_record):
            kept = per_record[rec]
            offsets[rec + 1] = len(kept)
            for alias, code, mtype in kept:
                aliases.append(alias)
                codes.append(self.countries[code])
                types.append(MATCH_TYPES[mtype])
        np.cumsum(offsets, out=offsets)
        values = pa.StructArray.from_arrays(
            [pa.array(aliases, pa.string()), pa.array(codes, pa.string()), pa.array(types, pa.string())],
            fields=list(MATCH_STRUCT),
        )
        return pa.ListArray.from_arrays(pa.array(offsets), values)


def _decide(kept: list[tuple[str, int, int]]) -> tuple[int, int, int]:
    """(country index or -1, outcome code, top score) from one record's distinct matches."""
    scores: dict[int, int] = defaultdict(int)
    for _, code, mtype in kept:
        scores[code] += MATCH_WEIGHTS[MATCH_TYPES[mtype]]
    if len(scores) == 1:
        (code, s), = scores.items()
        return code, OUTCOMES.index("single_country"), s
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if ranked[0][1] > ranked[1][1]:
        return ranked[0][0], OUTCOMES.index("weighted_majority"), ranked[0][1]
    return -1, OUTCOMES.index("ambiguous"), ranked[0][1]

