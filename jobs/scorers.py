"""``benchaudit scorers``: how much credit valid answer variants lose under each scorer, on Ray Data.

Wiring only. The driver reads the benchmark's gold references and the answers to vary (the gold
answers themselves, model outputs, or a reviewed variants file) through ``connectors.answers``
and checks every question id and answer before any work, so a file naming an unknown question
fails with its file and row. Answers are split into shards of whole questions; each Ray Data
task generates and screens the variants of its shard (``audit.scoring.variants``), scores every
accepted variant and its original with each scorer (``audit.scoring.sensitivity``) and writes
``variants.parquet/`` (rejections and reasons included) and ``pairs.parquet/`` parts. The driver
reads the pairs back (a few numbers per variant and metric) for the question-clustered bootstrap.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import ray
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.conventions.inventory import american_to_other, inventory_sha256
from audit.scoring.screening import DEFAULT_PROTECTED_NAMES
from audit.scoring.sensitivity import (
    SCORERS,
    GoldReferences,
    SensitivityConfig,
    check_question_ids,
    gold_answers_table,
    score_pairs,
    summarize_sensitivity,
)
from audit.scoring.truthfulqa import prepare_references
from audit.scoring.variants import TRANSFORMATIONS, VariantConfig, generate_variants
from audit.stats.bootstrap import BootstrapConfig
from connectors.answers import read_answers, read_gold_references, read_variants
from connectors.benchmark_shards import file_ref
from connectors.benchmarks import benchmark_files
from connectors.fs import fingerprint
from jobs.benchmark_config import BenchmarkConfig, shipped_benchmark
from jobs.config import RunOptions, config_hash
from jobs.manifest import StageTimer, base_manifest
from jobs.rundir import RunDir, write_json, write_parquet, write_text
from jobs.shards import ShardError, run_shards
from jobs.summaries import finite, records

JOB = "scorers"
GOLD = "gold"


def embedded_benchmark() -> BenchmarkConfig:
    """The shipped TruthfulQA.csv (Apache-2.0): its gold answers are varied and scored."""
    return BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[shipped_benchmark("TruthfulQA.csv")])


class AnswersConfig(BaseModel):
    """One file of model outputs: a question id and an answer per row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    path: str
    id_column: str = "question_id"
    answer_column: str = "answer"


