"""The run store: whole entries only, a consistent listing under concurrent writers, and code versions by content."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from connectors.runs import store as run_store
from connectors.runs.store import RunEntry, RunStoreError, code_version, get_run, list_runs, record_run

ROOT = Path(__file__).resolve().parents[3]


def entry(run_id: str, job: str = "geo", status: str = "complete", started: str = "2026-12-01T00:00:00", **kw) -> RunEntry:
    return RunEntry(run_id=run_id, job=job, status=status, path=f"/runs/{job}/{run_id}", started_at=started, **kw)


def test_entries_round_trip_and_are_rewritten_as_a_run_moves_on(tmp_path):
    store = str(tmp_path / "_runs")
    record_run(store, entry("r1", status="incomplete"))
    record_run(store, entry("r2", job="conventions", started="2026-12-02T00:00:00"))
    record_run(store, entry("r1", headline=[{"input": "coco", "metric": "coverage", "value": 0.1, "ci_low": None,
                                              "ci_high": None}], inputs={"coco": {"fingerprint": "abc"}}))
    runs = list_runs(store)
    assert [(e.run_id, e.status) for e in runs] == [("r1", "complete"), ("r2", "complete")]
    assert runs[0].headline[0]["value"] == 0.1 and runs[0].inputs == {"coco": {"fingerprint": "abc"}}
    assert [e.run_id for e in list_runs(store, "conventions")] == ["r2"]
    assert not list(tmp_path.rglob(".*tmp*"))  # no temporaries left behind
    with pytest.raises(ValueError, match="status 'done'"):
        record_run(store, entry("r3", status="done"))


def test_run_ids_resolve_by_unique_prefix(tmp_path):
    store = str(tmp_path)
    for rid in ("20261201T0300-aa", "20261201T0300-ab", "20261208T0300-cc"):
        record_run(store, entry(rid))
    assert get_run(store, "20261208").run_id == "20261208T0300-cc"
    with pytest.raises(RunStoreError, match="ambiguous .*20261201T0300-aa, 20261201T0300-ab"):
        get_run(store, "20261201")
    with pytest.raises(RunStoreError, match=r"no run 'zz' .*latest: 20261201T0300-aa, 20261201T0300-ab, 20261208T0300-cc"):
        get_run(store, "zz")


def test_an_entry_edited_into_garbage_is_skipped_not_fatal(tmp_path, caplog):
    record_run(str(tmp_path), entry("good"))
    (tmp_path / "entries" / "geo" / "bad.json").write_text("{not json")
    assert [e.run_id for e in list_runs(str(tmp_path))] == ["good"]
    assert "bad.json" in caplog.text


WRITER = textwrap.dedent("""
    import sys
    from connectors.runs.store import RunEntry, record_run
    store, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(n):
        for status in ("incomplete", "complete"):  # each run's entry is rewritten, as a job does at start and at commit
            record_run(store, RunEntry(run_id=f"{who}-{i:03d}", job="geo", status=status, path=f"/r/{who}/{i}",
                                       started_at=f"2026-12-01T00:00:{i:02d}", headline=[{"input": "x" * 2000, "metric": "m",
                                       "value": i, "ci_low": None, "ci_high": None}]))
""")


def test_concurrent_writers_leave_a_consistent_listing(tmp_path):
    store = str(tmp_path / "store")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, store, who, "60"], cwd=ROOT) for who in ("a", "b")]
    seen_partial = 0
    while any(p.poll() is None for p in procs):  # a reader listing while both write: only whole entries, ever
        for path in Path(store).rglob("*.json") if Path(store).exists() else []:
            try:
                json.loads(path.read_text())
            except FileNotFoundError:
                continue  # renamed over between listing and reading
            except ValueError:
                seen_partial += 1
        list_runs(store)
    assert all(p.wait() == 0 for p in procs) and seen_partial == 0
    runs = list_runs(store)
    assert len(runs) == 120 and {e.status for e in runs} == {"complete"}
    assert {e.run_id for e in runs} == {f"{w}-{i:03d}" for w in "ab" for i in range(60)}


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_code_version_follows_the_code_a_job_can_reach(tmp_path, monkeypatch):
    _tree(tmp_path, {"audit/__init__.py": "", "audit/geo/__init__.py": "", "audit/geo/rules.py": "X = 1\n",
                     "audit/geo/data/lexicon.csv": "a,b\n", "audit/other/__init__.py": "", "audit/other/m.py": "Y = 1\n",
                     "connectors/__init__.py": "", "jobs/__init__.py": "", "jobs/geo/__init__.py": "",
                     "jobs/geo/run.py": "def run():\n    from audit.geo.rules import X\n    return X\n"})
    monkeypatch.setattr(run_store, "_project_root", lambda: tmp_path)
    version = lambda: (code_version.cache_clear(), code_version("jobs.geo"))[1]  # noqa: E731
    first = version()
    (tmp_path / "audit/other/m.py").write_text("Y = 2\n")  # code the job never imports
    assert version() == first
    (tmp_path / "audit/geo/rules.py").touch()  # a new file time, same content
    assert version() == first
    (tmp_path / "audit/geo/data/lexicon.csv").write_text("a,c\n")  # a data file next to code it imports
    second = version()
    assert second != first
    (tmp_path / "audit/geo/rules.py").write_text("X = 2\n")  # code it imports lazily, inside a function
    assert version() not in (first, second)
    with pytest.raises(ValueError, match="no project package 'jobs.nosuch'"):
        code_version("jobs.nosuch")
