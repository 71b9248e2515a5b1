"""``benchaudit scorers``: how much credit valid answer variants lose under each scorer, on Ray Data.

Wiring only. The driver reads the benchmark's gold references and the answers to vary (the gold
answers themselves, model outputs, or a reviewed variants file) through ``connectors.scorers``
and checks every question id and answer before any work, so a file naming an unknown question
fails with its file and row. Answers are split into shards of whole questions; each
``ScorersTask`` generates and screens the variants of its shard (``audit.scorers.variants``),
scores every accepted variant and its original with each scorer (``audit.scorers.sensitivity``)
and writes the ``data/variants/`` (rejections and reasons included) and ``data/pairs/`` tables, partitioned by
answer set (``system=<name>/``).
The driver reads the pairs back (a few numbers per variant and metric) for the
question-clustered bootstrap.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa

from audit.conventions.inventory import american_to_other, inventory_sha256
from audit.scorers.screening import DEFAULT_PROTECTED_NAMES
from audit.scorers.sensitivity import (
    SCORERS,
    GoldReferences,
    SensitivityConfig,
    check_question_ids,
    gold_answers_table,
    score_pairs,
    summarize_sensitivity,
)
from audit.scorers.truthfulqa import prepare_references
from audit.scorers.variants import generate_variants
from connectors.benchmarks.read import benchmark_files
from connectors.benchmarks.shards import file_ref
from connectors.io.fs import fingerprint
from connectors.io.shards import shard_id
from connectors.io.yaml_lists import read_name_list
from connectors.runs.tables import read_parts
from connectors.scorers import read_answers, read_gold_references, read_variants
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.job import JobRun, SkipCheck
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.shards import Shard, ShardOutputs, ShardResult, ShardTask, apply_limit
from jobs.common.runtime.summaries import finite, headline, min_bootstrap_clusters, records
from jobs.scorers.config import GOLD, ScorersConfig

JOB = "scorers"
DECISION_METRICS = ("em", "bleu_acc", "rouge1_acc", "rouge2_acc", "rougeLsum_acc")  # a 0/1 correctness decision per answer


@dataclass(frozen=True)
class AnswerSet:
    """What one system contributes: answers to vary (or ready variants), where they came from."""

    name: str
    kind: str  # "gold", "answers" or "variants"
    source: str
    table: pd.DataFrame
    skipped: pd.DataFrame


def _examples(variants: pd.DataFrame, k: int) -> dict[str, list[dict]]:
    cols = ["question_id", "original", "variant", "transformation", "reason"]
    return {status: variants[variants["status"] == status][cols].head(k).to_dict("records") for status in ("accepted", "rejected")}


class ScorersTask(ShardTask):
    """Generate, screen and score the variants of one shard's answers; parts go to the run directory."""

    local_rows = 2_000  # answers: BLEU/ROUGE scoring of every variant is the slow part (~1 ms per answer)

    def __init__(self, sets: list[AnswerSet], golds: dict[str, GoldReferences], config: SensitivityConfig, examples: int):
        self.sets = {s.name: s for s in sets}  # a shard names its answer set and questions; the rows travel once per worker
        self.golds, self.config, self.examples = golds, config, examples

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        answers = self.sets[shard.input]
        rows = shard_rows(answers.table, shard.items)
        source = f"{shard.source} (shard {shard.shard_id})"
        variants = rows if answers.kind == "variants" else generate_variants(rows, american_to_other(), self.config.variants, source)
        pairs = score_pairs(variants, self.golds, self.config.scorers, source)
        for name, frame in (("variants", variants), ("pairs", pairs)):
            if not frame.empty:
                table = pa.Table.from_pandas(frame, preserve_index=False)
                out.writer(name, table.schema, ("system", shard.input)).write(table)
        counts = variants.groupby(["transformation", "status"]).size()
        return ShardResult(rows_in=len(rows), partial={
            "n_answers": len(rows), "n_pairs": len(pairs), "variants": [[t, s, int(n)] for (t, s), n in counts.items()],
            "reasons": dict(Counter(r for r in variants["reason"] if r)), "examples": _examples(variants, self.examples)})


ID_FORM = ("each item's own id where the benchmark has one (DROP's query_id, ARC's id), else <file name up to its "
           "first dot>:<data row, from 0>")


