"""GeoStage counting each country's records by evidence tier: how each share was found."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from audit.geo.aggregate import summarize
from audit.geo.stage import GeoPartial
from tests.geo_compiled import geo_stage

TEXTS = ["Kerrville, TX", "Kerrville sunset", "Austin, Texas", "Danish style sideboard", "Copenhagen harbour", "a cat"]


@pytest.fixture(scope="module")
def entries():
    from connectors.geo.lexicon import load_lexicon

    return load_lexicon("gazetteer").entries


def items(texts: list[str]) -> pa.RecordBatch:
    n = len(texts)
    cols = {"record_id": [f"r{i}" for i in range(n)], "text": texts, "context": [None] * n, "url": [None] * n,
            "group": [None] * n, "skip_reason": [None] * n}
    return pa.RecordBatch.from_pydict({k: pa.array(v, pa.string()) for k, v in cols.items()})


def test_each_country_counts_its_records_by_tier_and_they_add_up_to_its_share(entries):
    stage = geo_stage(with_records=True, count_country_tiers=True)
    table, partial = stage.process(items(TEXTS))
    want: dict = {}
    for country, tier in zip(table.column("country").to_pylist(), table.column("tier").to_pylist()):
        if country is not None:
            want[(country, tier)] = want.get((country, tier), 0) + 1
    assert dict(partial.country_tiers) == want and ("US", "corroborated") in want and ("DK", "demonym") in want
    by_country: dict = {}
    for (country, _), n in partial.country_tiers.items():
        by_country[country] = by_country.get(country, 0) + n
    assert by_country == summarize(partial)["country_counts"]
    # they travel with the partial (a shard's JSON) and merge
    again = GeoPartial.from_json(json.loads(json.dumps(partial.to_json())))
    assert again.country_tiers == partial.country_tiers
    assert again.merge(partial).country_tiers == {k: 2 * v for k, v in partial.country_tiers.items()}


def test_below_min_evidence_a_record_counts_in_no_country(entries):
    stage = geo_stage(min_evidence="large_city", count_country_tiers=True)
    _, partial = stage.process(items(TEXTS))
    assert all(tier in ("corroborated", "country_region_address", "large_city") for _, tier in partial.country_tiers)
    assert sum(partial.country_tiers.values()) == summarize(partial)["resolved_records"]


def test_without_the_option_the_partial_is_as_before(entries):
    _, partial = geo_stage().process(items(TEXTS))
    assert not partial.country_tiers and "country_tiers" not in partial.to_json()
