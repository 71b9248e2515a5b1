"""The index of runs from run-store entries: links only to run folders under the root, failed runs marked,
every run's first value on its line (the browser test measures that it shows: tests/jobs/test_index_browser.py)."""
from __future__ import annotations

import re

from connectors.runs.store import RunEntry
from jobs.common.pages.index import link_target, render_index

ROOT = "/data/runs"


def _entry(run_id: str, path: str, status: str = "complete", job: str = "geo", value: float = 0.5, **kw) -> RunEntry:
    return RunEntry(run_id=run_id, job=job, status=status, path=path, started_at=f"2026-12-01T00:00:0{run_id[-1]}",
                    headline=[{"input": "coco2017_val", "metric": "coverage", "value": value, "ci_low": None, "ci_high": None}],
                    **kw)


def test_only_run_folders_under_the_root_become_links():
    """Issue 33: an entry whose path is ``javascript:…//`` became a live href (a shared s3:// root is written by many)."""
    assert link_target(ROOT, f"{ROOT}/geo/r1") == "geo/r1"
    assert link_target("s3://b/runs", "s3://b/runs/geo/r1") == "geo/r1"
    for hostile in ("javascript:alert(1)//", f"javascript:alert(1)//{ROOT}/geo/r1", f"{ROOT}/../etc/r1", f"{ROOT}/geo/a b",
                    "/elsewhere/geo/r1", f"s3:/{ROOT}/geo/r1", f"{ROOT}/geo/\"><b>x", "https://evil.example/geo/r1", f"{ROOT}"):
        assert link_target(ROOT, hostile) is None, hostile
    html = render_index(ROOT, [_entry("r1", "javascript:alert(document.domain)//"), _entry("r2", f"{ROOT}/geo/r2")])
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs == ["geo/r2/report.html"] and "javascript" not in "".join(hrefs)
    assert ">r1<" in html  # the entry is still listed, as text


def test_reaudits_link_their_diff_and_failed_runs_are_marked():
    html = render_index(ROOT, [_entry("r1", f"{ROOT}/reaudit/r1", job="reaudit"),
                               _entry("r2", f"{ROOT}/geo/r2", status="failed", error="geo: no usable rows")])
    assert 'href="reaudit/r1/diff.md"' in html and "report.html" not in html  # re-audits write diff.md, diff.json
    assert '<span class="bad">✗ failed</span>' in html


def test_the_first_value_sits_outside_the_part_that_may_be_cut():
    html = render_index(ROOT, [_entry("r1", f"{ROOT}/geo/r1", value=0.00516)])
    cell = re.search(r'<span class="hl">(.*?)</span></span>', html).group(0)
    assert '<span class="clip" title="coco2017_val · coverage">' in cell and '<span class="v">&nbsp;= 0.005</span>' in cell
