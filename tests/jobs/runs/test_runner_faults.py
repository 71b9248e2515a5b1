"""The shard runner under faults: a Ray worker killed by PID mid-scan, and a driver interrupted and resumed.

The task is a small real one (a deterministic partial per shard; one call waits to be killed or kills itself);
every call of ``process`` leaves a file, so the tests count stage invocations across processes.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from pydantic import BaseModel

from jobs.common.cli.config import RunOptions
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.shards import Shard, ShardOutputs, ShardResult, ShardTask

pytestmark = pytest.mark.ray
ROOT = Path(__file__).resolve().parents[3]


def record(calls: str, shard_id: str) -> None:
    """One file per call, holding the worker's PID; renamed into place so a reader never sees it half written."""
    name = f"{shard_id}.{os.getpid()}.{uuid.uuid4().hex[:6]}"
    Path(calls, f".{name}").write_text(str(os.getpid()))
    os.rename(Path(calls, f".{name}"), Path(calls, name))


class SlowTask(ShardTask):
    """Sums a range per shard, after recording the call (shard, worker PID)."""

    def __init__(self, calls: str):
        self.calls = calls

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        record(self.calls, shard.shard_id)
        n = shard.stop
        return ShardResult(rows_in=n, partial={"sum": n * (n - 1) // 2, "n": n})


class LostForGood(SlowTask):
    """The first call of shard s03 kills its own actor for good (no restart): a loss Ray gives up on, as it does
    for the actors of a dead node's owner ("Owner's node has crashed")."""

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        flag = Path(self.calls).parent / f"{Path(self.calls).name}.lost"
        if shard.shard_id == "s03" and not flag.exists():
            import ray

            flag.write_text(str(os.getpid()))
            ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
            time.sleep(60)  # never wakes: the kill ends this process
        return super().process(shard, out)


STUCK = "s03"


class StuckOnce(SlowTask):
    """The first call of shard ``STUCK`` records itself and then waits to be killed (a minute at most), so the kill
    lands mid-shard however late the killer runs: a fixed pause let a loaded machine finish the shard first."""

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        if shard.shard_id == STUCK and STUCK not in calls_of(Path(self.calls)):
            record(self.calls, shard.shard_id)
            time.sleep(60)
        return super().process(shard, out)


class Cfg(BaseModel):
    shards: int = 8


def shards(k: int) -> list[Shard]:
    return [Shard(f"s{i:02d}", "range", f"range:{i}", stop=1000 + i, expected_rows=1000 + i) for i in range(k)]


def calls_of(calls: Path) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for p in calls.iterdir():
        if p.name.startswith("."):
            continue  # a call still being recorded
        out.setdefault(p.name.split(".")[0], []).append(int(p.read_text()))
    return out


def scan(tmp_path: Path, name: str, kill_mid_scan: bool = False,
         task: type[SlowTask] = SlowTask) -> tuple[list[dict], dict, tuple | None]:
    import threading

    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need not import this test module
    calls = tmp_path / f"calls-{name}"
    calls.mkdir()
    killed: list[tuple[str, int]] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            running = calls_of(calls)
            if STUCK in running:  # its first call is waiting on its worker (``StuckOnce``): kill that worker
                os.kill(running[STUCK][0], signal.SIGKILL)
                killed.append((STUCK, running[STUCK][0]))
                return
            time.sleep(0.02)

    thread = None
    if kill_mid_scan:
        thread, task = threading.Thread(target=killer), StuckOnce
    # executor="ray": 8,000 rows would run in this process (``choose_executor``); these faults are a Ray worker's
    with JobRun("faulty", Cfg(), RunOptions(out=str(tmp_path / name), executor="ray"), {"k": 8}, seed=None) as job:
        if thread:
            thread.start()
        result = job.scan(shards(8), task(str(calls)))
    if thread:
        thread.join()
    return [{k: r[k] for k in ("shard_id", "status", "rows_in", "partial")} for r in result.results], calls_of(calls), (
        killed[0] if killed else None)


def test_a_worker_killed_mid_scan_changes_nothing(ray_local, tmp_path):
    calm, calm_calls, _ = scan(tmp_path, "calm")
    hit, hit_calls, killed = scan(tmp_path, "hit", kill_mid_scan=True)
    assert killed is not None
    shard, pid = killed
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the worker is really gone
    assert hit == calm and all(r["status"] == "ok" for r in hit)  # identical results, every shard finished
    assert len(hit_calls[shard]) >= 2 and any(p != pid for p in hit_calls[shard])  # its shard ran again, elsewhere
    assert sorted(hit_calls) == sorted(calm_calls) == [f"s{i:02d}" for i in range(8)]


def test_an_actor_ray_gives_up_on_costs_its_shard_never_the_scan(ray_local, tmp_path, caplog):
    calm, _, _ = scan(tmp_path, "calm")
    hit, hit_calls, _ = scan(tmp_path, "lost", task=LostForGood)
    killed = int((tmp_path / "calls-lost.lost").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(killed, 0)  # the actor is really gone
    assert hit == calm and all(r["status"] == "ok" for r in hit)  # identical results, every shard finished
    assert "s03" in hit_calls and all(pid != killed for pid in hit_calls["s03"])  # its shard ran again, elsewhere
    assert any("Ray lost workers of the scan (ActorDiedError)" in r.getMessage() and "rerun on the nodes that remain"
               in r.getMessage() for r in caplog.records)


DRIVER = textwrap.dedent("""
    import os, signal, sys, time, uuid
    from pathlib import Path
    from pydantic import BaseModel
    from jobs.common.cli.config import RunOptions
    from jobs.common.runtime.job import JobRun
    from jobs.common.runtime.shards import Shard, ShardResult, ShardTask

    class SlowTask(ShardTask):
        def __init__(self, calls):
            self.calls = calls
        def process(self, shard, out):
            name = f"{shard.shard_id}.{os.getpid()}.{uuid.uuid4().hex[:6]}"
            Path(self.calls, "." + name).write_text(str(os.getpid()))
            os.rename(Path(self.calls, "." + name), Path(self.calls, name))
            time.sleep(0.3)
            n = shard.stop
            return ShardResult(rows_in=n, partial={"sum": n * (n - 1) // 2, "n": n})

    class Cfg(BaseModel):
        shards: int = 8

    # Ctrl-C as a driver started from a terminal takes it: a test run started in the background by a
    # non-interactive shell (`scripts/test &`) hands its children SIGINT ignored, and Python keeps that.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out, calls, resume = sys.argv[1], sys.argv[2], sys.argv[3] == "resume"
    shards = [Shard(f"s{i:02d}", "range", f"range:{i}", stop=1000 + i, expected_rows=1000 + i) for i in range(12)]
    with JobRun("slow", Cfg(), RunOptions(out=out, run_id="r1", resume=resume, num_cpus=2, executor="ray"), {"k": 12}, seed=None) as job:
        result = job.scan(shards, SlowTask(calls))
        job.write_json("result.json", [{k: r[k] for k in ("shard_id", "partial")} for r in result.results])
        job.commit(job.manifest())
""")


def test_an_interrupted_driver_resumes_without_recomputing_finished_shards(tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    calls = tmp_path / "calls"
    calls.mkdir()
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(script), str(out), str(calls), "new"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    markers = out / "slow" / ".r1.partial" / "shards"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None and len(list(markers.glob("*.json"))) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # Ctrl-C on the driver
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0, err[-2000:]
    finished = {p.stem for p in markers.glob("*.json")}
    assert 3 <= len(finished) < 12, "the interruption should land mid-scan"
    before = calls_of(calls)

    again = subprocess.run([sys.executable, str(script), str(out), str(calls), "resume"], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    after = calls_of(calls)
    assert all(len(after[s]) == len(before[s]) == 1 for s in finished)  # finished shards: never called again
    assert sorted(after) == [f"s{i:02d}" for i in range(12)]
    manifest = json.loads((out / "slow" / "r1" / "manifest.json").read_text())
    assert manifest["shards"]["resumed"] == len(finished) and manifest["shards"]["run"] == 12 - len(finished)
    result = json.loads((out / "slow" / "r1" / "result.json").read_text())
    assert result == [{"shard_id": f"s{i:02d}", "partial": {"sum": (1000 + i) * (999 + i) // 2, "n": 1000 + i}} for i in range(12)]
