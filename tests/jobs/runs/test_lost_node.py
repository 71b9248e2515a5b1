"""A Ray node lost mid-scan, on a real two-node cluster on loopback (a head and a second ``ray start --address``
node with its own resources; tests.servers.ray_cluster): the worker node's raylet is killed by PID while a job
runs on it. The geo scan finishes on the head with the totals of an uninterrupted run; a landscape whose only
model node died stops with one resumable line, and ``--resume`` on a repaired cluster finishes it with the
answers of an uninterrupted run. How long each step took is printed (``-s``): docs/operations.md#a-lost-node."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.runs.tables import read_table
from tests.jobs.landscape.test_landscape_job import write_toy
from tests.servers.ray_cluster import NodeStates, add_node, kill_raylet, start_cluster, stop_cluster
from tests.servers.ray_head import ray_env
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.longest]  # scripts/test starts this file second
ANSWERS = re.compile(r"([\d,]+)/([\d,]+) answers")


class Watched:
    """A CLI run whose stderr lines are timestamped as they come (what the user sees, and when)."""

    def __init__(self, args: list[str], env: dict):
        self.started = time.monotonic()
        self.lines: list[tuple[float, str]] = []
        self.proc = subprocess.Popen([sys.executable, "-m", "jobs.cli", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, pattern: re.Pattern, done, timeout: float = 300) -> float:
        """When the first stderr line matching ``pattern`` for which ``done(match)`` holds came."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for at, line in self.lines[seen:]:
                seen += 1
                if (m := pattern.search(line)) and done(m):
                    return at
            if self.proc.poll() is not None and seen == len(self.lines):
                break
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern.pattern!r}: {self.stderr()[-3000:]}")

    def finish(self, timeout: float = 600) -> tuple[int, str]:
        stdout = self.proc.stdout.read()  # not communicate(): it would read stderr too, racing the reader thread
        self.proc.wait(timeout=timeout)
        self._reader.join(timeout=30)
        return self.proc.returncode, stdout

    def stderr(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def line_at(self, text: str) -> float:
        found = [at for at, line in self.lines if text in line]
        assert found, f"no line with {text!r}: {self.stderr()[-3000:]}"
        return found[0]


def run_dir(stdout: str) -> Path:
    return Path(stdout.split("manifest: ")[1].split()[0]).parent


@pytest.fixture
def cluster(tmp_path):
    made = []

    def make(head_cpus: int, fast_health_checks: bool = False):
        made.append(start_cluster(tmp_path / f"cluster{len(made)}", head_cpus, fast_health_checks))
        return made[-1]

    yield make
    for c in made:
        stop_cluster(c)


GEO_ARGS = ["--bootstrap", "0", "--shard-rows", "25000", "--lexicon-profile", "gazetteer"]


@pytest.fixture(scope="module")
def geo_corpus(tmp_path_factory, real_captions):
    """12 shards of 25,000 real captions, and what an uninterrupted run of it reports (``--executor local``)."""
    root = tmp_path_factory.mktemp("geo-lost")
    corpus = root / "corpus"
    corpus.mkdir()
    rng = random.Random(7)
    for i in range(12):
        text = pa.array(rng.choices(real_captions, k=25_000), pa.string())
        url = pa.array([f"http://a.example.{('com', 'jp', 'de', 'fr')[j % 4]}/{j}" for j in range(25_000)])
        uid = pa.array([f"{i:03d}-{j:06d}" for j in range(25_000)])
        pq.write_table(pa.table({"uid": uid, "text": text, "url": url}), corpus / f"part-{i:03d}.parquet", row_group_size=25_000)
    args = ["geo", "--corpus", f"c:datacomp:{corpus}", *GEO_ARGS]
    base = subprocess.run([sys.executable, "-m", "jobs.cli", *args, "--executor", "local", "--out", str(root / "base")],
                          capture_output=True, text=True, timeout=600)
    assert base.returncode == 0, base.stderr[-3000:]
    return args, run_dir(base.stdout)


@pytest.fixture(scope="module")
def geo_cluster(tmp_path_factory):
    """One head (1 CPU, fast health checks: a loss is seen within the scan, ~3 s, not 12-15 s) for both moments;
    each test joins a worker node of its own and loses it."""
    ray_cluster = start_cluster(tmp_path_factory.mktemp("geo-cluster"), head_cpus=1, fast_health_checks=True)
    yield ray_cluster
    stop_cluster(ray_cluster)


def shards_done(out: Path) -> int:
    """Shards the run has finished: their done-markers (``shards/<id>.json``), written as each one ends."""
    return sum(1 for _ in out.rglob("shards/*.json"))


def shard_worker_on(node) -> bool:
    """Whether a shard worker (the scan's only Ray Data pool actor, a ``_MapWorker``: its process title says so) runs on
    the node."""
    try:
        return any("MapWorker" in " ".join(p.cmdline()) for p in psutil.Process(node.pid).children(recursive=True))
    except psutil.Error:
        return False


@pytest.mark.parametrize("moment", ["before the first shard line", "mid-scan"])
def test_geo_survives_a_lost_node_with_the_totals_of_an_uninterrupted_run(geo_cluster, geo_corpus, tmp_path, moment):
    """The worker node's raylet is killed once a shard worker runs there and no shard is done yet, or once the first
    shard is done with the rest to go (or the node was declared dead before, by health checks a busy machine failed:
    the same loss). Its shards are rerun on the head: the totals are the uninterrupted run's."""
    args, base_dir = geo_corpus
    node = add_node(geo_cluster, num_cpus=2, resources={"second_node": 1})
    states = NodeStates(geo_cluster)
    run = Watched([*args, "--address", geo_cluster.gcs, "--out", str(tmp_path / "lost")], geo_cluster.env)
    def ready() -> bool:
        return shards_done(tmp_path / "lost") > 0 if moment == "mid-scan" else shard_worker_on(node)

    deadline = time.monotonic() + 300
    while not ready() and node.poll() is None and run.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    done_at_kill = shards_done(tmp_path / "lost")
    killed, killed_wall = time.monotonic(), time.time()
    pid = kill_raylet(node)
    code, stdout = run.finish()
    ended_wall = time.time()
    states.close()
    assert code == 0, run.stderr()[-3000:]
    assert "Traceback" not in run.stderr() and "Raylet is terminated" not in run.stderr() + stdout  # Ray's 25 lines
    # The loss is the job's to tell once Ray's GCS has declared it (about 3 s with these health checks on a quiet
    # machine; a loaded one may finish the scan first, and then there is no loss to tell during it).
    dead = [at - killed_wall for at in states.dead_at.values()]
    print(f"\ngeo ({moment}): {'raylet killed' if pid else 'node declared dead before the kill'} with {done_at_kill} "
          f"shard(s) done; the GCS saw the node dead after {dead[0] if dead else float('nan'):.1f} s; the scan ended "
          f"{run.line_at('ETA done') - killed:.1f} s and the run {ended_wall - killed_wall:.1f} s after the kill")
    # The job watches for lost nodes while its scan runs, not while it writes its summary and report afterwards:
    # the scan's end is its last progress line ("ETA done"), printed once the watch has stopped.
    scan_ended = run.line_at("ETA done") - killed
    if dead and scan_ended > dead[0] + 2:  # two polls of the job's watch
        assert re.search(r"^geo: warning: lost Ray node \S+ \([0-9a-f]{8}\); its work is retried on the nodes that remain$",
                         run.stderr(), re.M), run.stderr()
        print(f"geo: 'lost Ray node' printed {run.line_at('lost Ray node') - killed:.1f} s after the kill")
    if pid is not None:  # the kill came at the moment meant, not after the scan
        assert (done_at_kill == 0) if moment == "before the first shard line" else (0 < done_at_kill < 12), done_at_kill

    lost_summary, base_summary = (json.loads((d / "summary.json").read_text()) for d in (run_dir(stdout), base_dir))
    assert lost_summary["corpora"]["c"]["country_counts"] == base_summary["corpora"]["c"]["country_counts"]
    assert lost_summary["table"] == base_summary["table"]
    manifests = [json.loads((d / "manifest.json").read_text()) for d in (run_dir(stdout), base_dir)]
    assert manifests[0]["rows"] == manifests[1]["rows"] and manifests[0]["rows"]["in"] == 300_000
    assert manifests[0]["shards"]["total"] == 12 and not manifests[0]["shards"]["failed"]


# Three model runs on a fresh two-node cluster, each starting its model actor: ~4 minutes at a load of 10, and past
# pytest's default 600 s at a load of 16 (issue 33 item 16, measured): the bound is the harness's, not the behaviour's.
@pytest.mark.timeout(1500)
def test_a_model_stage_whose_only_node_died_stops_resumably_and_resume_finishes_it(cluster, tmp_path):
    toy = write_toy(tmp_path / "toy.jsonl", n=240)
    model = shared_tiny_lm()

    def args(out: str, *extra: str) -> list[str]:
        return ["landscape", "--input", str(toy), "--name", "toy", "--question-column", "q", "--id-column", "id",
                "--options-column", "opts", "--gold-column", "ans", "--perturbations", "none", "--model", f"hf:{model}",
                "--batch-size", "4", "--actors", "1", "--out", str(tmp_path / out), *extra]

    # the uninterrupted run, in its own process with no Ray (--executor local), while the cluster starts and loses
    # its node: the answers of a run on a cluster are the answers of a run without one
    base = Watched([*args("base"), "--executor", "local"], ray_env(tmp_path / "base-env"))
    # the head holds no model actor, as a head without GPUs holds none; fast health checks: the loss is seen in ~3 s
    ray_cluster = cluster(head_cpus=0, fast_health_checks=True)
    node = add_node(ray_cluster, num_cpus=2, resources={"model_node": 1})

    run = Watched([*args("lost", "--run-id", "r1", "--lost-node-timeout", "2"), "--address", ray_cluster.gcs], ray_cluster.env)
    run.wait_for(ANSWERS, lambda m: 0 < int(m.group(1).replace(",", "")) < int(m.group(2).replace(",", "")))
    killed = time.monotonic()
    kill_raylet(node)
    code, _ = run.finish()
    stopped = time.monotonic() - killed
    err = [line for line in run.stderr().splitlines() if "error" in line or "--resume" in line]
    assert code == 1, run.stderr()[-3000:]  # resumable
    assert "Traceback" not in run.stderr() and "ray::" not in run.stderr()
    assert re.search(r"error: landscape: model \S+: lost Ray node \S+ and no live node has 1 CPU for an actor of "
                     r"this stage \(waited 2 s, --lost-node-timeout\)", err[0]), err
    assert "--resume --run-id r1" in run.stderr()
    noticed = run.line_at("lost Ray node") - killed
    print(f"\nlandscape: raylet killed; 'lost Ray node' printed after {noticed:.1f} s; stopped {stopped:.1f} s after the kill")

    code, base_out = base.finish()
    assert code == 0, base.stderr()[-3000:]

    add_node(ray_cluster, num_cpus=2, resources={"model_node": 1})  # the cluster repaired
    resumed = Watched([*args("lost", "--run-id", "r1", "--resume"), "--address", ray_cluster.gcs], ray_cluster.env)
    code, out = resumed.finish()
    assert code == 0, resumed.stderr()[-3000:]
    tables = [read_table(str(run_dir(o)), "scores").sort_by([("id", "ascending"), ("perturbation", "ascending")])
              for o in (out, base_out)]
    assert tables[0].num_rows == 240
    assert tables[0].drop_columns(["cached"]).equals(tables[1].drop_columns(["cached"]))
    hits = json.loads((run_dir(out) / "manifest.json").read_text())["models"]
    assert next(iter(hits.values()))["calls"]["cache_hits"] > 0  # the answers made before the loss were kept
