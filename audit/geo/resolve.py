"""Deterministic country resolution of caption text, a whole Arrow batch at a time.

The batch is repaired (mojibake), normalized (``audit.geo.normalize``), and scanned by Aho–Corasick automata
(ahocorasick-rs, chosen by measurement in bench/bench_resolver.py) over the Arrow UTF-8 data buffers in
place, leftmost-longest and non-overlapping, so no Python string is made per record. Names that
match in any case are searched in the lower-cased text; names that count only when capitalised
(small towns, state codes, "US") are searched, as written, in a second copy of the normalized text
that keeps its case, whose bytes line up with the first (the patterns and what each hit means are
compiled once per lexicon, ``audit.geo.patterns``). Python only touches the (rare) matches: it maps
each byte offset back to its record with the Arrow offsets and decides the record; matches that
cannot count are dropped before that, vectorised.

Two decision rules, chosen by the lexicon:

* ``weighted`` (``paper``, ``extended``): each distinct alias counts once, s(c) = 4·n_country +
  3·n_demonym + 2·(n_city + n_region), "City, Region" pairs go to the region's country.
* ``evidence`` (``gazetteer``): places outrank demonyms, codes and regions confirm the town before
  them, context-only names need their country named elsewhere, postal addresses count
  (``audit.geo.evidence``).

A record is ``single_country`` (one country matched), ``weighted_majority`` (several, one uniquely
highest score), ``ambiguous`` (a tie at the top) or ``unresolved``; every resolved record also gets an
evidence tier, and with ``min_evidence`` a record below that tier is ``unresolved``.
"""
from __future__ import annotations

import copy
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

import ahocorasick_rs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.geo.addresses import find_addresses
from audit.geo.evidence import (
    ALTERNATE_NAME_WEIGHT,
    BRANDS,
    BUSINESS_NAME,
    COUNTRY_NAME_KEPT,
    DEMONYM_BREAKS_TIE,
    DEMONYM_IN_FIXED_PHRASE,
    NAME_AS_LABEL,
    NAME_IN_PROSE,
    NAME_IN_TRADE_PHRASE,
    NAMED_COUNTRY_BREAKS_TIE,
    PERSON_NAME,
    PERSONAL_PRONOUNS,
    PLACE_NAME_AS_LABEL,
    PLACE_NAME_IN_PROSE,
    PLACE_WEIGHTS,
    STATE_CODE_PICKS_NAMESAKE,
    STREET_TYPES,
    TIER_RANK,
    TIERS,
    TRADE_NOUNS,
    VILLAGE_POPULATION,
    business_name,
    check_min_evidence,
    demonym_breaks_tie,
    demonym_in_fixed_phrase,
    is_locative,
    name_in_prose,
    named_country_breaks_tie,
    person_name,
    place_name_in_prose,
    state_code_picks_namesake,
    tier_of,
)
from audit.geo.lexicon import GAZETTEER_MATCH_TYPES, MATCH_WEIGHTS
from audit.geo.mojibake import repair_mojibake
from audit.geo.normalize import non_ascii_rows, normalize_array, normalize_cased_array
from audit.geo.patterns import Patterns, compile_patterns
from audit.geo.sources import person_tokens

OUTCOMES = ("single_country", "weighted_majority", "ambiguous", "unresolved")
UNRESOLVED = OUTCOMES.index("unresolved")
MATCH_TYPES = tuple(MATCH_WEIGHTS)
ALL_MATCH_TYPES = (*MATCH_TYPES, *GAZETTEER_MATCH_TYPES, "address")
_T = {t: i for i, t in enumerate(ALL_MATCH_TYPES)}
_PLACE_WEIGHT = tuple(PLACE_WEIGHTS.get(t, 0) for t in ALL_MATCH_TYPES)  # by type index (demonyms are counted apart)
_DEMONYM, _TOWN, _CODE, _ADDRESS = _T["demonym"], _T["town"], _T["code"], _T["address"]
_COUNTRY, _REGION = _T["country"], _T["region"]
_STRONG = frozenset({_T["country"], _T["region"], _T["code"], _T["address"]})  # the place weight 4 types
_PAIR_HEADS = frozenset({_T["city"], _T["town"], _T["region"]})  # "Town" of "Town, Region"
_PAIR_TAILS = frozenset({_T["region"], _T["code"], _T["country"]})
_SINGLE, _MAJORITY, _AMBIGUOUS = (OUTCOMES.index(o) for o in ("single_country", "weighted_majority", "ambiguous"))
# A record decided by one alias of one type: its score and its tier (without, with a locative before it)
_LONE_WEIGHT = tuple(1 if t == "demonym" else PLACE_WEIGHTS.get(t, 0) for t in ALL_MATCH_TYPES)
_VILLAGE, _ALTERNATE = TIER_RANK["village"], TIER_RANK["alternate_name"]
_LONE_TIER = tuple((TIER_RANK[tier_of([t], False)], TIER_RANK[tier_of([t], True)]) for t in ALL_MATCH_TYPES)
# The token after every hit is compared with the street types at once, as fixed-width byte keys.
_STREET_WIDTH = max(map(len, STREET_TYPES)) + 1  # a street type and the space after it
_STREET_KEYS = np.array(sorted(t.encode() for t in STREET_TYPES), dtype=f"S{_STREET_WIDTH}")
_DFA_MAX_PATTERNS = 20_000
MATCH_STRUCT = pa.struct([("alias", pa.string()), ("country", pa.string()), ("match_type", pa.string())])
POLICIES = ("weighted", "evidence")
_LOCATIVE_TOKENS = 2  # how many tokens before a town the locative rule looks at


