"""The job on Ray counts and records exactly what it did before the throughput work (issue 22).

The shipped COCO + CC3M samples (``paper`` and ``gazetteer``) and the development sentences as
Parquet shards (``gazetteer``), records and their text written: the summary's counts, the
manifest's rows and evidence counters and every records column, against digests frozen from the
tree before that work (``tests/geo_digest.py`` says how).
"""
from __future__ import annotations

import pytest

from tests.geo_digest import DEV, JOB_CASES, expected, job_digest

pytestmark = pytest.mark.ray


@pytest.mark.parametrize(("corpus", "profile"), JOB_CASES, ids=[f"{c}-{p}" for c, p in JOB_CASES])
def test_job_counts_and_records_as_before(ray_local, tmp_path, corpus, profile):
    if corpus == "geo_dev" and not DEV.exists():
        pytest.skip(f"no development set at {DEV}")
    want = expected()["job"][f"{corpus}/{profile}"]
    got = job_digest(corpus, profile, tmp_path)
    assert (got["rows"], got["resolved"]) == (want["rows"], want["resolved"])
    assert got["summary"] == want["summary"], "the summary's counts changed"
    assert got["evidence"] == want["evidence"], "the manifest's evidence tiers or counters changed"
    changed = [name for name in want["records"] if got["records"].get(name) != want["records"][name]]
    assert not changed and set(got["records"]) == set(want["records"]), f"records columns changed: {changed}"