def check_ids(table: pd.DataFrame, golds: dict[str, GoldReferences], source: str, benchmark: str) -> None:
    """``check_question_ids`` with what a user needs to fix the file: the form the ids take and real
    ids of the benchmark (and the id meant, when only its case differs)."""
    try:
        check_question_ids(table, golds, source)
    except ValueError as exc:
        unknown = next(str(q) for q in table["question_id"] if str(q) not in golds)
        meant = {q.lower(): q for q in golds}.get(unknown.lower())
        hint = f"did you mean {meant!r}? " if meant else ""
        examples = ", ".join(repr(q) for q in list(golds)[:2])
        raise ValueError(f"{exc}; {hint}question ids of benchmark {benchmark} are {ID_FORM}, e.g. {examples}") from None


def answer_sets(cfg: ScorersConfig, golds: dict[str, GoldReferences]) -> list[AnswerSet]:
    """Every answer set, each checked against the questions (unknown ids name file and row)."""
    bench = cfg.gold_benchmark
    none_skipped = pd.DataFrame(columns=["question_id", "reason"])
    sets = []
    for a in cfg.answer_files():
        assert a.id_column is not None and a.answer_column is not None, "answer_files() resolves both columns"
        table = read_answers(a.path, a.id_column, a.answer_column, bench.encoding)
        check_ids(table, golds, a.path, bench.name)
        sets.append(AnswerSet(a.name, "answers", a.path, table, none_skipped))
    if cfg.variants:
        table = read_variants(cfg.variants, bench.encoding)
        check_ids(table, golds, cfg.variants, bench.name)
        sets.append(AnswerSet("variants", "variants", cfg.variants, table, none_skipped))
    if not sets:
        gold = gold_answers_table(golds)
        sets.append(AnswerSet(GOLD, GOLD, f"gold answers of {bench.name}", gold.table, gold.skipped))
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
                raise ValueError(f"benchmark {cfg.gold_benchmark.name}: question {qid!r}: {err} "
                                 "(drop the truthfulqa scorer)") from err
            return [s for s in SCORERS if s != "truthfulqa"]
    return list(cfg.scorers or SCORERS)


def shard_rows(table: pd.DataFrame, questions: tuple[str, ...]) -> pd.DataFrame:
    """The answers of ``questions``, in the table's order."""
    return table[table["question_id"].astype(str).isin(set(questions))]


def plan_shards(sets: list[AnswerSet], shard_questions: int, config_key: str) -> list[Shard]:
    """Shards of whole questions; ids hash their rows, the config and the golds, so --resume reruns only changed ones."""
    shards = []
    for s in sets:
        questions = list(dict.fromkeys(str(q) for q in s.table["question_id"]))
        for i in range(0, len(questions), shard_questions):
            chunk = tuple(questions[i:i + shard_questions])
            rows = shard_rows(s.table, chunk).to_dict("records")
            content = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()
            shards.append(Shard(shard_id(s.name, content, s.kind, config_key), s.name, s.source, items=chunk,
                                expected_rows=len(rows)))
    return shards


def _read_pairs(job: JobRun, results: list[dict]) -> pd.DataFrame:
    parts = read_parts(job.path(), "pairs", [(r["shard_id"], ("system", r["input"])) for r in results if r["partial"]["n_pairs"]])
    return pd.concat([t.to_pandas() for _, t in parts], ignore_index=True) if parts else pd.DataFrame()


def _system_block(s: AnswerSet, results: list[dict], failed: list[dict], pairs: pd.DataFrame, cfg: ScorersConfig) -> dict:
    mine = [r for r in results if r["input"] == s.name]
    variants: dict[str, dict[str, int]] = {}
    reasons: Counter = Counter()
    examples: dict[str, list[dict]] = {"accepted": [], "rejected": []}
    for r in mine:
        for transformation, status, n in r["partial"]["variants"]:
            variants.setdefault(transformation, {"accepted": 0, "rejected": 0})[status] += n
        reasons.update(r["partial"]["reasons"])
        for status, found in r["partial"]["examples"].items():
            examples[status] += found[: cfg.examples - len(examples[status])]
    summary = summarize_sensitivity(pairs, cfg.bootstrap_config()) if not pairs.empty else pd.DataFrame()
    if not summary.empty:  # too few questions: the bootstrap has too few distinct resamples for an interval
        few = summary["n_questions"] < min_bootstrap_clusters(cfg.level)
        summary.loc[few, ["ci_low", "ci_high"]] = None
    return {
        "kind": s.kind, "source": s.source, "n_answers": len(s.table), "n_questions": int(s.table["question_id"].nunique()),
        "n_questions_with_pairs": int(pairs["question_id"].nunique()) if not pairs.empty else 0,
        "skipped": records(s.skipped), "variants": variants, "rejection_reasons": dict(reasons.most_common()),
        "sensitivity": records(summary), "examples": examples,
        "failed_shards": [{"file": f["file"], "error": f["error"]} for f in failed if f["input"] == s.name],
    }