@dataclass(frozen=True)
class Resolution:
    """Per-record result of one batch, aligned with the input rows."""

    country: pa.Array  # string, null unless single_country / weighted_majority
    outcome: pa.Array  # dictionary<int8, string> over OUTCOMES
    score: pa.Array  # int16: winning (or tied top) score, 0 when unresolved
    matches: pa.Array | None  # list<struct<alias, country, match_type>>, when asked for
    match_type_counts: dict[str, int]  # distinct (record, alias) matches by type, for the summary
    country_index: np.ndarray  # ``country`` as int32 indices into ``CountryResolver.countries`` (−1: none), for counting
    tier: pa.Array | None = None  # dictionary<int8, string> over evidence.TIERS; null when nothing was decided
    tier_counts: dict[str, int] = field(default_factory=dict)  # resolved records by tier (before min_evidence)
    mojibake_repaired: int = 0  # records whose text was repaired before matching
    below_min_evidence: int = 0  # records resolved but turned unresolved by min_evidence
    rules: pa.Array | None = None  # list<string>: the named evidence rules that changed each record, with the matches


@dataclass(slots=True)
class _Hit:
    """One matched alias of one record: its span and the entries still in play."""

    alias: str
    start: int
    end: int
    entries: list[tuple]  # (alias_norm, country, type, pair_only, context_only, case, admin1, population)
    pid: int  # the pattern matched (-1: an address)
    paired: bool = False


