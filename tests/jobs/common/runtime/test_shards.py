"""The shard contract: --limit picks the first rows of each input; the runner owns failures and done-markers."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from connectors.runs.rundir import RunDir
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.errors import JobError
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.shards import (
    Shard,
    ShardOutputs,
    ShardResult,
    ShardTask,
    actors_needed,
    apply_limit,
    limited,
    run_shards,
)


def shard(i: int, inp: str = "a", rows: int | None = 10) -> Shard:
    return Shard(f"s{i}", inp, f"file{i}", start=i, expected_rows=rows)


def test_limit_takes_the_first_rows_of_each_input_in_plan_order():
    plan = [shard(0), shard(1), shard(2), shard(3, "b"), shard(4, "b")]
    got = apply_limit(plan, 15)
    assert [(s.shard_id, s.limit) for s in got] == [("s0", None), ("s1", 5), ("s3", None), ("s4", 5)]
    assert apply_limit(plan, None) == plan
    unknown = [shard(0, rows=None), shard(1, rows=None)]  # a CSV's row count is not known up front
    assert [(s.shard_id, s.limit) for s in apply_limit(unknown, 7)] == [("s0", 7)]


def test_limited_cuts_a_batch_stream():
    batches = [pa.record_batch({"x": list(range(i * 4, i * 4 + 4))}) for i in range(3)]
    assert [b.num_rows for b in limited(iter(batches), 6)] == [4, 2]
    assert sum(b.num_rows for b in limited(iter(batches), None)) == 12


def test_a_scan_starts_no_more_actors_than_its_planned_work_is_worth():
    task = ShardTask()
    task.local_rows, task.local_bytes = 1_000, 1 << 20
    assert actors_needed([shard(i, rows=10) for i in range(8)], task) == 1  # 80 rows: one actor's setup is enough
    assert actors_needed([shard(i, rows=1_000) for i in range(8)], task) == 8  # one actor per local_rows, up to one a shard
    assert actors_needed([shard(i, rows=600) for i in range(8)], task) == 5  # 4,800 rows
    assert actors_needed([shard(i, rows=5_000) for i in range(3)], task) == 3  # never more actors than shards
    sized = [Shard(f"s{i}", "a", f"f{i}", size_bytes=300 << 10) for i in range(4)]  # rows unknown: by stored bytes
    assert actors_needed(sized, task) == 2
    assert actors_needed([*sized, Shard("s9", "a", "f9")], task) == 3  # unknown rows and bytes: an actor of its own
    assert actors_needed([Shard("s0", "a", "f0", expected_rows=50_000, limit=20)], task) == 1  # --limit cuts the plan


class Counting(ShardTask):
    """Writes one table part per shard and fails on the shards it is told to."""

    def __init__(self, fail: set[str]):
        self.fail = fail

    def setup(self) -> None:
        self.ready = True

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        assert self.ready  # setup ran in the actor before any shard
        out.writer("parts", pa.schema([("i", pa.int64())])).write(pa.table({"i": [shard.start]}))
        if shard.shard_id in self.fail:
            raise ValueError(f"{shard.source}: row 3, field 'x': not a number")
        return ShardResult(rows_in=shard.expected_rows or 0, partial={"i": shard.start}, skipped={"bad": 1})


@pytest.mark.ray
def test_runner_isolates_failures_and_writes_done_markers(ray_local, tmp_path):
    ray_local.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import a test module
    plan = [shard(i) for i in range(4)]
    run = RunDir(str(tmp_path), "t", "r1", {}, "h", resume=False)
    with pytest.raises(JobError, match=r"t: file2: row 3, field 'x': not a number") as failure:
        run_shards("t", run, RunOptions(out=str(tmp_path)), StageTimer(), plan, Counting({"s2"}))
    assert not failure.value.resumable and "Traceback" in Path(run.path("error.log")).read_text()
    assert not (Path(run.partial) / "parts" / "s2.parquet").exists()  # the failed shard's outputs are removed
    run.release()
    resumed = RunDir(str(tmp_path), "t", "r1", {}, "h", resume=True)
    scan = run_shards("t", resumed, RunOptions(out=str(tmp_path), on_error="skip"), StageTimer(), plan, Counting({"s2"}))
    assert scan.resumed >= 1 and scan.resumed + scan.run == 4
    assert [r["status"] for r in scan.results] == ["ok", "ok", "failed", "ok"]
    assert scan.failed == [{"input": "a", "file": "file2", "error": "file2: row 3, field 'x': not a number"}]
    assert scan.rows_in() == 30 and scan.skipped() == {"bad": 3}
    markers = {json.loads(p.read_text())["shard_id"] for p in (Path(resumed.partial) / "shards").glob("*.json")}
    assert markers == {"s0", "s1", "s3"}  # a failed shard leaves no done-marker: it is always rerun
    resumed.release()


class WhichProcess(ShardTask):
    """Records the process each shard ran in."""

    local_rows = 1_000

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        import os

        return ShardResult(rows_in=shard.expected_rows or 0, partial={"pid": os.getpid()})


@pytest.mark.ray
def test_a_small_scan_runs_its_shards_in_one_actor(ray_local, tmp_path):
    ray_local.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    run = RunDir(str(tmp_path), "t", "r1", {}, "h", resume=False)
    scan = run_shards("t", run, RunOptions(out=str(tmp_path)), StageTimer(), [shard(i) for i in range(4)], WhichProcess())
    assert scan.rows_in() == 40 and len({r["partial"]["pid"] for r in scan.results}) == 1
    run.release()