def _headline(benchmark: str, table: list[dict]) -> list[dict]:
    """Per answer set and scorer metric: the paired difference over all transformations (with its
    interval) and, for correctness decisions, the share flipped."""
    rows = []
    for r in table:
        name = f"{benchmark}:{r['system']}"
        rows.append(headline(name, f"{r['scorer']}.{r['metric']}.difference", r["mean_difference"], (r["ci_low"], r["ci_high"])))
        if r["metric"] in DECISION_METRICS:
            rows.append(headline(name, f"{r['scorer']}.{r['metric']}.changed", r["share_changed"]))
    return rows


def run(cfg: ScorersConfig, opts: RunOptions) -> str:
    """Run the scorer-sensitivity audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        bench = cfg.gold_benchmark
        spec = bench.to_spec()
        golds = read_gold_references(spec)
        sets = answer_sets(cfg, golds)
        scorers = default_scorers(cfg, sets, golds)
        protected = tuple(DEFAULT_PROTECTED_NAMES) + tuple(read_name_list(cfg.protected_names) if cfg.protected_names else ())
        answer_files = [a.path for a in cfg.answers] + ([cfg.variants] if cfg.variants else [])
        inputs = [file_ref(u) for u in benchmark_files(spec) + answer_files]
    # Input identity lives in the shard ids (a hash of each shard's rows), not in this hash: a
    # resumed run may see a repaired answer file and reruns exactly the shards that changed.
    payload = {"config": cfg.model_dump(), "scorers": scorers, "protected_names": protected,
               "inventory_sha256": inventory_sha256(), "on_error": opts.on_error}
    golds_key = hashlib.sha256(repr(sorted(golds.items())).encode()).hexdigest()  # gold files may be repaired between attempts
    shards = apply_limit(plan_shards(sets, cfg.shard_rows, json.dumps(payload, sort_keys=True, default=str) + golds_key),
                         cfg.limit)
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer, use_ray="scan") as job:
        scan = job.scan(shards, ScorersTask(sets, golds, cfg.sensitivity(scorers, protected), cfg.examples))
        with job.timer("aggregate"):
            ok = scan.ok  # plan order: the bootstrap numbers questions by first appearance, as one pass would
            pairs = _read_pairs(job, ok)
            systems = {s.name: _system_block(s, ok, scan.failed, pairs[pairs["system"] == s.name] if not pairs.empty else pairs,
                                             cfg) for s in sets}
            keys = ("scorer", "metric", "n_pairs", "n_questions", "mean_original", "mean_variant", "mean_difference",
                    "ci_low", "ci_high", "share_changed")
            table = [{"system": name, **{k: row[k] for k in keys}}
                     for name, block in systems.items() for row in block["sensitivity"] if row["transformation_type"] == "all"]
            summary = {"job": JOB, "run_id": job.run_id,
                       "benchmark": {"name": bench.name, "files": benchmark_files(spec), "n_questions": len(golds)},
                       "scorers": scorers, "transformations": cfg.transformations,
                       "bootstrap": {"replicates": cfg.bootstrap, "seed": cfg.seed, "level": cfg.level, "clusters": "question_id"},
                       "min_questions_for_interval": min_bootstrap_clusters(cfg.level),
                       "table": [{k: finite(v) for k, v in row.items()} for row in table],
                       "headline": _headline(bench.name, table), "systems": systems}
            for name, block in systems.items():  # every (scorer, metric, transformation) row: the report shows a few
                if block["sensitivity"]:
                    job.write_table("sensitivity", pd.DataFrame(block["sensitivity"]), ("system", name))
        from jobs.scorers.report import render_scorers_report  # presentation only: kept out of the workers

        rows_in = scan.rows_in()
        multi_span = sum(len(s.skipped) for s in sets)  # left out by design (no single gold string), not bad input
        return job.finish(
            summary, render_scorers_report, skips=SkipCheck(rows_in, rows_in, 0, 0, scan.failed),
            inputs={"fingerprint": fingerprint(inputs), "files": [f.url for f in inputs]},
            inventory={"sha256": inventory_sha256()},
            rows={"in": rows_in, "out": rows_in, "skipped_by_reason": scan.skipped(), "unread": 0,
                  "excluded": {"multi_span_gold": multi_span} if multi_span else {}, "pairs": len(pairs)},
        )