class CountryResolver:
    """A compiled lexicon. Build once per worker (it is pure state) and call on every batch.

    ``policy`` is inferred from the lexicon when not given: ``evidence`` when it holds gazetteer
    match types (towns, codes, blockers), else ``weighted``. ``addresses`` (postal codes) defaults to
    on for the evidence policy.
    """

    def __init__(self, entries: pa.Table, *, min_evidence: str | None = None, policy: str | None = None,
                 repair_mojibake: bool = True, addresses: bool | None = None, patterns: Patterns | None = None):
        types = set(entries.column("match_type").unique().to_pylist())
        self.policy = policy or ("evidence" if types & set(GAZETTEER_MATCH_TYPES) else "weighted")
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        self.min_evidence = check_min_evidence(min_evidence)
        self.repair = repair_mojibake
        self.addresses = self.policy == "evidence" if addresses is None else addresses
        # ``patterns``: this lexicon compiled before (connectors.geo.compiled keeps them between workers)
        compiled = patterns if patterns is not None else compile_patterns(entries, ALL_MATCH_TYPES)
        self.countries: list[str] = compiled.countries
        self.match_types = [t for t in ALL_MATCH_TYPES if t in MATCH_TYPES or t in types or (t == "address" and self.addresses)]
        self._code_of = {c: i for i, c in enumerate(self.countries)}
        self._entries = compiled.entries
        self._n_lower = len(compiled.lower)
        kind = ahocorasick_rs.MatchKind.LeftmostLongest
        # The any-case patterns are few (the gazetteer's ~12,000): as a DFA (~60 MiB when this was
        # written) they scan ~1.6× faster than as the default NFA; the ~270,000 cased ones would not fit one.
        impl = {"implementation": ahocorasick_rs.Implementation.DFA} if len(compiled.lower) <= _DFA_MAX_PATTERNS else {}
        self._lower = ahocorasick_rs.BytesAhoCorasick(compiled.lower, matchkind=kind, **impl)
        self._cased = ahocorasick_rs.BytesAhoCorasick(compiled.cased, matchkind=kind) if compiled.cased else None
        self._needs_case = self._cased is not None or bool(compiled.case_checked.any())
        # A pattern whose every entry is context-only or pair-only decides nothing alone (``_can_count``).
        self._anchors = compiled.anchor
        self._blocked = compiled.blocked.tolist()  # a blocker: "french fries" says nothing about France
        self._check_case = compiled.case_checked.tolist()  # cased patterns passed their case rule already
        self._pair_only = compiled.pair_only.tolist()
        self._context_country = compiled.context_country
        self._person_named_place = compiled.person_named_place
        self._demonym = compiled.demonym.tolist()
        self._country_offsets, self._country_of_pattern = compiled.country_offsets, compiled.country
        self._country_dict = pa.array(self.countries, pa.string())
        # given names and surnames (``person_name``), for the evidence rule only
        self._persons = person_tokens() if self.policy == "evidence" else None

    def at_min_evidence(self, tier: str | None) -> CountryResolver:
        """The same compiled lexicon at another operating point (no recompiling)."""
        other = copy.copy(self)
        other.min_evidence = check_min_evidence(tier)
        return other

    # ---- batch ---------------------------------------------------------------------------------
    def resolve(self, texts: pa.Array | pa.ChunkedArray, with_matches: bool = False) -> Resolution:
        """Resolve every record of ``texts`` (nulls resolve as empty text)."""
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if texts.type == pa.large_string():
            texts = texts.cast(pa.string())
        repaired = 0
        # which records hold non-ASCII text: read once for the mojibake check and the normalizer (a superset
        # after NFKC, which can only make a record ASCII, and after the repair, which never does)
        non_ascii = non_ascii_rows(texts) if texts.type == pa.string() else None
        if self.repair:
            texts, repaired = repair_mojibake(texts, non_ascii)
        nfkc = pc.utf8_normalize(pc.fill_null(texts, ""), "NFKC") if self._needs_case or self.addresses else None
        if self._needs_case:
            # one separator pass: the lower-cased text is the cased one lower-cased (same kernels,
            # same result: lower-casing maps letters to letters and leaves separators alone)
            cased = _plain(normalize_cased_array(nfkc, is_nfkc=True, non_ascii=non_ascii))
            norm = _plain(pc.utf8_lower(cased))
        else:
            cased = None
            norm = _plain(pc.fill_null(normalize_array(texts, non_ascii), ""))
        n = len(norm)
        offsets = np.frombuffer(norm.buffers()[1], dtype=np.int32, count=n + 1, offset=norm.offset * 4)
        base = int(offsets[0])
        lower_view = _view(norm, offsets)
        cased_view = None
        aligned = None
        hits = _scan(self._lower, lower_view, 0)
        if cased is not None:
            cased, aligned = _align_cased(cased, norm, offsets)
            coff = np.frombuffer(cased.buffers()[1], dtype=np.int32, count=n + 1, offset=cased.offset * 4)
            cased_view = _view(cased, coff)
            if self._cased is not None:
                chits = _scan(self._cased, cased_view, self._n_lower)
                if len(chits):
                    crec = np.searchsorted(coff - coff[0], chits[:, 1], side="right") - 1
                    chits = chits[aligned[crec]]
                    hits = np.concatenate([hits, chits]) if len(hits) else chits
        addresses: dict[int, list] = defaultdict(list)
        if self.addresses:
            for a in find_addresses(nfkc):
                addresses[a.row].append(a)

        country_idx = np.full(n, -1, dtype=np.int32)
        outcome = np.full(n, UNRESOLVED, dtype=np.int8)
        score = np.zeros(n, dtype=np.int16)
        tier = np.full(n, -1, dtype=np.int8)
        hits = hits[np.lexsort((-hits[:, 2], hits[:, 1]))]
        recs = np.searchsorted(offsets - base, hits[:, 1], side="right") - 1
        # a hit starting before an earlier one ends (records never overlap each other): only the
        # two scans can overlap, and only their records need the leftmost-longest merge
        overlap = np.zeros(len(hits), dtype=bool)
        overlap[1:] = hits[1:, 1] < np.maximum.accumulate(hits[:-1, 2])
        if self.policy == "evidence" and len(hits):
            keep = self._can_count(hits, recs, overlap, n, addresses)
            hits, recs, overlap = hits[keep], recs[keep], overlap[keep]
        # each record's (start, end, pattern, street follows) spans: slices of one list
        street = _street_follows(lower_view, hits[:, 2]) if self.policy == "evidence" else np.zeros(len(hits), bool)
        spans = list(zip(hits[:, 1].tolist(), hits[:, 2].tolist(), hits[:, 0].tolist(), street.tolist()))
        cuts = np.flatnonzero(np.diff(recs)) + 1
        firsts = np.concatenate([[0], cuts]) if len(recs) else cuts
        merge = np.logical_or.reduceat(overlap, firsts) if len(firsts) else overlap
        groups = list(zip(recs[firsts].tolist(), firsts.tolist(), [*cuts.tolist(), len(recs)], merge.tolist()))
        groups += [(rec, 0, 0, False) for rec in addresses.keys() - set(recs[firsts].tolist())]
        decide = self._weighted if self.policy == "weighted" else self._evidence
        rec_start = (offsets - base).tolist()
        aligned_rec = aligned.tolist() if aligned is not None else [False] * n
        per_record: dict[int, list[tuple[str, int, int]]] = {}
        per_record_rules: dict[int, list[str]] = {}
        decided: list[int] = []
        decisions: list[tuple[int, int, int, int]] = []
        matched_types: list[int] = []
        for rec, first, last, overlapping in groups:
            mine = _leftmost_longest(spans[first:last]) if overlapping else spans[first:last]
            kept, decision, fired = decide(mine, lower_view, cased_view if aligned_rec[rec] else None, rec_start[rec],
                                           rec_start[rec + 1], addresses.get(rec, ()), nfkc, rec)
            if fired:
                per_record_rules[rec] = fired
            if kept:
                per_record[rec] = kept
                matched_types += [m[2] for m in kept]
                decided.append(rec)
                decisions.append(decision)
        if decided:
            country_idx[decided], outcome[decided], score[decided], tier[decided] = np.array(decisions, dtype=np.int32).T
        by_type = np.bincount(np.array(matched_types, dtype=np.int64), minlength=len(ALL_MATCH_TYPES))
        type_counts = {t: int(by_type[_T[t]]) for t in self.match_types}

        tier_counts = {t: int(c) for t, c in zip(TIERS, np.bincount(tier[tier >= 0], minlength=len(TIERS)))}
        below = 0
        if self.min_evidence is not None:
            weak = (tier > TIER_RANK[self.min_evidence]) & (country_idx >= 0)
            below = int(weak.sum())
            country_idx[weak] = -1
            outcome[weak] = UNRESOLVED
        country = pa.DictionaryArray.from_arrays(pa.array(country_idx, mask=country_idx < 0), self._country_dict).cast(pa.string())
        return Resolution(
            country=country,
            outcome=pa.DictionaryArray.from_arrays(pa.array(outcome), pa.array(OUTCOMES)),
            score=pa.array(score),
            matches=self._matches_array(n, per_record) if with_matches else None,
            match_type_counts=type_counts,
            tier=pa.DictionaryArray.from_arrays(pa.array(tier, mask=tier < 0), pa.array(TIERS)),
            tier_counts=tier_counts,
            mojibake_repaired=repaired,
            below_min_evidence=below,
            country_index=country_idx,
            rules=_lists(n, per_record_rules) if with_matches else None,
        )

    # ---- the weighted rule (paper, extended) -----------------------------------------------------
    def _weighted(self, spans, lower, cased, _rec_start, _rec_end, _addresses, _written_text, _rec):
        """One record's matches (in text order) → distinct (alias, country, type) and the decision.

        Adjacent tokens share no byte: a pattern ends on the first space of a double-space separator
        and the next one starts on the second, so "City, Region" is ``start == previous end``.
        """
        out: list[tuple[str, int, int, int]] = []
        prev_end, prev_cities = -1, set()
        region, city = _T["region"], _T["city"]
        for start, end, pid, _ in spans:
            entries = [e for e in self._entries[pid] if _case_ok(e[5], lower, cased, start, end)]
            follows_city = start == prev_end and bool(prev_cities)
            regions = [e for e in entries if e[2] == region]
            agreeing = {e[1] for e in regions} & prev_cities if follows_city else set()
            prev_end = end
            prev_cities = {e[1] for e in entries if e[2] == city}
            for alias, code, mtype, pair_only, *_ in entries:
                if mtype == region and follows_city:
                    if agreeing and code not in agreeing:
                        continue  # a region name shared by several countries: the city's one
                    # "Paris, Texas": the region decides; the city just before it is dropped.
                    out = [m for m in out if not (m[2] == city and m[3] == start)]
                elif pair_only:
                    continue
                out.append((alias, code, mtype, end))
        kept = sorted({(a, c, t) for a, c, t, _ in out})
        return kept, (_decide(kept) if kept else None), []

    # ---- the evidence rule (gazetteer) ----------------------------------------------------------
    def _evidence(self, spans, lower, cased, rec_start, rec_end, addresses, written_text, rec):
        """One record's matches (in text order) → distinct (alias, country, type), the decision and the rules
        that fired. ``written_text[rec]``: the record as written (NFKC), for the rules that read punctuation."""
        blocked, check_case, table, pair_only = self._blocked, self._check_case, self._entries, self._pair_only
        hits: list[_Hit] = []
        fired: set[str] = set()  # the named rules (``audit.geo.evidence``) that changed this record's evidence
        for i, (start, end, pid, street) in enumerate(spans):
            if blocked[pid]:
                continue  # a blocker ("french fries" says nothing about France)
            entries = table[pid]
            if street and not _apart_from_next_word(lower, cased, start, end, rec_end, written_text, rec):
                # a street ("Dublin Road", "Korea Way") is no place; a country's before a road ("Laos road") is
                entries = [e for e in entries if e[2] == _COUNTRY] if _common_noun_follows(cased, end, rec_end) else []
                if not entries:
                    continue
            if check_case[pid]:
                entries = [e for e in entries if _case_ok(e[5], lower, cased, start, end)]
            if self._demonym[pid] and demonym_in_fixed_phrase(_next_token(lower, end, rec_end)) and any(e[2] == _DEMONYM for e in entries):
                fired.add(DEMONYM_IN_FIXED_PHRASE)
                entries = [e for e in entries if e[2] != _DEMONYM]
            # a country's name that counts alone was judged no person's name when the lexicon was built ("Maxwell,
            # Barbados": the given name before it makes no surname of it)
            if (cased is not None and self._persons is not None and any(e[2] != _DEMONYM and not e[4] for e in entries)
                    and not any(e[2] == _COUNTRY and not e[4] for e in entries)):
                rule = self._name_of_other(spans, i, entries[0][0], lower, cased, rec_start, rec_end)
                if rule is not None:
                    fired.add(rule)
                    entries = [(*e[:4], True, *e[5:]) for e in entries if e[2] != _DEMONYM]
            if self._context_country[pid] and cased is not None:
                rule = (NAME_IN_PROSE if _written_as_name(lower, cased, rec_start, rec_end, start, end) else
                        NAME_AS_LABEL if _written_as_label(lower, cased, start, end, written_text, rec) else
                        NAME_IN_TRADE_PHRASE if _in_trade_phrase(lower, cased, rec_start, rec_end, start, end) else None)
                lifted = name_in_prose(entries, _COUNTRY, _REGION) if rule else entries
                if lifted is not entries:
                    fired.add(rule)
                    entries = lifted
            if (self._person_named_place[pid] and entries and cased is not None
                    and _next_token(lower, end, rec_end) != "s"):  # "at Macy's": a business, named after a person
                rule = (PLACE_NAME_IN_PROSE if _written_as_name(lower, cased, rec_start, rec_end, start, end, person=True) else
                        PLACE_NAME_AS_LABEL if _written_as_label(lower, cased, start, end, written_text, rec, person=True)
                        else None)
                lifted = place_name_in_prose(entries, entries[0][0]) if rule else entries
                if lifted is not entries:
                    fired.add(rule)
                    entries = lifted
            if entries:
                hits.append(_Hit(entries[0][0], start, end, entries, pid))
        if not addresses:
            if not hits:
                return [], None, sorted(fired)
            if len(hits) == 1:
                alone = [e for e in hits[0].entries if not (e[3] or e[4])]
                if len(alone) == 1:  # the common case: one name, one country
                    (norm, code, mtype, *_, population, alternate), = alone
                    if alternate or (mtype == _TOWN and (population or 0) < VILLAGE_POPULATION):
                        tier = _ALTERNATE if alternate else _VILLAGE
                        return [(norm, code, mtype)], (code, _SINGLE, _LONE_WEIGHT[mtype], tier), sorted(fired)
                    locative = mtype == _TOWN and is_locative(_tokens_before(lower, rec_start, hits[0].start))
                    return [(norm, code, mtype)], (code, _SINGLE, _LONE_WEIGHT[mtype], _LONE_TIER[mtype][locative]), sorted(fired)
        if len(hits) > 1:
            _pair(hits, lower, cased, fired)
        for h in hits:
            if not h.paired and pair_only[h.pid]:
                h.entries = [e for e in h.entries if not e[3]]
        hits = [h for h in hits if h.entries]
        for a in addresses:
            code = self._code_index(a.country)
            if code >= 0:
                hits.append(_Hit(a.alias, -1, -1, [(a.alias, code, _ADDRESS, False, False, 0, frozenset(), 0, False)], -1, paired=True))
        _agree(hits, fired)
        hits = [h for h in hits if h.entries]
        if not hits:
            return [], None, sorted(fired)
        place: dict[int, int] = {}
        demonym: dict[int, int] = {}
        for h in hits:
            for e in h.entries:
                if e[2] == _DEMONYM:
                    demonym[e[1]] = demonym.get(e[1], 0) + 1
                else:
                    place[e[1]] = place.get(e[1], 0) + (ALTERNATE_NAME_WEIGHT if e[8] else _PLACE_WEIGHT[e[2]])
        board = place or demonym
        kept = sorted({e[:3] for h in hits for e in h.entries})
        top = max(board.values())
        leaders = [c for c, v in board.items() if v == top]
        if len(leaders) > 1 and place:
            broken = named_country_breaks_tie(leaders, {e[1] for h in hits for e in h.entries if e[2] == _COUNTRY})
            if broken != leaders:
                fired.add(NAMED_COUNTRY_BREAKS_TIE)
                leaders = broken
        if len(leaders) > 1 and place and demonym:
            broken = demonym_breaks_tie(leaders, demonym)
            if broken != leaders:
                fired.add(DEMONYM_BREAKS_TIE)
                leaders = broken
        if len(leaders) > 1:
            return kept, (-1, _AMBIGUOUS, top + (sum(demonym.values()) if place else 0), -1), sorted(fired)
        winner = leaders[0]
        # the winner's distinct (type, alias), and its first town or place named by an alternate name
        distinct, town, town_population, town_alternate = set(), None, 0, False
        for h in hits:
            for e in h.entries:
                if e[1] == winner:
                    distinct.add((e[2], h.alias))
                    if town is None and (e[2] == _TOWN or e[8]):
                        town, town_population, town_alternate = h, e[7] or 0, e[8]
        locative = town is not None and is_locative(_tokens_before(lower, rec_start, town.start))
        tier = tier_of([ALL_MATCH_TYPES[t] for t, _ in distinct], locative, town is not None and town_population < VILLAGE_POPULATION,
                       town_alternate)
        outcome = _SINGLE if len(place.keys() | demonym.keys()) == 1 else _MAJORITY
        return kept, (winner, outcome, place.get(winner, 0) + demonym.get(winner, 0), TIER_RANK[tier]), sorted(fired)

    def _name_of_other(self, spans, i: int, alias_norm: str, lower, cased, rec_start: int, rec_end: int) -> str | None:
        """``PERSON_NAME`` or ``BUSINESS_NAME`` when span ``i`` (its entries' name ``alias_norm``),
        written capitalised, is part of a person's or a business's name (``audit.geo.evidence``), else None."""
        if self._persons is None:  # the weighted policy reads no names
            return None
        start, end = spans[i][0], spans[i][1]
        given, surnames = self._persons
        brand, given_name = alias_norm in BRANDS, alias_norm in given
        raw_before = bytes(cased[max(rec_start, start - 60):start]).split()[-3:]
        # most names have a lower-case word before them and are no given name: neither rule can apply
        if not (brand or given_name or (raw_before and raw_before[-1].decode("utf-8", "replace")[:1].isupper())):
            return None
        if not _case_ok(1, lower, cased, start, end):
            return None
        name = _written(lower, cased, start, end)
        raw_after = bytes(cased[end:min(rec_end, end + 60)]).split()[:3]
        before = [t.decode("utf-8", "replace") for t in raw_before]
        after = [t.decode("utf-8", "replace") for t in raw_after]
        if brand and business_name([*_capitalised_tail(before), *name.split(), *_capitalised_tail(after[::-1])[::-1]], name):
            return BUSINESS_NAME
        # a name beside it that can count alone is a place, and no given name or surname ("Austin Texas")
        place_before = any(s[1] == start and self._anchors[s[2]] for s in spans[:i])
        place_after = any(s[0] == end and self._anchors[s[2]] for s in spans[i + 1:])
        if person_name([] if place_before else before, name, None if place_after or not after else after[0], given, surnames):
            return PERSON_NAME
        return None

    def _can_count(self, hits: np.ndarray, recs: np.ndarray, overlap: np.ndarray, n: int, addresses: dict) -> np.ndarray:
        """Which hits to keep: drops, vectorised, the ones the evidence rule would drop without
        looking — a name that decides nothing alone (every entry context-only or pair-only), with no
        neighbour to pair with, no address in its record, no overlap in its record, and whose
        countries no match that can lend support names (a plain name, or one with a neighbour).
        Only a shortcut: without it every decision is the same (tested); with it most such names
        cost no Python step."""
        anchor = self._anchors[hits[:, 0]]
        adjacent = np.zeros(len(hits), dtype=bool)
        touching = (recs[1:] == recs[:-1]) & (hits[1:, 1] == hits[:-1, 2])
        adjacent[1:] |= touching
        adjacent[:-1] |= touching
        lends = anchor | adjacent
        # may be written as a name (``_written_as_name``)
        keep_named = self._context_country[hits[:, 0]] | self._person_named_place[hits[:, 0]]
        keep = lends | keep_named | (np.bincount(recs, weights=overlap, minlength=n) > 0)[recs]
        if addresses:
            keep |= np.isin(recs, np.fromiter(addresses, dtype=np.int64))
        lone = np.flatnonzero(~keep)
        if len(lone):
            keep[lone[self._named_by(hits, recs, lone, np.flatnonzero(lends))]] = True
        return keep

    def _named_by(self, hits: np.ndarray, recs: np.ndarray, which: np.ndarray, others: np.ndarray) -> np.ndarray:
        """For each hit of ``which``: does a hit of ``others`` in the same record name one of its countries?"""
        def keys(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            pid = hits[idx, 0]
            per_hit = self._country_offsets[pid + 1] - self._country_offsets[pid]  # every pattern names ≥ 1
            owner = np.repeat(np.arange(len(idx)), per_hit)
            within = np.arange(len(owner)) - np.repeat(np.cumsum(per_hit) - per_hit, per_hit)
            country = self._country_of_pattern[self._country_offsets[pid][owner] + within]
            return recs[idx][owner] * (len(self.countries) + 1) + country + 1, np.cumsum(per_hit) - per_hit

        mine, starts = keys(which)
        named = np.isin(mine, keys(others)[0]) if len(others) else np.zeros(len(mine), dtype=bool)
        return np.logical_or.reduceat(named, starts)

    def _code_index(self, code: str) -> int:
        return self._code_of.get(code, -1)

    def _matches_array(self, n: int, per_record: dict[int, list[tuple[str, int, int]]]) -> pa.Array:
        offsets = np.zeros(n + 1, dtype=np.int32)
        aliases, codes, types = [], [], []
        for rec in sorted(per_record):
            kept = per_record[rec]
            offsets[rec + 1] = len(kept)
            for alias, code, mtype in kept:
                aliases.append(alias)
                codes.append(self.countries[code])
                types.append(ALL_MATCH_TYPES[mtype])
        np.cumsum(offsets, out=offsets)
        values = pa.StructArray.from_arrays(
            [pa.array(aliases, pa.string()), pa.array(codes, pa.string()), pa.array(types, pa.string())],
            fields=list(MATCH_STRUCT),
        )
        return pa.ListArray.from_arrays(pa.array(offsets), values)


# ---- helpers ---------------------------------------------------------------------------------------
def _lists(n: int, per_record: dict[int, list[str]]) -> pa.Array:
    """list<string> of ``n`` rows from the few rows that have any (the rest empty)."""
    sizes = np.zeros(n + 1, dtype=np.int32)
    for rec, names in per_record.items():
        sizes[rec + 1] = len(names)
    values = [name for rec in sorted(per_record) for name in per_record[rec]]
    return pa.ListArray.from_arrays(pa.array(np.cumsum(sizes, dtype=np.int32)), pa.array(values, pa.string()))


def _plain(arr: pa.Array) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.string()) if arr.type == pa.large_string() else arr


