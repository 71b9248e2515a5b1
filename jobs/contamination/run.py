"""``benchaudit contamination``: routers, a worker, and models that beat their own clean baseline.

Wiring only. The driver reads the benchmark and draws the sample (``audit.mcqa.sample``, the draw every MCQA audit shares),
plans every call (``audit.contamination.plan``), then runs two steps through ``model_stage`` (Ray
Data actor pools, every call through the response cache under ``--cache``): all router calls, one
stage per router model; then, from their outputs, the worker calls, one stage per worker model
(the worker sees only the aggregated router outputs). Cells whose router output failed, timed
out or came back empty make no worker call; every cell lands in the outcome table with its
category, and ``audit.contamination.analysis.analyse`` turns the table into every statistic.
``--outcomes`` skips the models: the same analysis of a table read from Parquet or CSV.

Every answer is counted on the driver as it comes back (``jobs.common.models.answers``: progress with cache
hits against calls, per model and role). A failed or timed-out call, an empty router output and an
unparsable worker answer are unusable answers, counted by reason against ``--max-skipped``: a model
stage stops as soon as the run can no longer meet it, and a run over it fails after writing its
report (which says why) to the partial folder; a run within it shows them on the terminal.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa

from audit.contamination.analysis import ContaminationSummary, analyse
from audit.contamination.answers import STATUSES
from audit.contamination.plan import Call, CallPlan, ModelRoles, PlanConfig, plan_calls
from audit.contamination.prompts import PromptSet
from audit.mcqa.items import McqaItem
from audit.mcqa.sample import Sample, draw_sample
from connectors.benchmarks.read import iter_benchmark_batches
from connectors.contamination.outcomes import read_outcomes
from connectors.io.read_report import ReadReport
from jobs.common.cli.config import RunOptions
from jobs.common.models.answers import Skips
from jobs.common.models.pool import response_cache_root
from jobs.common.models.step import ModelSteps
from jobs.common.runtime.errors import JobError
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.shards import limited
from jobs.common.runtime.summaries import headline
from jobs.contamination.calls import (
    WorkerStep,
    call_accounting,
    call_rows,
    empty_answers,
    outcome_frame,
    results_of,
    stored_calls,
    unusable,
    worker_step,
)
from jobs.contamination.config import ContaminationConfig

JOB = "contamination"
Generate = Callable[[Sequence[Call]], pa.Table]
STATUS_MEANINGS = {
    "answered": "the worker named one valid letter (scored)",
    "unparsable": "the worker replied without one valid letter (scored as wrong)",
    "empty_router": "a router output the cell needs was empty: no worker call, not scored",
    "failed": "a router or worker call failed: not scored",
    "timeout": "a router or worker call timed out: not scored",
    "no_options": "the item cannot be asked as multiple choice: not scored",
}
assert set(STATUS_MEANINGS) == set(STATUSES)


@dataclass(frozen=True, eq=False)
class ModelRun:
    """What the two model steps produced: the plan, the worker step, both answered tables and the outcomes."""

    plan: CallPlan
    step: WorkerStep
    routers: pa.Table
    workers: pa.Table
    outcomes: pd.DataFrame


def ray_generate(cfg: ContaminationConfig, steps: ModelSteps, items: Mapping[str, McqaItem]) -> Generate:
    """Calls -> answered rows: one shared model step (``jobs.common.models.step``) per model, its rows split into
    blocks of ``--batch-size`` (one block per batch, so the pool's actors share the work and every batch is
    counted, with progress, as it comes back). A reply is judged against its item's options (``unusable``)."""
    def generate(calls: Sequence[Call]) -> pa.Table:
        import ray

        if calls and calls[0].role == "worker":  # the worker calls are known now: the budget's plan becomes exact
            steps.budget.planned = steps.budget.counted + len(calls)
        tables = [empty_answers()]
        for model in dict.fromkeys(c.model for c in calls):
            mine = [c for c in calls if c.model == model]
            rows, stage = call_rows(mine), cfg.model_stage(model)
            blocks = [rows.slice(i, stage.batch_size) for i in range(0, rows.num_rows, stage.batch_size)]
            what = f"{mine[0].role} calls of {model}"
            got = steps.answer(ray.data.from_arrow(blocks), stage, "generate", what=what, expected=len(mine),
                               reasons=lambda b: unusable(b, items), empty=empty_answers(), named=f"{JOB}: {what}",
                               key=f"{mine[0].role} {model}")
            position = {c.key: i for i, c in enumerate(mine)}  # batches come back in any order: put them in call order
            keys = got.column("id").to_pylist()
            tables.append(got.take(sorted(range(got.num_rows), key=lambda i: position[keys[i]])))
        return pa.concat_tables(tables, promote_options="default")

    return generate


def _read_sample(cfg: ContaminationConfig, opts: RunOptions) -> tuple[Sample, ReadReport, dict]:
    bench = cfg.benchmark_configs()[0]
    spec = bench.to_spec()
    report = ReadReport(source=", ".join(bench.paths))
    batches = iter_benchmark_batches(spec, on_bad_row="skip" if opts.on_error == "skip" else "raise", report=report)
    sample = draw_sample(limited(batches, cfg.limit), cfg.sample, cfg.seed)
    return sample, report, {"name": bench.name, "preset": bench.preset, "paths": bench.paths}


