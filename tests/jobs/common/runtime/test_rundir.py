"""Run directories appear complete or not at all, resume only what they started, and have one owner."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from connectors.runs.rundir import LOCK_FILE, RunDir, RunDirError, new_run_id, write_json


def test_partial_then_commit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = RunDir("out", "job", "r1", {"a": 1}, "h1", resume=False)
    assert run.partial.startswith(str(tmp_path))  # relative --out made absolute for workers
    write_json(run.path("shards", "s1.json"), {"ok": True})
    assert not (tmp_path / "out" / "job" / "r1").exists()
    final = run.commit()
    assert (tmp_path / "out" / "job" / "r1" / "_SUCCESS").exists()
    assert not (tmp_path / "out" / "job" / "r1" / LOCK_FILE).exists()
    assert json.loads((tmp_path / "out" / "job" / "r1" / "shards" / "s1.json").read_text()) == {"ok": True}
    assert not (tmp_path / "out" / "job" / ".r1.partial").exists() and final.endswith("job/r1")
    with pytest.raises(RunDirError, match="already exists"):
        RunDir("out", "job", "r1", {"a": 1}, "h1", resume=False)


def test_resume_rules(tmp_path):
    out = str(tmp_path)
    RunDir(out, "job", "r2", {"a": 1}, "h1", resume=False).release()  # an attempt that stopped
    with pytest.raises(RunDirError, match="pass --resume"):
        RunDir(out, "job", "r2", {"a": 1}, "h1", resume=False)
    with pytest.raises(RunDirError, match="different configuration"):
        RunDir(out, "job", "r2", {"a": 2}, "h2", resume=True)
    again = RunDir(out, "job", None, {"a": 1}, "h1", resume=True)  # the latest unfinished run
    assert again.run_id == "r2" and again.resumed
    again.release()
    with pytest.raises(RunDirError, match="no unfinished run"):
        RunDir(out, "other", None, {}, "h", resume=True)


def test_resume_of_an_unknown_run_id_lists_the_resumable_ones(tmp_path):
    out = str(tmp_path)
    RunDir(out, "job", "real", {}, "h", resume=False).release()
    with pytest.raises(RunDirError, match=r"no unfinished run 'typo'.*resumable runs: real"):
        RunDir(out, "job", "typo", {}, "h", resume=True)
    assert not (tmp_path / "job" / ".typo.partial").exists()  # a typo starts nothing
    done = RunDir(out, "job", "done", {}, "h", resume=False)
    done.commit()
    with pytest.raises(RunDirError, match="already complete"):
        RunDir(out, "job", "done", {}, "h", resume=True)


def test_a_live_run_cannot_be_resumed_by_another_process(tmp_path):
    out = str(tmp_path)
    code = ("import sys, time; from connectors.runs.rundir import RunDir; "
            f"RunDir({out!r}, 'job', 'live', {{}}, 'h', resume=False); print('locked', flush=True); time.sleep(60)")
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirError, match=rf"in use by process {owner.pid} on "):
            RunDir(out, "job", "live", {}, "h", resume=True)
    finally:
        owner.kill()
        owner.wait()
    # the owner is gone (kill -9): its lock is stale, and --resume takes the run over
    taken = RunDir(out, "job", "live", {}, "h", resume=True)
    assert json.loads((tmp_path / "job" / ".live.partial" / LOCK_FILE).read_text())["pid"] == os.getpid()
    taken.release()


def test_run_ids_are_unique_per_invocation():
    ids = {new_run_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{6}", i) for i in ids)


def test_writes_are_atomic_and_leave_no_temporaries(tmp_path):
    write_json(str(tmp_path / "a" / "b.json"), {"x": [1, 2]})
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.json"]
    with pytest.raises(TypeError):
        write_json(str(tmp_path / "a" / "c.json"), {"x": object.__new__(type("NoJson", (), {"__str__": None}))})
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.json"]  # the failed write left nothing behind


@pytest.fixture()
def full_disk(tmp_path):
    """A real filesystem with no space left: a 64 KiB tmpfs filled to the last page."""
    from tests.builders import small_disk

    with small_disk(tmp_path / "full", "64k") as mount:
        with pytest.raises(OSError), open(mount / "filler", "wb") as fh:
            while True:
                fh.write(b"x" * 4096)
                fh.flush()
        yield mount


def test_a_full_disk_is_named_by_the_output_it_stopped_and_leaves_no_empty_run(full_disk):
    from connectors.runs.store import RunEntry, record_run
    from connectors.runs.tables import write_table
    from jobs.common.runtime.errors import is_transient, one_line

    root = full_disk / "root"
    with pytest.raises(OSError) as err:
        RunDir(str(root), "geo", "r1", {"a": 1}, "h", resume=False)
    assert one_line(err.value) == f"{root}/geo/.r1.partial/{LOCK_FILE}: No space left on device" and is_transient(err.value)
    assert list((root / "geo").iterdir()) == []  # no unfinished run that holds nothing
    with pytest.raises(OSError) as err:
        write_json(str(root / "geo" / "x" / "summary.json"), {"rows": list(range(10_000))})
    assert one_line(err.value) == f"{root}/geo/x/summary.json: No space left on device"
    with pytest.raises(OSError) as err:
        record_run(str(root / "_runs"), RunEntry(run_id="r1", job="geo", status="complete", path="/x"))
    assert one_line(err.value) == f"{root}/_runs/entries/geo/r1.json: No space left on device"
    import pyarrow as pa

    with pytest.raises(OSError) as err:
        write_table(str(root / "run"), "records", pa.table({"text": ["y" * 100_000]}), "s1", ("corpus", "coco"))
    assert one_line(err.value) == f"{root}/run/data/records/corpus=coco/s1.parquet: No space left on device"
    assert not [p for p in full_disk.rglob("*") if ".tmp" in p.name]