def _align_cased(cased: pa.Array, lower: pa.Array, offsets: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The cased text made byte-for-byte parallel to ``lower`` (its lower-cased form), and which records kept
    their case. Lower-casing keeps a character's UTF-8 length nearly always, but not for a few: "İ" (2 bytes)
    becomes "i" (1), "ẞ" (3) "ß" (2). Such a record's cased text is replaced by its lower-cased text, so
    every position the scans find in ``lower`` is the same position in the cased text, for that record and
    every record after it in the batch (else a record's case evidence would depend on the records before
    it: a batch boundary would change its country). The replaced records are read without case evidence."""
    coff = np.frombuffer(cased.buffers()[1], dtype=np.int32, count=len(cased) + 1, offset=cased.offset * 4)
    aligned = np.diff(coff) == np.diff(offsets)
    if aligned.all():
        return cased, aligned
    return pc.if_else(pa.array(aligned), cased, lower), aligned


def _view(norm: pa.Array, offsets: np.ndarray):
    data = norm.buffers()[2]
    if data is None or offsets[-1] <= offsets[0]:
        return memoryview(b"")
    return memoryview(data).cast("B")[offsets[0]:offsets[-1]]


def _scan(automaton, view, pid_offset: int) -> np.ndarray:
    found = automaton.find_matches_as_indexes(view) if len(view) else []
    if not found:
        return np.zeros((0, 3), dtype=np.int64)
    hits = np.asarray(found, dtype=np.int64)
    if pid_offset:
        hits[:, 0] += pid_offset
    return hits


def _leftmost_longest(spans: list[tuple[int, int, int, bool]]) -> list[tuple[int, int, int, bool]]:
    """Spans sorted by (start, -end) from two scans → non-overlapping, leftmost-longest; equal spans
    from both scans are both kept (one name may have any-case and capitalised-only entries)."""
    out: list[tuple[int, int, int, bool]] = []
    last_end = -1
    for span in spans:
        s, e = span[0], span[1]
        if s >= last_end or (out and s == out[-1][0] and e == out[-1][1]):
            out.append(span)
            last_end = max(last_end, e)
    return out


def _case_ok(rule: int, lower, cased, start: int, end: int) -> bool:
    """Is the span written as the entry's case rule asks? (the pattern's first byte is a space)"""
    if rule == 0 or cased is None:
        return rule == 0
    lead = lower[start + 1]
    width = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    if cased[start + 1:start + 1 + width] == lower[start + 1:start + 1 + width]:
        return False  # first letter not a capital
    if rule == 1:
        return True
    text = bytes(cased[start + 1:end - 1]).decode("utf-8", "replace")
    return text == text.upper()


def _written_as_name(lower, cased, rec_start: int, rec_end: int, start: int, end: int, person: bool = False) -> bool:
    """``evidence.NAME_IN_PROSE``: is the span a capitalised name right after a locative and not
    followed by another capitalised word (which makes it part of a longer name: "Jordan Peterson",
    "China Southern")? Needs the text as written. A ``person``'s name reads only ``evidence.PERSON_LOCATIVES``."""
    if cased is None or not _case_ok(1, lower, cased, start, end):
        return False
    after = bytes(cased[end:min(rec_end, end + 40)]).split()
    return not (after and after[0][:1].isupper()) and is_locative(_tokens_before(lower, rec_start, start), person)


