"""One shard type for every job: each job's planned shards reach its task through the runner as the
same typed ``Shard`` they were planned as, and their ids change with content, never with file times."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.io.shards import Shard, shard_id
from connectors.runs.rundir import RunDir
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.shards import ShardOutputs, ShardResult, ShardTask, run_shards

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
BENCHMARKS = FIXTURES / "benchmarks"


class Received(ShardTask):
    """Records what the runner handed it, as it got it."""

    def __init__(self) -> None:
        self.got: list[Shard] = []

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        self.got.append(shard)
        return ShardResult(rows_in=1)


def geo_shards(tmp_path: Path) -> list[Shard]:
    from connectors.captions.corpus import plan_corpus
    from jobs.geo.config import CorpusConfig, GeoConfig
    from jobs.geo.run import _shards

    pq.write_table(pa.table({"text": [f"a caption from Oslo {i}" for i in range(30)]}), tmp_path / "c.parquet",
                   row_group_size=10)
    (tmp_path / "c.jsonl").write_text('{"text": "Paris"}\n{"text": "Lima"}\n')
    cfg = GeoConfig(corpus=[CorpusConfig(name="pq", paths=[str(tmp_path / "c.parquet")], format="parquet", text="text"),
                            CorpusConfig(name="js", paths=[str(tmp_path / "c.jsonl")], format="jsonl", text="text")],
                    shard_rows=10)
    return _shards({n: plan_corpus(s, cfg.shard_rows) for n, s in cfg.specs().items()})


def conventions_shards(tmp_path: Path) -> list[Shard]:
    from connectors.benchmarks.shards import plan_benchmark
    from jobs.common.inputs.benchmarks import BenchmarkConfig
    from jobs.conventions.run import _shards

    bench = pa.Table.from_pylist([{"id": f"q{i}", "question": f"What color is {i}?", "best_answer": "Red"}
                                  for i in range(7)])
    pq.write_table(bench, tmp_path / "b.parquet")
    configs = [BenchmarkConfig(name="arc", preset="arc", paths=[str(BENCHMARKS / "arc_challenge_slice.jsonl")]),
               BenchmarkConfig(name="drop", preset="drop", paths=[str(BENCHMARKS / "drop_allennlp_fixture.json")]),
               BenchmarkConfig(name="pq", question="question", paths=[str(tmp_path / "b.parquet")])]
    specs = {c.name: c.to_spec() for c in configs}
    return _shards({n: plan_benchmark(s, 3) for n, s in specs.items()}, specs)


def scorers_shards(tmp_path: Path) -> list[Shard]:
    from connectors.scorers import read_gold_references
    from jobs.common.inputs.benchmarks import BenchmarkConfig
    from jobs.scorers.config import ScorersConfig
    from jobs.scorers.run import answer_sets, plan_shards

    cfg = ScorersConfig(benchmark=[BenchmarkConfig(name="tqa", preset="truthfulqa",
                                                   paths=[str(BENCHMARKS / "truthfulqa_slice.csv")])])
    return plan_shards(answer_sets(cfg, read_gold_references(cfg.gold_benchmark.to_spec())), 4, "key")


def docs_shards(tmp_path: Path) -> list[Shard]:
    from connectors.docs import find_documents
    from jobs.docs.config import DocsConfig
    from jobs.docs.run import plan_shards

    cfg = DocsConfig(cards=[str(FIXTURES / "docs" / "cards")])
    return plan_shards(find_documents(cfg.cards), cfg)


def coreset_shards(tmp_path: Path) -> list[Shard]:
    from connectors.coreset.targets import TargetColumns, plan_targets

    pq.write_table(pa.table({"id": list(range(20)), "label": [i % 2 for i in range(20)], "score": [0.5] * 20}),
                   tmp_path / "t.parquet", row_group_size=5)
    return list(plan_targets([str(tmp_path / "t.parquet")], TargetColumns(), shard_rows=10).shards)


PLANNERS = {"geo": geo_shards, "conventions": conventions_shards, "scorers": scorers_shards, "docs": docs_shards,
            "coreset": coreset_shards}


@pytest.mark.parametrize("job", sorted(PLANNERS))
def test_every_jobs_shards_cross_the_runner_typed(job, tmp_path):
    planned = PLANNERS[job](tmp_path)
    assert len(planned) >= 2 and len({s.shard_id for s in planned}) == len(planned)
    assert all(type(s) is Shard for s in planned)
    task = Received()
    run = RunDir(str(tmp_path / "runs"), "t", "r1", {}, "h", resume=False)
    scan = run_shards("t", run, RunOptions(out=str(tmp_path / "runs")), StageTimer(), planned, task, executor="local")
    run.release()
    assert [r["status"] for r in scan.results] == ["ok"] * len(planned)
    # the runner sends each shard as JSON and the task gets back the planned object: typed, equal, nothing lost
    assert task.got == planned and all(type(s) is Shard and isinstance(s.row_groups, tuple) for s in task.got)


def test_a_shard_id_is_its_content_not_its_file_time(tmp_path):
    from connectors.captions.corpus import plan_corpus
    from jobs.geo.config import CorpusConfig, GeoConfig

    path = tmp_path / "c.csv"
    path.write_text("text\nOslo\nLima\n")
    cfg = GeoConfig(corpus=[CorpusConfig(name="c", paths=[str(path)], format="csv", text="text")])
    spec = cfg.specs()["c"]
    before = plan_corpus(spec).shards[0]
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # touched: same bytes, a new time
    assert plan_corpus(spec).shards[0].shard_id == before.shard_id
    path.write_text("text\nRome\nLima\n")  # edited in place: same size, then the old time put back
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert plan_corpus(spec).shards[0].shard_id != before.shard_id


def test_shard_id_keys_on_every_part():
    base = shard_id("c", "sha256:aa", "f.parquet", (0, 1))
    assert base == shard_id("c", "sha256:aa", "f.parquet", (0, 1))
    assert len({base, shard_id("d", "sha256:aa", "f.parquet", (0, 1)), shard_id("c", "sha256:ab", "f.parquet", (0, 1)),
                shard_id("c", "sha256:aa", "g.parquet", (0, 1)), shard_id("c", "sha256:aa", "f.parquet", (2,))}) == 5