class ScorersConfig(BaseModel):
    """Everything that decides a scorers run's results."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: BenchmarkConfig = Field(default_factory=embedded_benchmark)
    answers: list[AnswersConfig] = Field(default_factory=list)
    variants_path: str | None = None
    scorers: list[str] | None = None  # None: every scorer that applies (see default_scorers)
    transformations: list[str] = Field(default_factory=lambda: list(TRANSFORMATIONS))
    protected_names: list[str] = Field(default_factory=lambda: list(DEFAULT_PROTECTED_NAMES))
    bootstrap_replicates: int = Field(10_000, ge=1)
    seed: int = 2026
    level: float = Field(0.95, gt=0, lt=1)
    shard_questions: int = Field(500, ge=1)
    examples: int = Field(10, ge=0)

    @model_validator(mode="after")
    def _check(self) -> ScorersConfig:
        names = [a.name for a in self.answers] + (["variants"] if self.variants_path else [])
        if len(set(names)) != len(names) or GOLD in names:
            raise ValueError(f"answer set names must be unique and not {GOLD!r}, got {names}")
        self.sensitivity(self.scorers or SCORERS)  # unknown scorers or transformations fail here, at the edge
        return self

    def sensitivity(self, scorers: list[str] | tuple[str, ...]) -> SensitivityConfig:
        return SensitivityConfig(tuple(scorers), VariantConfig(tuple(self.transformations), tuple(self.protected_names)),
                                 self.bootstrap())

    def bootstrap(self) -> BootstrapConfig:
        return BootstrapConfig(self.bootstrap_replicates, self.seed, self.level)


@dataclass(frozen=True)
class AnswerSet:
    """What one system contributes: answers to vary (or ready variants), where they came from."""

    name: str
    kind: str  # "gold", "answers" or "variants"
    source: str
    table: pd.DataFrame
    skipped: pd.DataFrame


# ---- worker side -----------------------------------------------------------------------------

_GOLDS: dict[str, dict[str, GoldReferences]] = {}


def _golds(key: str, ref: list[ray.ObjectRef]) -> dict[str, GoldReferences]:
    """The gold references, fetched once per worker process."""
    if key not in _GOLDS:
        _GOLDS[key] = ray.get(ref[0])
    return _GOLDS[key]


def _examples(variants: pd.DataFrame, k: int) -> dict[str, list[dict]]:
    cols = ["question_id", "original", "variant", "transformation", "reason"]
    return {status: variants[variants["status"] == status][cols].head(k).to_dict("records") for status in ("accepted", "rejected")}


def run_shard(shard: dict, golds: dict[str, GoldReferences], config: SensitivityConfig, partial_dir: str, on_error: str,
              examples: int) -> dict:
    """Generate, screen and score the variants of one shard's answers; parts go to the run directory."""
    started = time.monotonic()
    rows = pd.DataFrame(shard["rows"])
    source = f"{shard['source']} (shard {shard['shard_id']})"
    try:
        if shard["kind"] == "variants":
            variants = rows
        else:
            variants = generate_variants(rows, american_to_other(), config.variants, source)
        pairs = score_pairs(variants, golds, config.scorers, source)
        for name, frame in (("variants", variants), ("pairs", pairs)):
            if not frame.empty:
                table = pa.Table.from_pandas(frame.assign(system=shard["system"]), preserve_index=False)
                write_parquet(f"{partial_dir}/{name}.parquet/{shard['shard_id']}.parquet", table)
        counts = variants.groupby(["transformation", "status"]).size()
        result = {"status": "ok", "error": None, "n_answers": len(rows), "n_pairs": len(pairs),
                  "variants": [[t, s, int(n)] for (t, s), n in counts.items()],
                  "reasons": dict(Counter(r for r in variants["reason"] if r)), "examples": _examples(variants, examples)}
    except Exception as exc:  # noqa: BLE001 — every failure is reported with the shard's source
        message = f"{source}: {type(exc).__name__}: {exc}"
        if on_error != "skip":
            raise ShardError(message) from exc
        result = {"status": "failed", "error": message, "n_answers": 0, "n_pairs": 0, "variants": [], "reasons": {},
                  "examples": {}}
    result.update({"shard_id": shard["shard_id"], "system": shard["system"], "file": shard["source"],
                   "rows_in": len(rows), "seconds": round(time.monotonic() - started, 3)})
    write_json(f"{partial_dir}/shards/{shard['shard_id']}.json", result)
    return result


def _map_shards(batch: pa.Table, *, golds_key: str, golds_ref: list, config: SensitivityConfig, partial_dir: str,
                on_error: str, examples: int) -> pa.Table:
    golds = _golds(golds_key, golds_ref)
    results = [run_shard(json.loads(s), golds, config, partial_dir, on_error, examples) for s in batch.column("shard").to_pylist()]
    return pa.table({"result": [json.dumps(r) for r in results]})


# ---- driver side -----------------------------------------------------------------------------

def answer_sets(cfg: ScorersConfig, golds: dict[str, GoldReferences]) -> list[AnswerSet]:
    """Every answer set, each checked against the questions (unknown ids name file and row)."""
    sets = []
    for a in cfg.answers:
        table = read_answers(a.path, a.id_column, a.answer_column, cfg.benchmark.encoding)
        check_question_ids(table, golds, a.path)
        sets.append(AnswerSet(a.name, "answers", a.path, table, pd.DataFrame(columns=["question_id", "reason"])))
    if cfg.variants_path:
        table = read_variants(cfg.variants_path, cfg.benchmark.encoding)
        check_question_ids(table, golds, cfg.variants_path)
        sets.append(AnswerSet("variants", "variants", cfg.variants_path, table, pd.DataFrame(columns=["question_id", "reason"])))
    if not sets:
        gold = gold_answers_table(golds)
        sets.append(AnswerSet(GOLD, GOLD, f"gold answers of {cfg.benchmark.name}", gold.table, gold.skipped))
    return sets