def _written_as_label(lower, cased, start: int, end: int, written_text: pa.Array | None, rec: int,
                      person: bool = False) -> bool:
    """``evidence.NAME_AS_LABEL``: is the span, capitalised, a label of its own in the record as written --
    alone in parentheses ("…Jewelry Gifts(China)", "(China (Mainland))") or closing the record after a
    comma or a dash ("Sunset from the beach, Palau")? Only the written text keeps the punctuation.
    For a ``person``'s name (``evidence.PLACE_NAME_AS_LABEL``) two bracketed forms are no label: after a personal
    pronoun, the editor's note of who it is ("He (Steele) said"), and in capitals, an acronym ("(NASH)")."""
    if written_text is None or not _case_ok(1, lower, cased, start, end):
        return False
    name = _written(lower, cased, start, end)
    text = written_text[rec].as_py() or ""
    found = _label_pattern(name).search(text)
    if found is None or not person or not found.group().startswith("("):
        return found is not None
    before = text[:found.start()].split()
    return not (name.isupper() or (before and before[-1].strip("\"'“”‘’").lower() in PERSONAL_PRONOUNS))


def _in_trade_phrase(lower, cased, rec_start: int, rec_end: int, start: int, end: int) -> bool:
    """``evidence.NAME_IN_TRADE_PHRASE``: is the span, capitalised, after "made in" ("Made In China", "made in
    China") or right before a noun of the trade ("China Suppliers", "China factory")?"""
    trade = _tokens_before(lower, rec_start, start) == ["made", "in"] or _next_token(lower, end, rec_end) in TRADE_NOUNS
    return trade and _case_ok(1, lower, cased, start, end)


