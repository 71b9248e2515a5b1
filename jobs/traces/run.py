"""``benchaudit traces``: an outcome-stratified audit of reasoning traces.

Wiring only: ``connectors.traces`` reads the rubric, the traces and the ratings (and, when verdicts
come from a design, ``connectors.coreset.designs`` and ``connectors.coreset.predictions`` read those);
``audit.traces.rubric`` checks the rubric steps and draws the outcome-stratified sample;
``audit.stats.agreement`` measures agreement between raters. Runs on the driver without Ray:
the traces of a coreset are thousands of rows, and regex checks on them cost less than starting Ray.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from audit.stats.agreement import fleiss_kappa, pairwise_cohen_kappa, rating_counts
from audit.traces.rubric import outcome_stratified_sample, rubric_passes, trace_audit
from connectors.coreset.designs import read_design
from connectors.coreset.predictions import PredictionColumns, read_all_predictions
from connectors.io.markup import csv_frame
from connectors.traces import Rubric, Traces, join_verdicts, read_ratings, read_rubric, read_traces
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.summaries import finite, headline, records
from jobs.traces.config import TracesConfig

JOB = "traces"


def _verdicts(cfg: TracesConfig, traces: Traces) -> tuple[np.ndarray, dict]:
    """Correct/incorrect per trace, and the inputs it came from (for the manifest and the hash)."""
    if cfg.verdict_column:
        assert traces.correct is not None, "read_traces reads the --verdict-column"
        return traces.correct, {}
    assert cfg.design is not None, "TracesConfig requires --design without --verdict-column"
    design, _, design_files = read_design(cfg.design)
    predictors = read_all_predictions([(p.name, p.paths) for p in cfg.predictions],
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
            "fleiss_kappa": finite(fleiss_kappa(counts)), "pairwise_cohen": records(pairwise)}, pairwise


def _headline(summary: dict) -> list[dict]:
    """Per model: traces and, per rubric step, the pass-rate gap (correct minus incorrect); Fleiss' kappa."""
    rows = [headline(m, "traces", c["traces"]) for m, c in summary["models"].items()]
    rows += [headline(r["model"], f"{r['step']}.gap", r["gap"]) for r in summary["table"]]
    if summary["agreement"]:
        rows.append(headline("raters", "fleiss_kappa", summary["agreement"]["fleiss_kappa"]))
    return rows


def run(cfg: TracesConfig, opts: RunOptions) -> str:
    """Audit the traces against the rubric; returns the final run directory."""
    timer = StageTimer()
    with timer("read"):
        rubric = read_rubric(cfg.rubric)
        traces = read_traces(cfg.traces, cfg.columns())
        correct, joined = _verdicts(cfg, traces)
        ratings = read_ratings(cfg.ratings, cfg.id_column, cfg.model_column, cfg.rater_columns or None, traces) if cfg.ratings else None
    inputs = {"rubric": {rubric.file.url: rubric.file.stamp}, "traces": traces.fingerprint, **joined,
              "ratings": {ratings[1].url: ratings[1].stamp} if ratings else None}
    payload = {"config": cfg.model_dump(), "inputs": inputs}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer, use_ray=False) as job:
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
            "job": JOB, "run_id": job.run_id, "traces": len(traces.ids), "models": models,
            "verdict_source": f"column {cfg.verdict_column!r}" if cfg.verdict_column else f"design {cfg.design} and predictions",
            "rubric": {"file": rubric.file.url, "description": rubric.description,
                       "steps": [{"name": s.name, "pattern": s.pattern, "ignore_case": s.ignore_case} for s in rubric.steps]},
            "traces_without_text": sum(t is None for t in traces.texts), "table": records(audit),
            "sample": {"per_outcome": cfg.per_outcome, "seed": cfg.seed, "rows": len(sample),
                       "by_model": {m: {v: int(n) for v, n in g["verdict"].value_counts().sort_index().items()}
                                    for m, g in sample.groupby("model")}},
            "agreement": agreement,
            "skipped": {} if ratings else {"agreement": "no --ratings file"},
        }
        summary["headline"] = _headline(summary)
        with timer("write"):
            job.write_table("trace_audit", audit)
            job.write_table("sample", sample)
            job.write_text("trace_sample.csv", csv_frame(sample).to_csv(index=False))  # the sheet people read and rate
            if pairwise is not None:
                job.write_table("agreement", pairwise)
        from jobs.traces.report import render_traces_report

        return job.finish(
            summary, render_traces_report, files=("trace_sample.csv",),
            inputs={"rubric": rubric.file.url, "traces": {"files": [f.url for f in traces.files],
                                                          "fingerprint": traces.fingerprint},
                    **joined, "ratings": ratings[1].url if ratings else None},
            seeds={"sample_seed": cfg.seed},
            rows={"in": len(traces.ids), "out": len(sample), "skipped_by_reason": {},
                  "without_text_passing_no_step": summary["traces_without_text"]},
            ray={"address": None, "note": "runs on the driver without Ray: traces and ratings are small"},
        )