def run_models(items: Sequence[McqaItem], roles: Sequence[ModelRoles], prompts: PromptSet, config: PlanConfig, generate: Generate,
               timer: StageTimer, plan: CallPlan | None = None) -> ModelRun:
    """Routers, then workers (from the router outputs), then the outcome table (``plan``: the calls of
    ``plan_calls``, when the caller made it already)."""
    by_id = {item.id: item for item in items}
    plan = plan or plan_calls(items, roles, prompts, config)
    with timer("routers"):
        routers = generate(plan.router_calls) if plan.router_calls else empty_answers()
    step = worker_step(plan, by_id, results_of(routers), prompts, config)
    with timer("workers"):
        workers = generate(step.calls) if step.calls else empty_answers()
    return ModelRun(plan, step, routers, workers, outcome_frame(step, by_id, results_of(workers)))


def overview(s: ContaminationSummary) -> dict:
    """The run at a glance, for the report's header and people (per r lists are r = 1..M in order)."""
    per_r = s.per_r
    unscored = sum(v for k, v in s.status_totals.items() if k not in ("answered", "unparsable"))
    trend = s.trend
    return {
        "models": len(s.models), "n_questions": s.n_questions, "m": s.m,
        "models_above_baseline_per_r": [int(v) for v in per_r["n_violators"]],
        "models_significantly_above_baseline_per_r": [int(v) for v in per_r["n_significant"]],
        "models_with_cell_per_r": [int(v) for v in per_r["n_models"]],
        "mean_positive_excess_over_violators_per_r": [_num(v) for v in per_r["mean_excess_violators"]],
        "mean_positive_excess_over_all_models_per_r": [_num(v) for v in per_r["mean_excess_all_models"]],
        "improve_per_r": [int(v) for v in per_r["improve"]], "degrade_per_r": [int(v) for v in per_r["degrade"]],
        "reversal": s.reversal,
        "trend_slope": None if trend is None else trend.slope,
        "trend_interval": None if trend is None else [trend.low, trend.high],
        "trend_excludes_zero": None if trend is None else trend.excludes_zero,
        "cells_above_baseline_point_estimate": s.significance()["above_baseline_point_estimate"],
        "cells_significantly_above_baseline": s.significance()["significant_above_baseline"],
        "unscored_cells": unscored, "unparsable_cells": s.status_totals["unparsable"], "missing_cells": len(s.missing),
        "identity_max_residual": s.identity_max_residual,
    }


def _num(value: float) -> float | None:
    return None if pd.isna(value) else float(value)


def headline_rows(s: ContaminationSummary) -> list[dict]:
    """The metrics a re-audit tracks, as tidy rows: per r over all models, per model, and the trend."""
    rows = []
    for r in s.per_r.to_dict("records"):
        rows += [headline("all", f"models_above_baseline@r={int(r['r'])}", int(r["n_violators"])),
                 headline("all", f"models_significantly_above_baseline@r={int(r['r'])}", int(r["n_significant"])),
                 headline("all", f"mean_positive_excess_violators@r={int(r['r'])}", _num(r["mean_excess_violators"])),
                 headline("all", f"mean_positive_excess_all_models@r={int(r['r'])}", _num(r["mean_excess_all_models"]))]
    for m in s.per_model.to_dict("records"):
        rows += [headline(m["model"], "clean_accuracy", _num(m["clean_accuracy"])),
                 headline(m["model"], "violation_breadth", int(m["breadth"])),
                 headline(m["model"], "settings_significantly_above_baseline", int(m["significant_above_baseline"])),
                 headline(m["model"], "mean_excess", _num(m["mean_excess"]))]
    if s.trend is not None:
        rows.append(headline("all", "trend_improve_minus_degrade_per_r", s.trend.slope, (s.trend.low, s.trend.high)))
    return rows


def summary_of(s: ContaminationSummary, run_id: str, mode: str, cfg: ContaminationConfig, extra: dict) -> dict:
    """summary.json: ``headline``, ``table`` (level vs credibility per model), then every block of the analysis."""
    body = s.to_dict()
    table = body.pop("level_vs_credibility")
    return {"job": JOB, "run_id": run_id, "mode": mode, "overview": overview(s), "headline": headline_rows(s), "table": table, **body,
            "status_meanings": STATUS_MEANINGS,
            "bootstrap": {"replicates": cfg.bootstrap, "seed": cfg.seed, "level": cfg.level}, **extra}


def _write_results(job: JobRun, summary: dict) -> None:
    from jobs.contamination.report import render_contamination_report  # presentation only

    job.write_table("cells", pd.DataFrame(summary["cells"]))  # model x r statistics, for loading and re-audit diffs
    job.write_summary(summary)
    job.write_text("report.html", render_contamination_report(summary, job.report_info()))