@lru_cache(maxsize=4096)
def _label_pattern(name: str) -> re.Pattern:
    word = _words_pattern(name)
    return re.compile(rf"\(\s*{word}\s*[()]|[,\-\u2013\u2014|]\s*{word}[\s.!)]*$"
                      rf"|(?:\||\s[\-\u2013\u2014])\s*{word}\s*(?:\||[\-\u2013\u2014]\s)")


def _words_pattern(name: str) -> str:
    """A regular expression for ``name``'s words as written, whatever the spaces between them (the matching buffers
    separate words by more than one)."""
    return r"\s+".join(map(re.escape, name.split()))


def _written(lower, cased, start: int, end: int) -> str:
    """A span as written (lower-cased when the record's case is not at hand), without its separators."""
    return bytes((cased if cased is not None else lower)[start:end]).decode("utf-8", "replace").strip()


def _next_token(lower, end: int, rec_end: int) -> str:
    """The (lower-cased) token after a span ending at ``end``, or ""."""
    after = bytes(lower[end:min(rec_end, end + 24)]).split()
    return after[0].decode("utf-8", "replace") if after else ""


def _apart_from_next_word(lower, cased, start: int, end: int, rec_end: int, written_text: pa.Array | None, rec: int) -> bool:
    """Does punctuation stand between the span and the next word in the record as written ("¡Viva Mexico! Square
    Collection", "Bantayan - Way to the Beach")? Then that word begins something else, and names no street with it. A
    hyphen between words joins them, and does not count; a dash between spaces separates."""
    if written_text is None:
        return False
    name, following = _written(lower, cased, start, end), _next_token(lower, end, rec_end)
    pattern = rf"{_words_pattern(name)}(?:\s*[!?.,;:|()\[\]/]+\s*|\s+[-\u2013\u2014]+\s+){re.escape(following)}"
    return re.search(pattern, written_text[rec].as_py() or "", re.IGNORECASE) is not None


