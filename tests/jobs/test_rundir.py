"""Run directories appear complete or not at all, and resume only what they started."""
from __future__ import annotations

import json

import pytest

from jobs.rundir import RunDir, RunDirError, write_json


def test_partial_then_commit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = RunDir("out", "job", "r1", {"a": 1}, "h1", resume=False)
    assert run.partial.startswith(str(tmp_path))  # relative --out made absolute for workers
    write_json(run.path("shards", "s1.json"), {"ok": True})
    assert not (tmp_path / "out" / "job" / "r1").exists()
    final = run.commit()
    assert (tmp_path / "out" / "job" / "r1" / "_SUCCESS").exists()
    assert json.loads((tmp_path / "out" / "job" / "r1" / "shards" / "s1.json").read_text()) == {"ok": True}
    assert not (tmp_path / "out" / "job" / ".r1.partial").exists() and final.endswith("job/r1")
    with pytest.raises(RunDirError, match="already exists"):
        RunDir("out", "job", "r1", {"a": 1}, "h1", resume=False)


def test_resume_rules(tmp_path):
    out = str(tmp_path)
    RunDir(out, "job", "r2", {"a": 1}, "h1", resume=False)
    with pytest.raises(RunDirError, match="pass --resume"):
        RunDir(out, "job", "r2", {"a": 1}, "h1", resume=False)
    with pytest.raises(RunDirError, match="different configuration"):
        RunDir(out, "job", "r2", {"a": 2}, "h2", resume=True)
    again = RunDir(out, "job", None, {"a": 1}, "h1", resume=True)  # the latest unfinished run
    assert again.run_id == "r2" and again.resumed
    with pytest.raises(RunDirError, match="no unfinished run"):
        RunDir(out, "other", None, {}, "h", resume=True)


def test_writes_are_atomic_and_leave_no_temporaries(tmp_path):
    write_json(str(tmp_path / "a" / "b.json"), {"x": [1, 2]})
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.json"]
