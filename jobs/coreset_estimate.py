"""``benchaudit coreset estimate``: full-table metrics of models scored only on a coreset.

Wiring only: ``connectors.designs`` reads the design a build wrote, ``connectors.predictions``
reads each predictor's files, ``audit.sampling`` aligns, estimates and contrasts, and
``jobs.coreset_diagnostics`` adds recall and macro-F1 by group and the failure taxonomy. Runs on the
driver without Ray: a design is small by construction (a few thousand to a few hundred thousand
rows), and reading it plus the predictions costs less than starting Ray.
"""
from __future__ import annotations

from dataclasses import asdict
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.sampling import strata as st
from audit.sampling.design import DesignManifest
from audit.sampling.diagnostics import failure_taxonomy
from audit.sampling.estimate import (
    SPARSE_COUNT,
    StrataSample,
    estimate,
    ht_confusion,
    paired_contrast,
    sparse_strata,
    strata_sample,
)
from audit.sampling.metrics import METRICS
from audit.sampling.validate import align_predictions
from connectors.designs import read_design
from connectors.predictions import PredictionColumns, Predictions, read_all_predictions
from jobs.config import RunOptions, config_hash
from jobs.coreset_diagnostics import diagnose
from jobs.manifest import StageTimer, base_manifest
from jobs.rundir import RunDir, write_json, write_parquet, write_text
from jobs.summaries import records

JOB = "coreset-estimate"


class PredictorConfig(BaseModel):
    """One model (or prompt variant): its name in the report and its prediction files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    paths: list[str] = Field(min_length=1)


class EstimateConfig(BaseModel):
    """A design (a build run directory) and the predictors to evaluate on it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    design: str
    predictors: list[PredictorConfig] = Field(min_length=1)
    id_column: str = "id"
    prediction_column: str = "prediction"
    run_column: str | None = None
    group_column: str | None = None
    response_column: str | None = None
    missing: Literal["error", "negative"] = "error"
    alpha: float = Field(0.05, gt=0, lt=1)
    metrics: list[str] = Field(default_factory=lambda: list(METRICS))

    @model_validator(mode="after")
    def _checks(self) -> EstimateConfig:
        names = [p.name for p in self.predictors]
        if len(set(names)) != len(names):
            raise ValueError(f"predictor names must be unique, got {names}")
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown or not self.metrics:
            raise ValueError(f"metrics must be a non-empty subset of {list(METRICS)}, got {self.metrics}")
        return self

    def columns(self) -> PredictionColumns:
        return PredictionColumns(self.id_column, self.prediction_column, self.run_column, self.group_column,
                                 self.response_column)


def evaluate(cfg: EstimateConfig, design: pd.DataFrame, manifest: DesignManifest,
             predictors: list[Predictions]) -> tuple[pd.DataFrame, pd.DataFrame, dict, pd.DataFrame]:
    """Estimates (one row per predictor and metric), paired contrasts, per-predictor details, failure taxonomy."""
    samples: dict[str, StrataSample] = {}
    rows, details, categories = [], {}, {}
    for pred in predictors:
        order = align_predictions(design["id"].to_numpy(), pred.ids, np.arange(len(pred.ids)), cfg.id_column, pred.source)
        aligned = pred.values[order]
        s = strata_sample(design, manifest, aligned, pred.source, run_columns=pred.runs)
        samples[pred.name] = s
        table = estimate(s, cfg.alpha, tuple(cfg.metrics))
        table.insert(0, "predictor", pred.name)
        rows.append(table)
        diagnostics = diagnose(design, manifest, pred, order)
        if diagnostics.categories is not None:
            categories[pred.name] = diagnostics.categories
        details[pred.name] = {
            "source": pred.source, "runs": list(pred.runs), "missing_counted_negative": pred.missing_as_negative,
            "confusion": records(ht_confusion(s)), "sparse_strata": sparse_strata(s, manifest.strata),
            **diagnostics.tables, "diagnostics_skipped": diagnostics.skipped,
        }
    contrasts = [
        {"a": a, "b": b, **asdict(paired_contrast(samples[a], samples[b], metric, cfg.alpha))}
        for a, b in combinations(samples, 2) for metric in cfg.metrics
    ]
    return pd.concat(rows, ignore_index=True), pd.DataFrame(contrasts), details, failure_taxonomy(categories)


def run(cfg: EstimateConfig, opts: RunOptions) -> str:
    """Estimate every predictor on the design; returns the final run directory."""
    timer = StageTimer()
    with timer("read"):
        design, manifest, design_files = read_design(cfg.design, need_group=cfg.group_column is not None)
        predictors = read_all_predictions([(p.name, p.paths) for p in cfg.predictors], cfg.columns(), cfg.missing)
    payload = {"config": cfg.model_dump(), "design": {f.url: f.stamp for f in design_files},
               "predictions": {p.name: p.fingerprint for p in predictors}}
    chash = config_hash(payload)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    with timer("estimate"):
        estimates, contrasts, details, taxonomy = evaluate(cfg, design, manifest, predictors)
    n_total, n_pos = int(sum(manifest.population)), int(manifest.population[st.POSITIVE])
    summary = {
        "job": JOB, "run_id": run_dir.run_id, "design": cfg.design, "alpha": cfg.alpha,
        "targets": n_total, "positives": n_pos, "prevalence": n_pos / n_total, "coreset_rows": len(design),
        "strata": [{"stratum": s, "population": int(big_n), "sample": int(n)}
                   for s, big_n, n in zip(manifest.strata, manifest.population, manifest.sample)],
        "estimates": records(estimates), "contrasts": records(contrasts), "predictors": details,
        "failure_taxonomy": records(taxonomy), "sparse_count": SPARSE_COUNT,
    }
    with timer("write"):
        write_parquet(run_dir.path("estimates.parquet"), pa.Table.from_pandas(estimates, preserve_index=False))
        write_text(run_dir.path("estimates.csv"), estimates.to_csv(index=False))
        if len(contrasts):
            write_text(run_dir.path("contrasts.csv"), contrasts.to_csv(index=False))
        if len(taxonomy):
            write_text(run_dir.path("failure_taxonomy.csv"), taxonomy.to_csv(index=False))
        write_json(run_dir.path("summary.json"), summary)
        from jobs.report_coreset import render_estimate_report

        write_text(run_dir.path("report.html"), render_estimate_report(summary))
    manifest_json = base_manifest(JOB, run_dir.run_id, cfg, opts, chash, manifest.seed, timer,
                                  {"address": None, "note": "runs on the driver: the design is small"})
    manifest_json.update({
        "inputs": {"design": {"run_dir": cfg.design, "files": [f.url for f in design_files],
                              "stamps": [f.stamp for f in design_files]},
                   "predictions": {p.name: {"files": [f.url for f in p.files], "fingerprint": p.fingerprint,
                                            "runs": list(p.runs)} for p in predictors}},
        "seeds": {"design_seed": manifest.seed},
        "rows": {"in": {p.name: int(p.values.size) for p in predictors}, "out": len(estimates),
                 "skipped_by_reason": {"missing_prediction_counted_negative": sum(p.missing_as_negative for p in predictors)}},
        "timings": {**timer.seconds, "wall_s": timer.wall()},
    })
    write_json(run_dir.path("manifest.json"), manifest_json)
    return run_dir.commit()
