"""GeoStage with the gazetteer: the tier column, min_evidence, and the counters a manifest reports."""
from __future__ import annotations

import json

import pyarrow as pa
import pytest

from audit.geo.stage import RECORD_SCHEMA, GeoPartial
from tests.geo_compiled import geo_stage


@pytest.fixture(scope="module")
def entries():
    from connectors.geo.lexicon import load_lexicon

    return load_lexicon("gazetteer").entries


@pytest.fixture(scope="module")
def stage(entries):
    return geo_stage(with_records=True)


def items(texts: list[str | None]) -> pa.RecordBatch:
    n = len(texts)
    cols = {"record_id": [f"r{i}" for i in range(n)], "text": texts, "context": [None] * n, "url": [None] * n,
            "group": [None] * n, "skip_reason": [None] * n}
    return pa.RecordBatch.from_pydict({k: pa.array(v, pa.string()) for k, v in cols.items()})


TEXTS = ["Kerrville, TX", "Kerrville sunset", "CafÃ© in SÃ£o Paulo", "Danish style sideboard", "a cat"]


def test_records_carry_the_tier(stage):
    table, partial = stage.process(items(TEXTS))
    assert table.schema.equals(RECORD_SCHEMA)
    assert table.column("tier").to_pylist() == ["corroborated", "bare_town", "large_city", "demonym", None]
    assert table.column("country").to_pylist() == ["US", "US", "BR", "DK", None]
    assert partial.tiers == {"corroborated": 1, "bare_town": 1, "large_city": 1, "demonym": 1}
    assert partial.counters == {"mojibake_repaired": 1}


def test_min_evidence_in_the_stage(entries):
    table, partial = geo_stage(with_records=True, min_evidence="large_city").process(items(TEXTS))
    assert table.column("country").to_pylist() == ["US", None, "BR", None, None]
    assert table.column("tier").to_pylist()[1] == "bare_town"  # recorded, though below the operating point
    assert partial.counters == {"mojibake_repaired": 1, "below_min_evidence": 2}
    unresolved = sum(n for (g, o, _, _), n in partial.cube.items() if g == "__all__" and o == "unresolved")
    assert unresolved == 3


def test_partial_json_round_trip_and_old_partials(stage):
    _, partial = stage.process(items(TEXTS))
    back = GeoPartial.from_json(json.loads(json.dumps(partial.to_json())))
    assert back == partial
    old = {k: v for k, v in partial.to_json().items() if k not in ("tiers", "counters")}  # written before tiers
    assert GeoPartial.from_json(old).tiers == {} and GeoPartial.from_json(old).merge(partial).tiers == partial.tiers
