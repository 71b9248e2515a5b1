"""A lost Ray node: a two-node cluster on loopback (a head and a second ``ray start --address`` node with
resources of its own), the second node's raylet killed by PID mid-scan. The job either finishes with the
totals of an uninterrupted run or stops with one line, and ``--resume`` then finishes it identically.
How long the job waits before it gives up on the node is measured and printed (``-s``)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.servers.ray_head import free_ports

pytestmark = [pytest.mark.ray, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]


class TwoNodes:
    """``ray start --head`` and ``ray start --address`` in a private temp dir, each ``--block`` in a session of its
    own, so each is stopped by its own PID (never ``ray stop``: it would stop every Ray on the machine)."""

    def __init__(self, root: Path, head_cpus: int = 2, node_cpus: int = 2) -> None:
        self.temp = Path(tempfile.mkdtemp(prefix="rn", dir="/tmp"))  # short: Ray's unix sockets live here
        gcs, *_ = free_ports(1)
        self.address = f"127.0.0.1:{gcs}"
        bin_dir = str(Path(sys.executable).parent)
        self.env = {**{k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE")},
                    "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "RAY_AUTH_MODE": "disabled",
                    "RAY_USAGE_STATS_ENABLED": "0"}
        ray = str(Path(bin_dir) / "ray")
        self.head = self._start(root / "head.log", [ray, "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
                                                    "--port", str(gcs), "--num-cpus", str(head_cpus),
                                                    "--include-dashboard", "false", "--temp-dir", str(self.temp)])
        self._wait_for_nodes(1)
        self.node = self._start(root / "node.log", [ray, "start", "--block", "--address", self.address,
                                                    "--node-ip-address", "127.0.0.1", "--num-cpus", str(node_cpus),
                                                    "--resources", '{"second_node": 1}'])
        self._wait_for_nodes(2)

    def _start(self, log: Path, cmd: list[str]) -> subprocess.Popen:
        return subprocess.Popen(cmd, stdout=open(log, "wb"), stderr=subprocess.STDOUT, env=self.env, start_new_session=True)

    def _wait_for_nodes(self, n: int, timeout: float = 120.0) -> None:
        code = ("import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
                "print(sum(1 for x in ray.nodes() if x['Alive']))")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = subprocess.run([sys.executable, "-c", code, self.address], capture_output=True, text=True, env=self.env)
            if done.returncode == 0 and done.stdout.strip().splitlines()[-1:] == [str(n)]:
                return
            time.sleep(1)
        raise RuntimeError(f"the cluster at {self.address} did not reach {n} live nodes in {timeout:g} s")

    def raylet_of_node(self) -> psutil.Process:
        """The second node's raylet: a child of its ``ray start --block``."""
        for child in psutil.Process(self.node.pid).children(recursive=True):
            if child.name() == "raylet" or "raylet" in " ".join(child.cmdline()[:1]):
                return child
        raise RuntimeError("the second node has no raylet")

    def stop(self) -> None:
        for proc in (self.node, self.head):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


@pytest.fixture()
def cluster(tmp_path):
    nodes = TwoNodes(tmp_path)
    yield nodes
    nodes.stop()


def write_corpus(root: Path, files: int = 12, rows: int = 60_000) -> Path:
    """Real captions (the shipped COCO sample) repeated into ``files`` Parquet files: one shard each."""
    import pandas as pd

    captions = pd.read_csv(ROOT / "connectors" / "samples" / "coco2017_val_captions.csv")["caption"].astype(str).tolist()
    root.mkdir()
    for f in range(files):
        text = [captions[(f * rows + i) % len(captions)] for i in range(rows)]
        pq.write_table(pa.table({"uid": [f"{f}-{i}" for i in range(rows)], "text": text, "url": [""] * rows}),
                       root / f"part-{f:02d}.parquet")
    return root


def totals(run_dir: Path) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return {"rows": manifest["rows"]["in"], "skipped": manifest["rows"]["skipped_by_reason"],
            "corpora": {name: {k: c[k] for k in ("outcomes", "country_counts", "resolved_records")}
                        for name, c in summary["corpora"].items()}}


def cli(*args: str, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=timeout)


def test_geo_survives_a_lost_node_or_resumes_to_the_same_totals(cluster, tmp_path, capsys):
    corpus = write_corpus(tmp_path / "corpus")
    common = ["geo", "--corpus", f"c:datacomp:{corpus}", "--bootstrap", "0", "--shard-rows", "60000"]
    reference = cli(*common, "--executor", "local", "--out", str(tmp_path / "ref"), env=cluster.env)
    assert reference.returncode == 0, reference.stderr
    expected = totals(next((tmp_path / "ref" / "geo").iterdir()))

    out = tmp_path / "runs"
    job = subprocess.Popen([sys.executable, "-m", "jobs.cli", *common, "--address", cluster.address, "--out", str(out),
                            "--run-id", "lost"], cwd=ROOT, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    shards = out / "geo" / ".lost.partial" / "shards"
    deadline = time.monotonic() + 300
    while not (shards.is_dir() and any(shards.iterdir())) and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job.poll() is None, "the scan ended before the node could be killed: make the corpus larger"
    raylet = cluster.raylet_of_node()
    raylet.kill()  # the second node is gone, with every worker it ran
    killed_at = time.monotonic()
    stdout, stderr = job.communicate(timeout=600)
    reacted_s = time.monotonic() - killed_at
    with capsys.disabled():
        print(f"\nlost node: the job {'finished' if job.returncode == 0 else 'stopped'} {reacted_s:.1f} s after the kill "
              f"(exit {job.returncode})")
    if job.returncode != 0:
        lines = stderr.strip().splitlines()
        assert job.returncode == 1 and len(lines) <= 3, stderr  # transient: a lost node, not bad input
        assert "--resume --run-id lost" in stderr, stderr
        resumed = cli(*common, "--address", cluster.address, "--out", str(out), "--resume", "--run-id", "lost",
                      env=cluster.env)
        assert resumed.returncode == 0, resumed.stderr
    assert totals(out / "geo" / "lost") == expected
