"""``benchaudit conventions``: American vs other locale conventions in benchmark text, on Ray Data.

Wiring only: ``connectors.benchmark_shards`` plans shards (one per file, or item ranges of a large
Parquet file) and checks every file's fields before any work; each Ray Data task reads its shard
with ``connectors.benchmarks``, runs ``audit.conventions``' stage batch by batch, writes the item
labels and signals of its shard into the run directory and returns its small partial counts. The
driver merges the counts, reads the per-item label integers back for the item bootstrap
(``audit.conventions.metrics.summarize``) and writes summary, report and manifest.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from fsspec.core import url_to_fs
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.conventions.detect import DetectorConfig
from audit.conventions.inventory import inventory_sha256, load_inventory
from audit.conventions.labels import ITEM_LABEL_SCHEMA, LABELS
from audit.conventions.metrics import (
    COUNT_SCHEMA,
    BenchmarkSummary,
    merge_counts,
    summarize,
    summary_table,
)
from audit.conventions.signals import CATEGORIES, FIELDS, SIGNAL_SCHEMA
from audit.conventions.stage import ConventionStage
from audit.stats.bootstrap import BootstrapConfig, BootstrapInterval
from connectors.benchmark_shards import BenchmarkPlan, BenchmarkShard, plan_benchmark
from connectors.benchmarks import BenchmarkError, BenchmarkSpec, iter_file_batches
from connectors.records import ShardRecordWriter
from jobs.benchmark_config import BenchmarkConfig, shipped_benchmark
from jobs.config import RunOptions, config_hash
from jobs.manifest import StageTimer, base_manifest
from jobs.rundir import RunDir, write_json, write_text
from jobs.shards import ShardError, run_shards
from jobs.summaries import finite

JOB = "conventions"
SIGNALS_OUT_SCHEMA = SIGNAL_SCHEMA.remove(SIGNAL_SCHEMA.get_field_index("row"))  # "row" is batch-relative
EXAMPLE_VARIETIES = ("american", "other", "ambiguous")


def embedded_benchmarks() -> list[BenchmarkConfig]:
    """The shipped samples: all of TruthfulQA (Apache-2.0) and the allennlp DROP fixture (CC BY-SA 4.0)."""
    return [
        BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[shipped_benchmark("TruthfulQA.csv")]),
        BenchmarkConfig(name="drop_fixture", preset="drop", paths=[shipped_benchmark("drop_allennlp_fixture.json")]),
    ]


class ConventionsConfig(BaseModel):
    """Everything that decides a conventions run's results."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmarks: list[BenchmarkConfig] = Field(default_factory=embedded_benchmarks, min_length=1)
    fields: list[str] = Field(default_factory=lambda: list(FIELDS))
    include_lexical: bool = False
    bootstrap_replicates: int = Field(10_000, ge=1)
    seed: int = 2026
    level: float = Field(0.95, gt=0, lt=1)
    shard_items: int = Field(100_000, ge=1)
    batch_items: int = Field(10_000, ge=1)
    examples: int = Field(5, ge=0)

    @model_validator(mode="after")
    def _check(self) -> ConventionsConfig:
        names = [b.name for b in self.benchmarks]
        if len(set(names)) != len(names):
            raise ValueError(f"benchmark names must be unique, got {names}")
        self.detector()  # unknown fields fail here, at the edge
        return self

    def detector(self) -> DetectorConfig:
        return DetectorConfig(tuple(self.fields), self.include_lexical)

    def bootstrap(self) -> BootstrapConfig:
        return BootstrapConfig(self.bootstrap_replicates, self.seed, self.level)


# ---- worker side -----------------------------------------------------------------------------

_STAGES: dict[DetectorConfig, ConventionStage] = {}


def _stage(config: DetectorConfig) -> ConventionStage:
    """One spelling automaton per worker process, reused by every shard it runs."""
    if config not in _STAGES:
        _STAGES[config] = ConventionStage(config)
    return _STAGES[config]


def _add_examples(examples: dict[str, list[dict]], signals: pa.Table, k: int) -> None:
    """Keep the first ``k`` signals of each category and variety, for a reviewer to see why."""
    if k == 0 or signals.num_rows == 0:
        return
    for s in signals.select(["item_id", "field", "element", "start", "text", "category", "variety", "detail"]).to_pylist():
        if s["variety"] in EXAMPLE_VARIETIES:
            bucket = examples.setdefault(f"{s['category']}/{s['variety']}", [])
            if len(bucket) < k:
                bucket.append(s)