def _common_noun_follows(cased, end: int, rec_end: int) -> bool:
    """Is the token after a span ending at ``end`` written in lower case (a street type as a common noun: "Laos
    road", not the street "Korea Way")? False when the record's case is not at hand."""
    if cased is None:
        return False
    after = bytes(cased[end:min(rec_end, end + 24)]).split()
    return bool(after) and after[0].islower()


def _capitalised_tail(tokens: list[str]) -> list[str]:
    """The capitalised tokens at the end of ``tokens`` (the run of a name, nearest last)."""
    out: list[str] = []
    for t in reversed(tokens):
        if not t[:1].isupper():
            break
        out.append(t)
    return out[::-1]


def _tokens_before(lower, rec_start: int, start: int) -> list[str]:
    lo = max(rec_start, start - 40)
    return [t.decode("utf-8", "replace") for t in bytes(lower[lo:start]).split()[-_LOCATIVE_TOKENS:]]


def _street_follows(lower, ends: np.ndarray) -> np.ndarray:
    """For each match ending at ``ends`` (on a separator's first space), is the next token of its
    record a street type ("Dublin Road", "Oak Ridge Dr")? All matches at once, as byte keys."""
    if not len(ends):
        return np.zeros(0, dtype=bool)
    text = np.frombuffer(lower, dtype=np.uint8)
    window = text[np.minimum(ends[:, None] + np.arange(_STREET_WIDTH + 1), len(text) - 1)]
    token = window[:, 1:]
    space = token == 32
    width = np.where(space.any(axis=1), space.argmax(axis=1), -1)  # no space in reach: too long for a street type
    token = np.where(np.arange(_STREET_WIDTH) < width[:, None], token, 0).astype(np.uint8)
    keys = np.ascontiguousarray(token).view(f"S{_STREET_WIDTH}").ravel()
    return (window[:, 0] == 32) & (width > 0) & np.isin(keys, _STREET_KEYS)


