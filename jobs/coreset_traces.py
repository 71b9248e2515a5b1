"""``benchaudit coreset traces``: an outcome-stratified audit of reasoning traces.

Wiring only: ``connectors.traces`` reads the rubric, the traces and the ratings (and, when verdicts
come from a design, ``connectors.designs`` and ``connectors.predictions`` read those);
``audit.sampling.traces`` checks the rubric steps and draws the outcome-stratified sample;
``audit.sampling.agreement`` measures agreement between raters. Runs on the driver without Ray:
the traces of a coreset are thousands of rows, and regex checks on them cost less than starting Ray.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.sampling.agreement import fleiss_kappa, pairwise_cohen_kappa, rating_counts
from audit.sampling.traces import outcome_stratified_sample, rubric_passes, trace_audit
from connectors.designs import read_design
from connectors.predictions import PredictionColumns, read_all_predictions
from connectors.traces import (
    Rubric,
    TraceColumns,
    Traces,
    join_verdicts,
    read_ratings,
    read_rubric,
    read_traces,
)
from jobs.config import RunOptions, config_hash
from jobs.coreset_estimate import PredictorConfig
from jobs.manifest import StageTimer, base_manifest
from jobs.rundir import RunDir, write_json, write_text
from jobs.summaries import records

JOB = "coreset-traces"


class TracesConfig(BaseModel):
    """A rubric, the traces, where their verdicts come from, optional ratings, and the sample to draw."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rubric: str
    traces: list[str] = Field(min_length=1)
    id_column: str = "id"
    model_column: str = "model"
    trace_column: str = "trace"
    verdict_column: str | None = None
    design: str | None = None
    predictors: list[PredictorConfig] = Field(default_factory=list)
    prediction_column: str = "prediction"
    ratings: str | None = None
    rater_columns: list[str] | None = None
    per_outcome: int = Field(20, ge=1)
    seed: int = Field(0, ge=0, lt=2**64)

    @model_validator(mode="after")
    def _checks(self) -> TracesConfig:
        joined = self.design is not None or bool(self.predictors)
        if self.verdict_column and joined:
            raise ValueError("verdicts come either from --verdict-column or from --design with --predictions, not both")
        if not self.verdict_column and not (self.design and self.predictors):
            raise ValueError("verdicts: give --verdict-column, or --design together with --predictions")
        names = [p.name for p in self.predictors]
        if len(set(names)) != len(names):
            raise ValueError(f"predictor names must be unique, got {names}")
        return self

    def columns(self) -> TraceColumns:
        return TraceColumns(self.id_column, self.model_column, self.trace_column, self.verdict_column)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _verdicts(cfg: TracesConfig, traces: Traces) -> tuple[np.ndarray, dict]:
    """Correct/incorrect per trace, and the inputs it came from (for the manifest and the hash)."""
    if cfg.verdict_column:
        return traces.correct, {}
    design, _, design_files = read_design(cfg.design)
    predictors = read_all_predictions([(p.name, p.paths) for p in cfg.predictors],
                                      PredictionColumns(cfg.id_column, cfg.prediction_column), missing="negative")
    correct = join_verdicts(traces, design, predictors, cfg.columns(), cfg.design)
    return correct, {"design": {f.url: f.stamp for f in design_files},
                     "predictions": {p.name: p.fingerprint for p in predictors}}


def _audit(traces: Traces, correct: np.ndarray, rubric: Rubric) -> pd.DataFrame:
    """``trace_audit`` per model (rows: model x step): models differ in how they reason, so never pooled."""
    tables = []
    for model in sorted(set(traces.models)):
        rows = np.flatnonzero(traces.models == model)
        table = trace_audit([traces.texts[i] for i in rows], correct[rows], rubric.steps)
        table.insert(0, "model", model)
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


def _sample(traces: Traces, correct: np.ndarray, passes: pd.DataFrame, per_outcome: int, seed: int) -> pd.DataFrame:
    """Up to ``per_outcome`` correct and incorrect traces per model, by seeded hash key, with their step results."""
    picks = []
    for model in sorted(set(traces.models)):
        rows = np.flatnonzero(traces.models == model)
        picks.append(rows[outcome_stratified_sample(traces.ids[rows], correct[rows], per_outcome, seed)])
    take = np.concatenate(picks)
    frame = pd.DataFrame({"model": traces.models[take], "id": traces.ids[take],
                          "verdict": np.where(correct[take], "correct", "incorrect"),
                          "trace": [traces.texts[i] for i in take]})
    steps = passes.iloc[take].reset_index(drop=True).add_prefix("pass_")  # a step may be called "model" or "id"
    return pd.concat([frame, steps], axis=1)