def run_shard(shard: BenchmarkShard, spec: BenchmarkSpec, stage: ConventionStage, partial_dir: str, on_error: str,
              batch_items: int, examples: int) -> dict:
    """Detect, label and count one shard; its labels and signals go to the run directory."""
    started = time.monotonic()
    labels_out = ShardRecordWriter(f"{partial_dir}/items.parquet/{shard.shard_id}.parquet", ITEM_LABEL_SCHEMA)
    signals_out = ShardRecordWriter(f"{partial_dir}/signals.parquet/{shard.shard_id}.parquet", SIGNALS_OUT_SCHEMA)
    counts, found, rows = [], {}, 0
    try:
        for batch in iter_file_batches(spec, shard.url, batch_items, rows=(shard.start, shard.stop)):
            audit = stage.process(batch)
            labels_out.write(audit.labels)
            signals_out.write(audit.signals.drop_columns(["row"]))
            counts.append(audit.counts)
            _add_examples(found, audit.signals, examples)
            rows += batch.num_rows
        labels_out.close()
        signals_out.close()
        result = {"status": "ok", "error": None}
    except Exception as exc:  # noqa: BLE001 — every failure is reported with the shard's file
        labels_out.abort()
        signals_out.abort()
        rng = f"rows {shard.start}-{shard.stop}" if shard.stop is not None else "all rows"
        message = f"{shard.url} (shard {shard.shard_id}, {rng}): {type(exc).__name__}: {exc}"
        if on_error != "skip":
            raise ShardError(message) from exc
        counts, found, rows = [], {}, 0
        result = {"status": "failed", "error": message}
    result.update({
        "shard_id": shard.shard_id, "benchmark": shard.benchmark, "file": shard.url, "rows_in": rows,
        "seconds": round(time.monotonic() - started, 3), "counts": merge_counts(counts).to_pylist(), "examples": found,
    })
    write_json(f"{partial_dir}/shards/{shard.shard_id}.json", result)
    return result


def _map_shards(batch: pa.Table, *, specs: dict[str, BenchmarkSpec], detector: DetectorConfig, partial_dir: str,
                on_error: str, batch_items: int, examples: int) -> pa.Table:
    stage = _stage(detector)
    results = [
        run_shard(BenchmarkShard(**json.loads(s)), specs[b], stage, partial_dir, on_error, batch_items, examples)
        for s, b in zip(batch.column("shard").to_pylist(), batch.column("benchmark").to_pylist())
    ]
    return pa.table({"result": [json.dumps(r) for r in results]})


# ---- driver side -----------------------------------------------------------------------------

def read_labels(run_dir: RunDir, results: list[dict]) -> pa.Table:
    """The per-item label integers of every finished shard, in ``results`` order; an id in two
    shards of one benchmark (two files, or two ranges of one file) is an error naming both files."""
    tables = []
    for r in results:
        if r["status"] != "ok" or not r["rows_in"]:
            continue
        fs, path = url_to_fs(run_dir.path("items.parquet", f"{r['shard_id']}.parquet"))
        with fs.open(path, "rb") as fh:
            tables.append((r["file"], pq.read_table(fh)))
    labels = pa.concat_tables([ITEM_LABEL_SCHEMA.empty_table(), *(t for _, t in tables)])
    counts = labels.group_by(["benchmark", "item_id"]).aggregate([([], "count_all")])
    dups = counts.filter(pc.greater(counts.column("count_all"), 1))
    if dups.num_rows:
        name, item = dups.column("benchmark")[0].as_py(), dups.column("item_id")[0].as_py()
        files = [f for f, t in tables if pc.any(pc.and_(pc.equal(t.column("benchmark"), name),
                                                        pc.equal(t.column("item_id"), item))).as_py()]
        raise BenchmarkError(f"{files[-1]}: benchmark {name!r}: duplicate id {item!r} (also in {files[0]})")
    return labels


def _ci(interval: BootstrapInterval) -> list[float | None]:
    return [finite(interval.low), finite(interval.high)]


def benchmark_block(s: BenchmarkSummary, plan: BenchmarkPlan, examples: dict[str, list[dict]]) -> dict:
    """Every number the report shows for one benchmark (fractions; ``None`` where undefined)."""
    def breakdown(b) -> dict:
        return {"american": b.american, "other": b.other, "share": finite(b.share)}

    return {
        "n_items": s.n_items, "n_covered": s.n_covered, "coverage": finite(s.coverage), "coverage_ci": _ci(s.coverage_ci),
        "american_share": finite(s.american_share), "american_share_ci": _ci(s.share_ci),
        "skew": finite(s.skew), "skew_ci": [finite(v) for v in s.skew_ci],
        "american_share_excl_spelling": finite(s.american_share_excl_spelling),
        "american_share_excl_spelling_ci": _ci(s.share_excl_spelling_ci),
        "signals": {"american": s.n_american, "other": s.n_other, "american_excl_spelling": s.n_american_excl_spelling,
                    "other_excl_spelling": s.n_other_excl_spelling, "ambiguous": s.n_ambiguous, "neutral": s.n_neutral},
        "labels": s.labels, "label_shares": {k: finite(v / s.n_items) for k, v in s.labels.items()},
        "by_category": {c: breakdown(b) for c, b in s.by_category.items()},
        "by_field": {f: breakdown(b) for f, b in s.by_field.items()},
        "bootstrap": {"replicates": s.share_ci.n_replicates, "seed": s.share_ci.seed, "level": s.share_ci.level,
                      "undefined_replicates": {"coverage": s.coverage_ci.n_undefined, "american_share": s.share_ci.n_undefined,
                                               "american_share_excl_spelling": s.share_excl_spelling_ci.n_undefined}},
        "files": list(plan.files),
        "examples": examples,
    }


