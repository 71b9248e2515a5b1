"""The stage decides exactly what it decided before the throughput work (issue 22).

Every count of the merged partial and every records column, over the shipped real captions and the
place-dense development sentences, with both decision rules and an ``--min-evidence`` operating
point, against digests frozen from the tree before that work (``tests/geo_digest.py`` says how).
"""
from __future__ import annotations

from functools import cache

import pytest

from tests.geo_digest import DEV, STAGE_CASES, dev_sentences, expected, shipped_captions, stage_digest

CASES = [(corpus, profile, tier) for corpus in ("shipped", "geo_dev") for profile, tier in STAGE_CASES]


@cache
def texts(corpus: str) -> list[str]:
    return shipped_captions() if corpus == "shipped" else dev_sentences()


@pytest.mark.parametrize(("corpus", "profile", "tier"), CASES, ids=[f"{c}-{p}-{t or 'all'}" for c, p, t in CASES])
def test_stage_decides_as_before(corpus, profile, tier):
    if corpus == "geo_dev" and not DEV.exists():
        pytest.skip(f"no development set at {DEV}")
    want = expected()["stage"][f"{corpus}/{profile}/{tier or 'all'}"]
    got = stage_digest(texts(corpus), profile, tier)
    assert (got["rows_in"], got["resolved"]) == (want["rows_in"], want["resolved"])
    assert got["partial"] == want["partial"], "the partial counts (cube, skips, match types, tiers, counters) changed"
    changed = [name for name in want["records"] if got["records"].get(name) != want["records"][name]]
    assert not changed and set(got["records"]) == set(want["records"]), f"records columns changed: {changed}"