def run(cfg: ContaminationConfig, opts: RunOptions) -> str:
    """Run the audit (or, with ``--outcomes``, the re-analysis); returns the final run directory."""
    return reanalyse(cfg, opts) if cfg.outcomes else audit(cfg, opts)


def audit(cfg: ContaminationConfig, opts: RunOptions) -> str:
    timer = StageTimer()
    with timer("plan"):
        prompts = cfg.prompt_set()
        sample, read, benchmark = _read_sample(cfg, opts)
    payload = {"config": cfg.hashed(), "prompts": prompts.manifest(), "sample": list(sample.ids), "on_error": opts.on_error}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer) as job:
        cache = response_cache_root(cfg.cache, opts.out)
        by_id = {item.id: item for item in sample.items}
        plan = plan_calls(sample.items, cfg.roles(), prompts, cfg.plan_config())
        # every router call, and at most one worker call per cell: the budget's plan until the worker calls are known.
        # --on-error is always "fail" for a model: every cell needs its router and its worker, and a model left
        # out would change the design the statistics assume.
        steps = ModelSteps.of(job, len(plan.router_calls) + len(plan.worker_tasks), cache, on_error="fail")
        try:
            done = run_models(sample.items, cfg.roles(), prompts, cfg.plan_config(), ray_generate(cfg, steps, by_id), timer, plan)
        except JobError:  # a model stage stopped: what was counted goes in the partial folder's manifest
            job.write_json("manifest.json", job.manifest(mode="models", model_calls=steps.manifest()))
            raise
        with job.timer("analyse"):
            job.write_table("outcomes", done.outcomes)  # a table --outcomes reads back as it is
            job.write_table("calls", stored_calls(pa.concat_tables([done.routers, done.workers])))
            s = analyse(done.outcomes, m=cfg.max_routers, alpha=cfg.alpha(), bootstrap=cfg.bootstrap_config(), source="outcomes")
            accounting = call_accounting(done.routers, done.workers, done.step, by_id)
            design = {"m": cfg.max_routers, "design": cfg.plan_config().design, "planned": done.plan.counts(),
                      "models": [{"worker": r.worker, "router": r.router_model} for r in cfg.roles()]}
            summary = summary_of(s, job.run_id, "models", cfg, {
                "design": design, "sample": {k: v for k, v in sample.manifest().items() if k != "ids"}, "benchmark": benchmark,
                "prompts": prompts.manifest(), "calls": accounting})
        with job.timer("report"):
            _write_results(job, summary)
        rows_in = sample.population + read.rows_skipped
        models = dict.fromkeys(m for r in cfg.roles() for m in (r.worker, r.router_model))
        manifest = job.manifest(
            mode="models", benchmark={**benchmark, "read": read.to_json()}, sample=sample.manifest(), prompts=prompts.manifest(),
            design={**design, "plan": _plan_manifest(cfg)}, model_settings={m: cfg.settings_for(m) for m in models},
            calls=accounting, model_calls=steps.manifest(), cache=cache,
            rows={"in": rows_in, "out": sample.n, "skipped_by_reason": read.skipped_by_reason, "unread": read.unread_rows},
            outputs={"outcomes": "data/outcomes/", "calls": "data/calls/"},
        )
        answers = done.routers.num_rows + done.workers.num_rows
        skips = Skips.of(unusable(pa.concat_tables([done.routers, done.workers]), by_id))
        return job.commit_checked(manifest, skip_limits=lambda: job.check_skips(rows_in, sample.n, read.rows_skipped, read.unread_rows, []),
                          answer_limits=lambda: job.check_skips(answers, answers - skips.total, skips.total, 0, [],
                                                                reasons=skips, unit="model answers"))


def _plan_manifest(cfg: ContaminationConfig) -> dict:
    config = cfg.plan_config()
    return {"m": config.m, "design": config.design, "seed": config.seed, "clean_router": config.clean_router.as_dict(),
            "noisy_router": config.noisy_router.as_dict(), "worker": config.worker.as_dict()}


def reanalyse(cfg: ContaminationConfig, opts: RunOptions) -> str:
    """``--outcomes``: the statistics and report of an outcome table; no Ray, no model call."""
    timer = StageTimer()
    with timer("read"):
        table = read_outcomes(cfg.outcomes, cfg.outcome_columns())
    m = cfg.max_routers if "max_routers" in cfg.model_fields_set else None
    payload = {"config": cfg.hashed(), "outcomes": table.fingerprint}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer, use_ray=False) as job:
        with job.timer("analyse"):
            s = analyse(table.frame, m=m, alpha=cfg.alpha(), bootstrap=cfg.bootstrap_config(), source=table.source)
            summary = summary_of(s, job.run_id, "outcomes", cfg, {"outcomes": {"source": table.source, "rows": len(table.frame),
                                                                                "fingerprint": table.fingerprint}})
        with job.timer("report"):
            _write_results(job, summary)
        manifest = job.manifest(mode="outcomes", outcomes={"files": [f.url for f in table.files], "fingerprint": table.fingerprint,
                                                           "rows": len(table.frame)},
                                calls={"router": {"calls": 0}, "worker": {"calls": 0}, "total": {"calls": 0}})
        return job.commit(manifest)
