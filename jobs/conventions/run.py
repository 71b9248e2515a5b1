"""``benchaudit conventions``: American vs other locale conventions in benchmark text, on Ray Data.

Wiring only: ``connectors.benchmarks`` plans shards (one per file, or item ranges of a large
Parquet file) and checks every file's fields before any work; each ``ConventionsTask`` reads its
shard, runs ``audit.conventions``' stage batch by batch, writes the item labels and signals of its
shard into the run directory and returns its small partial counts. The driver merges the counts,
reads the per-item label integers back for the item bootstrap
(``audit.conventions.metrics.summarize``) and writes summary, report and manifest.
"""
from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc

from audit.conventions.inventory import inventory_sha256, load_inventory
from audit.conventions.labels import ITEM_LABEL_SCHEMA, LABELS
from audit.conventions.metrics import (
    COUNT_SCHEMA,
    BenchmarkSummary,
    merge_counts,
    summarize,
    summary_table,
)
from audit.conventions.signals import CATEGORIES, SIGNAL_SCHEMA
from audit.conventions.stage import ConventionStage
from audit.stats.bootstrap import BootstrapInterval
from connectors.benchmarks.formats import guess_format
from connectors.benchmarks.read import iter_file_batches
from connectors.benchmarks.schema import BenchmarkError
from connectors.benchmarks.shards import BenchmarkPlan, file_ref, plan_benchmark
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.io.read_report import OnBadRow, ReadReport
from connectors.io.row_counts import count_files
from connectors.runs.tables import read_parts
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.job import JobRun, SkipCheck
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.shards import Shard, ShardOutputs, ShardResult, ShardTask, apply_limit, limited
from jobs.common.runtime.summaries import finite, headline
from jobs.conventions.config import ConventionsConfig

JOB = "conventions"
# The run's tables (data/<table>/benchmark=<name>/): the benchmark lives in the folder name; "row" is
# batch-relative and dropped; the character offsets are char_start/char_end ("end" is an SQL keyword).
ITEMS_OUT_SCHEMA = pa.schema([f for f in ITEM_LABEL_SCHEMA if f.name != "benchmark"])
SIGNAL_RENAMES = {"start": "char_start", "end": "char_end"}
SIGNALS_OUT_SCHEMA = pa.schema([f.with_name(SIGNAL_RENAMES.get(f.name, f.name)) for f in SIGNAL_SCHEMA
                                if f.name not in ("row", "benchmark")])
EXAMPLE_VARIETIES = ("american", "other", "ambiguous")


def _add_examples(examples: dict[str, list[dict]], signals: pa.Table, k: int) -> None:
    """Keep the first ``k`` signals of each category and variety, for a reviewer to see why."""
    if k == 0 or signals.num_rows == 0:
        return
    for s in signals.select(["item_id", "field", "element", "start", "text", "category", "variety", "detail"]).to_pylist():
        if s["variety"] in EXAMPLE_VARIETIES:
            bucket = examples.setdefault(f"{s['category']}/{s['variety']}", [])
            if len(bucket) < k:
                bucket.append(s)


class ConventionsTask(ShardTask):
    """Detect, label and count one shard; its labels and signals go to the run directory."""

    def __init__(self, specs: dict[str, BenchmarkSpec], cfg: ConventionsConfig, on_bad_row: OnBadRow):
        self.specs, self.detector, self.batch_rows, self.examples = specs, cfg.detector(), cfg.batch_rows, cfg.examples
        self.on_bad_row = on_bad_row  # --on-error skip: a bad item is counted and skipped, not the end of its file

    def setup(self) -> None:
        self.stage = ConventionStage(self.detector)  # one spelling automaton per worker

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        labels_out = out.writer("items", ITEMS_OUT_SCHEMA, ("benchmark", shard.input))
        signals_out = out.writer("signals", SIGNALS_OUT_SCHEMA, ("benchmark", shard.input))
        counts, rows = [], 0
        found: dict[str, list[dict]] = {}
        report = ReadReport(shard.source)
        batches = iter_file_batches(self.specs[shard.input], shard.source, self.batch_rows, rows=(shard.start, shard.stop),
                                    on_bad_row=self.on_bad_row, report=report)
        for batch in limited(batches, shard.limit):
            audit = self.stage.process(batch)
            labels_out.write(audit.labels.select(ITEMS_OUT_SCHEMA.names))
            signals_out.write(audit.signals.drop_columns(["row", "benchmark"]).rename_columns(SIGNALS_OUT_SCHEMA.names))
            counts.append(audit.counts)
            _add_examples(found, audit.signals, self.examples)
            rows += batch.num_rows
            out.rows_read(rows + report.rows_skipped)
        return ShardResult(rows_in=rows + report.rows_skipped, partial={"counts": merge_counts(counts).to_pylist(), "examples": found},
                           skipped=dict(report.skipped_by_reason), unread_rows=report.unread_rows,
                           unread=[u.to_json() for u in report.unread])