def _summary(cfg: ConventionsConfig, run_id: str, summaries: list[BenchmarkSummary], plans: dict[str, BenchmarkPlan],
             results: list[dict]) -> dict:
    examples: dict[str, dict[str, list[dict]]] = {name: {} for name in plans}
    for r in results:
        for key, found in r["examples"].items():
            bucket = examples[r["benchmark"]].setdefault(key, [])
            bucket += found[: cfg.examples - len(bucket)]
    table = [{k: finite(v) for k, v in row.items()} for row in summary_table(summaries).to_pylist()]
    blocks = {s.benchmark: benchmark_block(s, plans[s.benchmark], examples[s.benchmark]) for s in summaries}
    failed = [{"benchmark": r["benchmark"], "file": r["file"], "error": r["error"]} for r in results if r["status"] == "failed"]
    return {
        "job": JOB, "run_id": run_id,
        "detector": {"fields": cfg.fields, "include_lexical": cfg.include_lexical, "inventory_pairs": len(load_inventory()),
                     "inventory_sha256": inventory_sha256(), "categories": list(CATEGORIES), "labels": list(LABELS)},
        "bootstrap": {"replicates": cfg.bootstrap_replicates, "seed": cfg.seed, "level": cfg.level},
        "table": table, "benchmarks": blocks, "failed_shards": failed,
    }


def run(cfg: ConventionsConfig, opts: RunOptions) -> str:
    """Run the conventions audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        specs = {b.name: b.to_spec() for b in cfg.benchmarks}
        plans = {name: plan_benchmark(spec, cfg.shard_items) for name, spec in specs.items()}
    payload = {"config": cfg.model_dump(), "inventory_sha256": inventory_sha256(), "on_error": opts.on_error}
    chash = config_hash(payload)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    shards = [s for p in plans.values() for s in p.shards]
    expected = [p.expected_items for p in plans.values()]
    scan = run_shards(
        JOB, run_dir, opts, timer, [(s.shard_id, {"shard": json.dumps(asdict(s)), "benchmark": s.benchmark}) for s in shards],
        None if None in expected else sum(expected), _map_shards,
        lambda: {"specs": specs, "detector": cfg.detector(), "partial_dir": run_dir.partial, "on_error": opts.on_error,
                 "batch_items": cfg.batch_items, "examples": cfg.examples},
    )
    results = scan.results

    with timer("aggregate"):
        # plan order (files, then item ranges), not completion order: the bootstrap draws items by
        # position, so the intervals equal those of one in-process pass over the same files
        position = {s.shard_id: i for i, s in enumerate(shards)}
        results.sort(key=lambda r: position[r["shard_id"]])
        ok = [r for r in results if r["status"] == "ok"]
        counts = merge_counts(pa.Table.from_pylist(r["counts"], schema=COUNT_SCHEMA) for r in ok)
        labels = read_labels(run_dir, ok)
        summaries = summarize(counts, labels, cfg.bootstrap())
        summary = _summary(cfg, run_dir.run_id, summaries, plans, results)

    with timer("report"):
        from jobs.report_conventions import (
            render_conventions_report,  # presentation only: kept out of the workers
        )

        write_json(run_dir.path("summary.json"), summary)
        write_text(run_dir.path("report.html"), render_conventions_report(summary))

    failed = summary["failed_shards"]
    rows_in = sum(r["rows_in"] for r in ok)
    manifest = base_manifest(JOB, run_dir.run_id, cfg, opts, chash, cfg.seed, timer, scan.ray_info)
    manifest.update({
        "inputs": {n: {"fingerprint": p.fingerprint, "files": list(p.files), "shards": len(p.shards),
                       "expected_items": p.expected_items} for n, p in plans.items()},
        "inventory": {"pairs": len(load_inventory()), "sha256": inventory_sha256()},
        "rows": {"in": rows_in, "out": labels.num_rows,
                 "skipped_by_reason": {"unreadable_shard": len(failed)} if failed else {}},
        "shards": {"total": len(shards), "resumed": scan.resumed, "run": scan.run, "failed": failed},
        "timings": {**timer.seconds, "wall_s": timer.wall(), "scan_items_per_s": round(scan.progress.rate(), 1),
                    "progress": scan.progress.samples},
        "outputs": {"items": "items.parquet/<shard_id>.parquet", "signals": "signals.parquet/<shard_id>.parquet"},
    })
    write_json(run_dir.path("manifest.json"), manifest)
    return run_dir.commit()