def _agreement(ratings: pd.DataFrame) -> tuple[dict, pd.DataFrame]:
    counts, categories = rating_counts(ratings)
    pairwise = pairwise_cohen_kappa(ratings)
    return {"raters": list(ratings.columns), "subjects": len(ratings), "categories": categories,
            "fleiss_kappa": _number(fleiss_kappa(counts)), "pairwise_cohen": records(pairwise)}, pairwise


def run(cfg: TracesConfig, opts: RunOptions) -> str:
    """Audit the traces against the rubric; returns the final run directory."""
    timer = StageTimer()
    with timer("read"):
        rubric = read_rubric(cfg.rubric)
        traces = read_traces(cfg.traces, cfg.columns())
        correct, joined = _verdicts(cfg, traces)
        ratings = read_ratings(cfg.ratings, cfg.id_column, cfg.model_column, cfg.rater_columns, traces) if cfg.ratings else None
    inputs = {"rubric": {rubric.file.url: rubric.file.stamp}, "traces": traces.fingerprint, **joined,
              "ratings": {ratings[1].url: ratings[1].stamp} if ratings else None}
    payload = {"config": cfg.model_dump(), "inputs": inputs}
    chash = config_hash(payload)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    with timer("audit"):
        audit = _audit(traces, correct, rubric)
        sample = _sample(traces, correct, rubric_passes(traces.texts, rubric.steps), cfg.per_outcome, cfg.seed)
        agreement, pairwise = _agreement(ratings[0]) if ratings else (None, None)
    models = {}
    for model in sorted(set(traces.models)):
        mine = traces.models == model
        models[model] = {"traces": int(mine.sum()), "correct": int((correct & mine).sum()),
                         "incorrect": int((~correct & mine).sum())}
    summary = {
        "job": JOB, "run_id": run_dir.run_id, "traces": len(traces.ids), "models": models,
        "verdict_source": f"column {cfg.verdict_column!r}" if cfg.verdict_column else f"design {cfg.design} and predictions",
        "rubric": {"file": rubric.file.url, "description": rubric.description,
                   "steps": [{"name": s.name, "pattern": s.pattern, "ignore_case": s.ignore_case} for s in rubric.steps]},
        "traces_without_text": sum(t is None for t in traces.texts), "audit": records(audit),
        "sample": {"per_outcome": cfg.per_outcome, "seed": cfg.seed, "rows": len(sample),
                   "by_model": {m: {v: int(n) for v, n in g["verdict"].value_counts().sort_index().items()}
                                for m, g in sample.groupby("model")}},
        "agreement": agreement,
        "skipped": {} if ratings else {"agreement": "no --ratings file"},
    }
    with timer("write"):
        write_text(run_dir.path("trace_audit.csv"), audit.to_csv(index=False))
        write_text(run_dir.path("trace_sample.csv"), sample.to_csv(index=False))
        if pairwise is not None:
            write_text(run_dir.path("agreement.csv"), pairwise.to_csv(index=False))
        write_json(run_dir.path("summary.json"), summary)
        from jobs.report_traces import render_traces_report

        write_text(run_dir.path("report.html"), render_traces_report(summary))
    manifest = base_manifest(JOB, run_dir.run_id, cfg, opts, chash, cfg.seed, timer,
                             {"address": None, "note": "runs on the driver without Ray: traces and ratings are small"})
    manifest.update({
        "inputs": {"rubric": rubric.file.url, "traces": {"files": [f.url for f in traces.files],
                                                         "fingerprint": traces.fingerprint},
                   **joined, "ratings": ratings[1].url if ratings else None},
        "seeds": {"sample_seed": cfg.seed},
        "rows": {"in": len(traces.ids), "out": len(sample), "skipped_by_reason": {},
                 "without_text_passing_no_step": summary["traces_without_text"]},
        "timings": {**timer.seconds, "wall_s": timer.wall()},
    })
    write_json(run_dir.path("manifest.json"), manifest)
    return run_dir.commit()
