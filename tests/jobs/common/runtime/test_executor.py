"""Start-up: a small input runs in the driver process without starting Ray; a large or unsized one, an
--address, or --executor ray runs on Ray."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.common.cli.config import RunOptions
from jobs.common.runtime.shards import Shard, ShardTask, choose_executor

CARDS = Path(__file__).resolve().parents[3] / "fixtures" / "docs" / "cards"


def shards(*rows: int | None) -> list[Shard]:
    return [Shard(f"s{i}", "in", "f", expected_rows=n) for i, n in enumerate(rows)]


def test_the_rule():
    task = ShardTask()  # local_rows = 100,000
    assert choose_executor(RunOptions(executor="local"), shards(None, 10**9), task) == "local"
    assert choose_executor(RunOptions(executor="ray"), shards(5), task) == "ray"
    assert choose_executor(RunOptions(address="auto"), shards(5), task) == "ray"  # a cluster was asked for
    sized_by_limit = [Shard("s0", "in", "f", limit=50)]
    assert choose_executor(RunOptions(), shards(60_000, 40_000), task) == "local"
    assert choose_executor(RunOptions(), shards(60_000, 40_001), task) == "ray"
    assert choose_executor(RunOptions(), shards(5, None), task) == "ray"  # a shard of unknown size
    assert choose_executor(RunOptions(), sized_by_limit, task) == "local"  # --limit bounds it
    # a shard whose rows are unknown up front (a JSON document) is sized by its stored bytes
    by_bytes = [Shard("s0", "in", "f.json", size_bytes=task.local_bytes), *shards(100_000)]
    assert choose_executor(RunOptions(), by_bytes, task) == "local"
    assert choose_executor(RunOptions(), [Shard("s0", "in", "f.json", size_bytes=task.local_bytes + 1)],
                           task) == "ray"


@pytest.mark.ray
def test_a_ray_running_in_this_process_is_used_only_for_more_than_one_actor_s_work(ray_local):
    """A small plan stays in the driver even beside a running Ray: Ray would give it one pool actor, this process's
    own work plus a worker start and the task's setup. A large plan, or an --address, still goes to Ray."""
    assert ray_local.is_initialized()
    task = ShardTask()
    assert choose_executor(RunOptions(), shards(60_000, 40_000), task) == "local"
    assert choose_executor(RunOptions(), shards(60_000, 40_001), task) == "ray"
    assert choose_executor(RunOptions(address="auto"), shards(5), task) == "ray"


def test_a_small_docs_run_never_starts_ray(tmp_path):
    out = tmp_path / "runs"
    args = [sys.executable, "-m", "jobs.cli", "docs", "--cards", str(CARDS / "hf_card_detailed.md"), "--cards",
            str(CARDS / "croissant_rai.json"), "--out", str(out), "--run-id", "small"]
    subprocess.run(args, check=True, capture_output=True, text=True, timeout=300)
    manifest = json.loads((out / "docs" / "small" / "manifest.json").read_text())
    assert manifest["executor"] == "local" and manifest["ray"] is None and "ray_init_s" not in manifest["timings"]
    assert manifest["rows"]["out"] == 2 and (out / "index.html").exists()


def test_the_default_conventions_run_stays_in_the_driver(tmp_path):
    """The shipped TruthfulQA CSV (counted by its lines) and DROP JSON (11 KB: sized by its bytes) are small:
    the default ``benchaudit conventions`` never starts Ray (it did, for 12 s, for the JSON of unknown size)."""
    out = tmp_path / "runs"
    subprocess.run([sys.executable, "-m", "jobs.cli", "conventions", "--out", str(out), "--run-id", "default"], check=True,
                   capture_output=True, text=True, timeout=300)
    manifest = json.loads((out / "conventions" / "default" / "manifest.json").read_text())
    assert manifest["executor"] == "local" and manifest["ray"] is None and "ray_init_s" not in manifest["timings"]
    assert set(manifest["inputs"]) == {"truthfulqa", "drop_fixture"} and manifest["rows"]["out"] == 817 + 19