def _pair(hits: list[_Hit], lower, cased, fired: set[str]) -> None:
    """"Town, Region" / "Town ST" / "Town, Country": adjacent names that agree confirm each other.

    The town keeps only its namesakes in the region's country (in the coded state, for codes), the
    region only its entries in the town's country, and both count even when context-only. (One span
    may be two hits, its any-case and its capitalised-only entries: each is tried with the next name.)"""
    ending: dict[int, list[_Hit]] = defaultdict(list)  # the hits before each one that end where it starts
    for b in hits:
        if b.start != b.end:
            for a in ending.get(b.start, ()):
                _pair_two(a, b, lower, cased, fired)
        ending[b.end].append(b)


def _pair_two(a: _Hit, b: _Hit, lower, cased, fired: set[str]) -> None:
    towns = [e for e in a.entries if e[2] in _PAIR_HEADS]
    tails = [e for e in b.entries if e[2] in _PAIR_TAILS] if towns else None
    if not tails:
        return
    keep_a, keep_b = set(), set()
    for t in tails:
        for e in towns:
            if e[1] == t[1] and (t[2] != _CODE or t[6] & e[6]) and e is not t:
                keep_a.add(e)
                keep_b.add(t)
    if not keep_a:
        keep_a, keep_b = state_code_picks_namesake(towns, tails, _CODE, _TOWN, _written(lower, cased, b.start, b.end))
        if keep_a:
            fired.add(STATE_CODE_PICKS_NAMESAKE)
    if keep_a:
        a.entries = [e for e in a.entries if e in keep_a]
        b.entries = [e for e in b.entries if e in keep_b]
        a.paired = b.paired = True


def _agree(hits: list[_Hit], fired: set[str]) -> None:
    """Context agreement: a name with namesakes or a context-only name keeps the entries whose
    country another name of the record supports (without context-only help and without
    demonyms); failing that, its non-context-only entries. (A name with one entry that is not
    context-only keeps it either way, and so does a name its country owns: ``COUNTRY_NAME_KEPT``.)"""
    if all(len(h.entries) == 1 and not h.entries[0][4] for h in hits):
        return  # no namesakes and nothing context-only: nothing to choose
    anchors = [{e[1] for e in h.entries if e[2] != _DEMONYM and (h.paired or not e[4])} for h in hits]
    support: dict[int, int] = {}
    for own in anchors:
        for c in own:
            support[c] = support.get(c, 0) + 1
    # support by a country, region, county, code or address: what may read a country's name as its namesake town
    strong = [{e[1] for e in h.entries if e[2] in _STRONG and (h.paired or not e[4])} for h in hits]
    for i, (h, own) in enumerate(zip(hits, anchors)):
        if h.paired or (len(h.entries) == 1 and not h.entries[0][4]):
            continue
        agreeing = [e for e in h.entries if support.get(e[1], 0) - (e[1] in own) > 0]
        country = [e for e in h.entries if e[2] == _COUNTRY and not e[4]]
        if country and not any(e in agreeing for e in country) and not any(
                e[1] in other for j, other in enumerate(strong) if j != i for e in agreeing):
            fired.add(COUNTRY_NAME_KEPT)
            agreeing = country
        h.entries = agreeing or [e for e in h.entries if not e[4]]


def _decide(kept: list[tuple[str, int, int]]) -> tuple[int, int, int, int]:
    """(country index or -1, outcome code, top score, tier index or -1) from one record's distinct matches."""
    scores: dict[int, int] = defaultdict(int)
    aliases: dict[int, list[str]] = defaultdict(list)
    for _, code, mtype in kept:
        scores[code] += MATCH_WEIGHTS[ALL_MATCH_TYPES[mtype]]
        aliases[code].append(ALL_MATCH_TYPES[mtype])
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return -1, OUTCOMES.index("ambiguous"), ranked[0][1], -1
    code, s = ranked[0]
    outcome = "single_country" if len(scores) == 1 else "weighted_majority"
    return code, OUTCOMES.index(outcome), s, TIER_RANK[tier_of(aliases[code], False)]