def read_labels(run: JobRun, results: list[dict]) -> pa.Table:
    """The per-item label integers of every finished shard, in ``results`` order; an id in two
    shards of one benchmark (two files, or two ranges of one file) is an error naming both files."""
    files = {r["shard_id"]: r["file"] for r in results}
    parts: list[tuple[str, tuple[str, str] | None]] = [(r["shard_id"], ("benchmark", r["input"])) for r in results]
    tables = [(files[sid], t.select(ITEM_LABEL_SCHEMA.names)) for sid, t in read_parts(run.path(), "items", parts)]
    labels = pa.concat_tables([ITEM_LABEL_SCHEMA.empty_table(), *(t for _, t in tables)])
    counts = labels.group_by(["benchmark", "item_id"]).aggregate([([], "count_all")])
    dups = counts.filter(pc.greater(counts.column("count_all"), 1))
    if dups.num_rows:
        name, item = dups.column("benchmark")[0].as_py(), dups.column("item_id")[0].as_py()
        found = [f for f, t in tables if pc.any(pc.and_(pc.equal(t.column("benchmark"), name),
                                                        pc.equal(t.column("item_id"), item))).as_py()]
        raise BenchmarkError(f"{found[-1]}: benchmark {name!r}: duplicate id {item!r} (also in {found[0]})")
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
             results: list[dict], failed: list[dict]) -> dict:
    examples: dict[str, dict[str, list[dict]]] = {name: {} for name in plans}
    for r in results:
        for key, found in r["partial"]["examples"].items():
            bucket = examples[r["input"]].setdefault(key, [])
            bucket += found[: cfg.examples - len(bucket)]
    table = [{k: finite(v) for k, v in row.items()} for row in summary_table(summaries).to_pylist()]
    blocks = {s.benchmark: benchmark_block(s, plans[s.benchmark], examples[s.benchmark]) for s in summaries}
    return {
        "job": JOB, "run_id": run_id,
        "detector": {"fields": cfg.fields, "include_lexical": cfg.include_lexical, "inventory_pairs": len(load_inventory()),
                     "inventory_sha256": inventory_sha256(), "categories": list(CATEGORIES), "labels": list(LABELS)},
        "bootstrap": {"replicates": cfg.bootstrap, "seed": cfg.seed, "level": cfg.level},
        "table": table, "benchmarks": blocks,
        "headline": [row for s in summaries for row in (
            headline(s.benchmark, "coverage", s.coverage, (s.coverage_ci.low, s.coverage_ci.high)),
            headline(s.benchmark, "american_share", s.american_share, (s.share_ci.low, s.share_ci.high)),
            headline(s.benchmark, "american_share_excl_spelling", s.american_share_excl_spelling,
                     (s.share_excl_spelling_ci.low, s.share_excl_spelling_ci.high)),
            headline(s.benchmark, "items", s.n_items))],
        "failed_shards": [{"benchmark": f["input"], "file": f["file"], "error": f["error"]} for f in failed],
    }


def _shards(plans: dict[str, BenchmarkPlan], specs: dict[str, BenchmarkSpec]) -> list[Shard]:
    """Item counts are known up front for Parquet (the planner's ranges); a JSON Lines or CSV file gets an
    expectation from its lines; other formats (a JSON array, HF folders, 6-line text) stay unknown and
    are sized by their stored bytes (so the shipped DROP JSON does not start Ray)."""
    out = []
    for name, p in plans.items():
        lines = {s.source: fmt for s in p.shards if s.stop is None and (fmt := _line_format(specs[name], s.source))}
        counts = {}
        for fmt in set(lines.values()):
            counts.update(count_files([file_ref(u) for u, f in lines.items() if f == fmt], fmt, header=True))
        for s in p.shards:
            counted = counts.get(s.source) if s.stop is None else None
            out.append(s if counted is None else replace(s, expected_rows=counted.rows, estimated=True))
    return out


def _line_format(spec: BenchmarkSpec, url: str) -> str | None:
    """'jsonl' or 'csv' when the file's rows are its lines, else None."""
    try:
        fmt = spec.format or guess_format(url)
    except BenchmarkError:
        return None
    return fmt if fmt in ("jsonl", "csv") else None


def run(cfg: ConventionsConfig, opts: RunOptions) -> str:
    """Run the conventions audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        specs = {b.name: b.to_spec() for b in cfg.benchmark_configs()}
        plans = {name: plan_benchmark(spec, cfg.shard_rows) for name, spec in specs.items()}
        shards = apply_limit(_shards(plans, specs), cfg.limit)
    payload = {"config": cfg.model_dump(), "inventory_sha256": inventory_sha256(), "on_error": opts.on_error}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer, use_ray="scan") as job:
        scan = job.scan(shards, ConventionsTask(specs, cfg, "skip" if opts.on_error == "skip" else "raise"))
        with job.timer("aggregate"):
            ok = scan.ok  # plan order: the bootstrap draws items by position, as one in-process pass would
            counts = merge_counts(pa.Table.from_pylist(r["partial"]["counts"], schema=COUNT_SCHEMA) for r in ok)
            labels = read_labels(job, ok)
            summaries = summarize(counts, labels, cfg.bootstrap_config())
            summary = _summary(cfg, job.run_id, summaries, plans, ok, scan.failed)
        from jobs.conventions.report import render_conventions_report  # presentation only: kept out of the workers

        rows_in, skipped = scan.rows_in(), scan.skipped()
        return job.finish(
            summary, render_conventions_report,
            skips=SkipCheck(rows_in, labels.num_rows, sum(skipped.values()), scan.unread_rows(), scan.failed),
            inputs={n: {"fingerprint": p.fingerprint, "files": list(p.files), "shards": len(p.shards),
                        "expected_items": p.expected_items} for n, p in plans.items()},
            inventory={"pairs": len(load_inventory()), "sha256": inventory_sha256()},
            rows={"in": rows_in, "out": labels.num_rows, "skipped_by_reason": skipped, "unread": scan.unread_rows()},
        )
