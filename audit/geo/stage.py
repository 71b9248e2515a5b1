"""The geo stage: caption items in, per-record assignments and a mergeable partial count out.

Ray-free: the job calls ``GeoStage.process`` on each Arrow batch a connector yields. The partial
is a *cube* of counts keyed by (group, outcome, country, tld_country) plus skip and match-type
counts; cubes from any number of batches, shards or machines add up to the same totals, so nothing
row-sized ever travels to the driver.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.geo.choices import TIERS
from audit.geo.patterns import Patterns
from audit.geo.resolve import MATCH_STRUCT, OUTCOMES, CountryResolver, Resolution
from audit.geo.tld import cctld_table, tld_index

ALL = "__all__"  # group label of the whole corpus; per-group rows use the group value
RECORD_SCHEMA = pa.schema([
    ("record_id", pa.string()),
    ("group", pa.string()),
    ("country", pa.string()),
    ("outcome", pa.string()),
    ("score", pa.int16()),
    ("tld_country", pa.string()),
    ("matches", pa.list_(MATCH_STRUCT)),
    # evidence tier of the decision (audit.geo.evidence.TIERS), null when nothing was decided; a
    # record below --min-evidence keeps its tier and is unresolved
    ("tier", pa.string()),
    # the named evidence rules (audit.geo.evidence, e.g. "state_code_picks_namesake") that changed the
    # record's evidence; empty when none did
    ("rules", pa.list_(pa.string())),
])
# Sub-batches stay far below Arrow's 2 GiB string-offset limit even after normalization doubles
# separators, whatever the caption lengths.
MAX_BATCH_BYTES = 64 * 1024 * 1024


@dataclass
class GeoPartial:
    """Mergeable counts. Keys are plain tuples of strings so a partial round-trips through JSON."""

    cube: Counter = field(default_factory=Counter)  # (group, outcome, country|"", tld|"") → records
    skipped: Counter = field(default_factory=Counter)  # reason → rows
    match_types: Counter = field(default_factory=Counter)  # match type → distinct alias matches
    rows_in: int = 0
    # evidence tier → resolved records (before --min-evidence), and the text-level counters a
    # manifest reports: "mojibake_repaired" records, "below_min_evidence" records made unresolved
    tiers: Counter = field(default_factory=Counter)
    counters: Counter = field(default_factory=Counter)
    # (country, evidence tier) → records counted in the country's share (after --min-evidence): how
    # each share was found; filled only by a stage made with ``count_country_tiers``
    country_tiers: Counter = field(default_factory=Counter)

    def merge(self, other: GeoPartial) -> GeoPartial:
        self.cube.update(other.cube)
        self.skipped.update(other.skipped)
        self.match_types.update(other.match_types)
        self.tiers.update(other.tiers)
        self.counters.update(other.counters)
        self.country_tiers.update(other.country_tiers)
        self.rows_in += other.rows_in
        return self

    def to_json(self) -> dict:
        return {
            "rows_in": self.rows_in,
            "cube": [[*k, v] for k, v in sorted(self.cube.items())],
            "skipped": dict(sorted(self.skipped.items())),
            "match_types": dict(sorted(self.match_types.items())),
            "tiers": dict(sorted(self.tiers.items())),
            "counters": dict(sorted(self.counters.items())),
        } | ({"country_tiers": [[*k, v] for k, v in sorted(self.country_tiers.items())]} if self.country_tiers else {})

    @classmethod
    def from_json(cls, data: dict) -> GeoPartial:
        return cls(
            cube=Counter({tuple(row[:-1]): row[-1] for row in data["cube"]}),
            skipped=Counter(data["skipped"]),
            match_types=Counter(data["match_types"]),
            rows_in=data["rows_in"],
            tiers=Counter(data.get("tiers", {})),  # partials written before tiers existed have none
            counters=Counter(data.get("counters", {})),
            country_tiers=Counter({tuple(row[:-1]): row[-1] for row in data.get("country_tiers", [])}),
        )


class GeoStage:
    """Resolve caption items; one instance per worker holds the compiled lexicon.

    ``min_evidence`` (one of ``audit.geo.evidence.TIERS``) turns records resolved on weaker evidence
    into ``unresolved``: the high-precision operating point. ``repair_mojibake`` repairs cp1252 /
    Latin-1 round trips before matching (counted in ``GeoPartial.counters``). ``count_country_tiers``
    also counts each country's records by evidence tier (``GeoPartial.country_tiers``), for the
    report's "how each share was found".
    """

    def __init__(self, lexicon_entries: pa.Table, with_records: bool = False, min_evidence: str | None = None,
                 repair_mojibake: bool = True, count_country_tiers: bool = False, patterns: Patterns | None = None,
                 resolver: CountryResolver | None = None):
        # ``resolver``: this lexicon built before in this process (``connectors.geo.compiled.built_resolver``), used
        # at this stage's ``min_evidence``; its ``repair_mojibake`` must be this stage's
        if resolver is not None and resolver.repair != repair_mojibake:
            raise ValueError("resolver was built with another repair_mojibake than the stage's")
        self.resolver = resolver.at_min_evidence(min_evidence) if resolver is not None else CountryResolver(
            lexicon_entries, min_evidence=min_evidence, repair_mojibake=repair_mojibake, patterns=patterns)
        self.with_records = with_records
        self.count_country_tiers = count_country_tiers

    def warm_up(self) -> None:
        """Run every step once on a few made-up records, so a worker pays its one-time costs at set-up
        and its first batch costs what every batch costs. Why: the ccTLD's compiled pass loads numba and
        its cached machine code on first use (~1 s), which would otherwise land inside the scan, where it
        slows the first progress line and counts against the steady state."""
        texts = ["Sunset over Paris, France", "Café in São Paulo", "", "CafÃ© in ZÃ¼rich", "a dog on a beach"]
        urls = ["http://a.example.jp/x.jpg", "https://b.example.com/", None, "http://u@c.example.de", "bad url"]
        n = len(texts)
        none = pa.nulls(n, pa.string())
        self.process(pa.RecordBatch.from_arrays(
            [pa.array([f"warm-up#{i}" for i in range(n)]), pa.array(texts), none, pa.array(urls, pa.string()), none, none],
            names=["record_id", "text", "context", "url", "group", "skip_reason"]))

    def process(self, items: pa.RecordBatch) -> tuple[pa.Table | None, GeoPartial]:
        partial = GeoPartial(rows_in=items.num_rows)
        reasons = items.column("skip_reason")
        usable = items
        if reasons.null_count < len(reasons):  # a batch without skipped rows is used as it is, not copied
            for reason, n in _value_counts(reasons):
                if reason is not None:
                    partial.skipped[reason] += n
            usable = items.filter(pc.is_null(reasons))
        records = [self._resolve(chunk, partial) for chunk in _byte_chunks(usable)]
        table = pa.concat_tables(records) if records and self.with_records else None
        return table, partial

    def _resolve(self, items: pa.RecordBatch, partial: GeoPartial) -> pa.Table:
        text, context = items.column("text"), items.column("context")
        if context.null_count < len(context) or text.null_count:  # joining nothing to every caption is a copy
            text = pc.binary_join_element_wise(text, context, "\n", null_handling="skip")
        res = self.resolver.resolve(text, with_matches=self.with_records)
        tld = tld_index(items.column("url"))
        group = items.column("group")
        for mtype, n in res.match_type_counts.items():
            if n:
                partial.match_types[mtype] += n
        for tier, n in res.tier_counts.items():
            if n:
                partial.tiers[tier] += n
        for name, n in (("mojibake_repaired", res.mojibake_repaired), ("below_min_evidence", res.below_min_evidence)):
            if n:
                partial.counters[name] += n
        self._count(partial, res, tld, group)
        if self.count_country_tiers:
            self._count_country_tiers(partial, res)
        if not self.with_records:
            return pa.table({})
        tld_country = pc.take(cctld_table()[1], pa.array(tld, mask=tld < 0))
        assert res.tier is not None, "CountryResolver.resolve always sets the tier"
        return pa.Table.from_arrays(
            [items.column("record_id"), group, res.country, res.outcome.cast(pa.string()), res.score, tld_country,
             res.matches, res.tier.cast(pa.string()), res.rules],
            schema=RECORD_SCHEMA
        )

    def _count(self, partial: GeoPartial, res: Resolution, tld: np.ndarray, group: pa.Array) -> None:
        """Add the batch's records to the cube: each record's (outcome, country, ccTLD) as one integer
        key (and with its group, when the batch has any), counted by ``np.unique``; only the distinct
        keys, a few hundred, become Python tuples."""
        countries = ["", *self.resolver.countries]
        tlds = ["", *cctld_table()[1].to_pylist()]
        outcome = res.outcome.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        key = (outcome * len(countries) + res.country_index + 1) * len(tlds) + tld + 1
        cells = len(OUTCOMES) * len(countries) * len(tlds)

        def add(keys: np.ndarray, label) -> None:
            values, counts = np.unique(keys, return_counts=True)
            for v, n in zip(values.tolist(), counts.tolist()):
                g, rest = divmod(v, cells)
                o, rest = divmod(rest, len(countries) * len(tlds))
                c, t = divmod(rest, len(tlds))
                partial.cube[(label(g), OUTCOMES[o], countries[c], tlds[t])] += n

        add(key, lambda _: ALL)
        if group.null_count < len(group):
            encoded = pc.dictionary_encode(pc.fill_null(group, ""))
            names = [g or "(missing)" for g in encoded.dictionary.to_pylist()]
            add(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64) * cells + key, names.__getitem__)


    def _count_country_tiers(self, partial: GeoPartial, res: Resolution) -> None:
        """(country, tier) of every record placed in a country, counted by ``np.unique`` over one integer key."""
        assert res.tier is not None, "CountryResolver.resolve always sets the tier"
        tier = pc.fill_null(res.tier.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        placed = (res.country_index >= 0) & (tier >= 0)
        keys = res.country_index[placed].astype(np.int64) * len(TIERS) + tier[placed]
        values, counts = np.unique(keys, return_counts=True)
        for v, n in zip(values.tolist(), counts.tolist()):
            c, t = divmod(v, len(TIERS))
            partial.country_tiers[(self.resolver.countries[c], TIERS[t])] += n


def _value_counts(arr: pa.Array) -> list[tuple[str | None, int]]:
    vc = pc.value_counts(arr)
    return list(zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist()))


def _byte_chunks(batch: pa.RecordBatch) -> list[pa.RecordBatch]:
    """Split a batch so no chunk carries more than MAX_BATCH_BYTES of text."""
    if batch.num_rows == 0:
        return []
    text_bytes = batch.column("text").nbytes + batch.column("context").nbytes
    if text_bytes <= MAX_BATCH_BYTES:
        return [batch]
    sizes = pc.add(pc.fill_null(pc.binary_length(batch.column("text")), 0),
                   pc.fill_null(pc.binary_length(batch.column("context")), 0)).to_numpy(zero_copy_only=False)
    # Chunk k holds the rows whose running total ends in (k·limit, (k+1)·limit]: a chunk carries at
    # most the limit plus one row, far below the 2 GiB offset limit.
    chunk_of = (np.cumsum(sizes) - 1) // MAX_BATCH_BYTES
    bounds = np.flatnonzero(np.diff(chunk_of)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [batch.num_rows]])
    return [batch.slice(int(a), int(b - a)) for a, b in zip(starts, ends)]