def default_scorers(cfg: ScorersConfig, sets: list[AnswerSet], golds: dict[str, GoldReferences]) -> list[str]:
    """The scorers to run: as configured, else every one that applies.

    TruthfulQA's ranking needs incorrect references for every question scored; when the scorer is
    asked for explicitly, a question without them is an error before any work; by default the
    scorer is left out for such a benchmark (DROP, SQuAD-style gold lists).
    """
    if cfg.scorers is not None and "truthfulqa" not in cfg.scorers:
        return list(cfg.scorers)
    asked = cfg.scorers is not None
    for qid in sorted({q for s in sets for q in s.table["question_id"]}):
        try:
            prepare_references(golds[qid].strings, golds[qid].incorrect_answers)
        except ValueError as err:
            if asked:
                raise ValueError(f"benchmark {cfg.benchmark.name}: question {qid!r}: {err} (drop the truthfulqa scorer)") from err
            return [s for s in SCORERS if s != "truthfulqa"]
    return list(cfg.scorers or SCORERS)


def plan_shards(sets: list[AnswerSet], shard_questions: int, config_key: str) -> list[dict]:
    """Shards of whole questions; ids hash their rows, the config and the golds, so --resume reruns only changed ones."""
    shards = []
    for s in sets:
        questions = list(dict.fromkeys(s.table["question_id"]))
        for i in range(0, len(questions), shard_questions):
            chunk = s.table[s.table["question_id"].isin(set(questions[i:i + shard_questions]))]
            rows = chunk.to_dict("records")
            digest = hashlib.sha256(json.dumps([s.name, s.kind, config_key, rows], sort_keys=True).encode()).hexdigest()[:16]
            shards.append({"shard_id": digest, "system": s.name, "kind": s.kind, "source": s.source, "rows": rows})
    return shards


def _read_parts(run_dir: RunDir, name: str, results: list[dict]) -> pd.DataFrame:
    frames = [pd.read_parquet(run_dir.path(f"{name}.parquet", f"{r['shard_id']}.parquet"))
              for r in results if r["status"] == "ok" and r["n_pairs"]]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _system_block(s: AnswerSet, results: list[dict], pairs: pd.DataFrame, cfg: ScorersConfig) -> dict:
    mine = [r for r in results if r["system"] == s.name]
    variants: dict[str, dict[str, int]] = {}
    reasons: Counter = Counter()
    examples: dict[str, list[dict]] = {"accepted": [], "rejected": []}
    for r in mine:
        for transformation, status, n in r["variants"]:
            variants.setdefault(transformation, {"accepted": 0, "rejected": 0})[status] += n
        reasons.update(r["reasons"])
        for status, found in r["examples"].items():
            examples[status] += found[: cfg.examples - len(examples[status])]
    summary = summarize_sensitivity(pairs, cfg.bootstrap()) if not pairs.empty else pd.DataFrame()
    return {
        "kind": s.kind, "source": s.source, "n_answers": len(s.table), "n_questions": int(s.table["question_id"].nunique()),
        "n_questions_with_pairs": int(pairs["question_id"].nunique()) if not pairs.empty else 0,
        "skipped": records(s.skipped), "variants": variants, "rejection_reasons": dict(reasons.most_common()),
        "sensitivity": records(summary), "examples": examples,
        "failed_shards": [{"shard": r["shard_id"], "error": r["error"]} for r in mine if r["status"] == "failed"],
    }


