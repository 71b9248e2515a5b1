"""A Ray that does not start is a transient failure: exit 1, never 2, and no empty unfinished run left behind.

The failure is Ray's own: its raylet is launched through ``RAY_RAYLET_VALGRIND=1`` (Ray's debugging
hook), and the ``valgrind`` on PATH here is a stand-in that exits without starting it, as a raylet
that never comes up on a machine under load. Ray then waits its fixed 30 s and raises "The current
node timed out during startup" -- the exact error users meet. Both cases run at once to pay that
wait once.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
SAMPLES = ROOT / "connectors" / "samples"
pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.waits]  # Ray's fixed 30 s: scripts/test starts it first


def geo(out: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """A geo run with the small ``paper`` lexicon: what is tested is Ray's start, not resolution."""
    return subprocess.Popen([sys.executable, "-m", "jobs.cli", "geo", "--out", str(out), "--bootstrap", "0", "--num-cpus", "1",
                             "--lexicon-profile", "paper", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env)


def lines(text: str) -> list[str]:
    """The error lines: progress and what a wait is for ("[geo] …", "[ray] starting a local Ray …") left out."""
    return [line for line in text.splitlines() if line.strip() and not line.startswith(("[geo]", "[ray]"))]


def test_a_ray_that_does_not_start_exits_1_and_keeps_only_a_run_worth_resuming(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "valgrind").write_text("#!/bin/sh\nexit 0\n")
    (fake / "valgrind").chmod(0o755)
    broken = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "RAY_RAYLET_VALGRIND": "1"}

    fresh = geo(tmp_path / "fresh", "--limit", "50", "--executor", "ray", env=broken)
    # meanwhile, a run with finished work: one corpus done, the other unreadable (no Ray: it runs in this process)
    bad = tmp_path / "bad.tsv.gz"
    bad.write_bytes(b"\x1f\x8b not gzip")
    corpora = ["--corpus", f"ok:cc3m:{SAMPLES / 'cc3m_val_captions.tsv'}", "--corpus", f"bad:cc3m:{bad}"]
    first = geo(tmp_path / "kept", *corpora, "--run-id", "r1", "--executor", "local")
    assert first.wait(timeout=300) == 2, first.stderr.read()
    done = sorted(p.name for p in (tmp_path / "kept" / "geo" / ".r1.partial" / "shards").iterdir())
    assert done
    resumed = geo(tmp_path / "kept", *corpora, "--run-id", "r1", "--resume", "--executor", "ray", env=broken)
    (_, fresh_err), (_, resumed_err) = fresh.communicate(timeout=300), resumed.communicate(timeout=300)

    # nothing finished: one line, exit 1 (a rerun may well succeed), no run directory and no history entry
    err = lines(fresh_err)
    assert fresh.returncode == 1 and len(err) == 1, fresh_err
    assert "a local Ray did not start: The current node timed out during startup" in err[0] and "rerun" in err[0]
    assert "--resume" not in fresh_err and "Traceback" not in fresh_err
    assert not list((tmp_path / "fresh").rglob("*.partial")) and not list((tmp_path / "fresh").rglob("*.json"))

    # finished work: exit 1 with the resume hint, the run and its finished shards kept, recorded as incomplete
    err = lines(resumed_err)
    assert resumed.returncode == 1 and len(err) == 3, resumed_err
    assert "timed out during startup" in err[0] and err[-1].endswith("rerun the same command with --resume --run-id r1")
    assert sorted(p.name for p in (tmp_path / "kept" / "geo" / ".r1.partial" / "shards").iterdir()) == done
    entry = json.loads((tmp_path / "kept" / "_runs" / "entries" / "geo" / "r1.json").read_text())
    assert entry["status"] == "incomplete" and entry["resumable"] and "timed out during startup" in entry["error"]