def run(cfg: ScorersConfig, opts: RunOptions) -> str:
    """Run the scorer-sensitivity audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        spec = cfg.benchmark.to_spec()
        golds = read_gold_references(spec)
        sets = answer_sets(cfg, golds)
        scorers = default_scorers(cfg, sets, golds)
        inputs = [file_ref(u) for u in benchmark_files(spec) + [a.path for a in cfg.answers] + [cfg.variants_path or ""] if u]
    # Input identity lives in the shard ids (a hash of each shard's rows), not in this hash: a
    # resumed run may see a repaired answer file and reruns exactly the shards that changed.
    payload = {"config": cfg.model_dump(), "scorers": scorers, "inventory_sha256": inventory_sha256(), "on_error": opts.on_error}
    chash = config_hash(payload)
    golds_key = hashlib.sha256(repr(sorted(golds.items())).encode()).hexdigest()  # gold files may be repaired between attempts
    shards = plan_shards(sets, cfg.shard_questions, chash + golds_key)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    scan = run_shards(
        JOB, run_dir, opts, timer, [(s["shard_id"], {"shard": json.dumps(s)}) for s in shards],
        sum(len(s["rows"]) for s in shards), _map_shards,
        lambda: {"golds_key": golds_key, "golds_ref": [ray.put(golds)], "config": cfg.sensitivity(scorers),
                 "partial_dir": run_dir.partial, "on_error": opts.on_error, "examples": cfg.examples},
    )
    results = scan.results

    with timer("aggregate"):
        # plan order, not completion order: the bootstrap numbers questions by first appearance,
        # so the intervals equal those of one in-process pass over the same answers
        position = {s["shard_id"]: i for i, s in enumerate(shards)}
        results.sort(key=lambda r: position[r["shard_id"]])
        pairs = _read_parts(run_dir, "pairs", results)
        systems = {s.name: _system_block(s, results, pairs[pairs["system"] == s.name] if not pairs.empty else pairs, cfg)
                   for s in sets}
        table = [{"system": name, **{k: row[k] for k in ("scorer", "metric", "n_pairs", "n_questions", "mean_original",
                                                          "mean_variant", "mean_difference", "ci_low", "ci_high", "share_changed")}}
                 for name, block in systems.items() for row in block["sensitivity"] if row["transformation_type"] == "all"]
        summary = {"job": JOB, "run_id": run_dir.run_id,
                   "benchmark": {"name": cfg.benchmark.name, "files": benchmark_files(spec), "n_questions": len(golds)},
                   "scorers": scorers, "transformations": cfg.transformations,
                   "bootstrap": {"replicates": cfg.bootstrap_replicates, "seed": cfg.seed, "level": cfg.level,
                                 "clusters": "question_id"},
                   "table": [{k: finite(v) for k, v in row.items()} for row in table], "systems": systems}

    with timer("report"):
        from jobs.report_scorers import (
            render_scorers_report,  # presentation only: kept out of the workers
        )

        write_json(run_dir.path("summary.json"), summary)
        write_text(run_dir.path("report.html"), render_scorers_report(summary))

    failed = [{"system": r["system"], "shard": r["shard_id"], "error": r["error"]} for r in results if r["status"] == "failed"]
    manifest = base_manifest(JOB, run_dir.run_id, cfg, opts, chash, cfg.seed, timer, scan.ray_info)
    manifest.update({
        "inputs": {"fingerprint": fingerprint(inputs), "files": [f.url for f in inputs]},
        "inventory": {"sha256": inventory_sha256()},
        "rows": {"in": sum(len(s.table) for s in sets), "out": sum(r["n_answers"] for r in results),
                 "skipped_by_reason": {**({"multi_span_gold": sum(len(s.skipped) for s in sets)} if any(len(s.skipped) for s in sets) else {}),
                                       **({"failed_shard_rows": sum(r["rows_in"] for r in results if r["status"] == "failed")} if failed else {})},
                 "pairs": len(pairs)},
        "shards": {"total": len(shards), "resumed": scan.resumed, "run": scan.run, "failed": failed},
        "timings": {**timer.seconds, "wall_s": timer.wall(), "progress": scan.progress.samples},
        "outputs": {"variants": "variants.parquet/<shard_id>.parquet", "pairs": "pairs.parquet/<shard_id>.parquet"},
    })
    write_json(run_dir.path("manifest.json"), manifest)
    return run_dir.commit()
