"""``benchaudit coreset estimate``: full-table metrics of models scored only on a coreset.

Wiring only: ``connectors.coreset.designs`` reads the design a build wrote, ``connectors.coreset.predictions``
reads each predictor's files, ``audit.coreset`` aligns, estimates and contrasts, and
``jobs.coreset.diagnostics`` adds recall and macro-F1 by group and the failure taxonomy. Runs on the
driver without Ray: a design is small by construction (a few thousand to a few hundred thousand
rows), and reading it plus the predictions costs less than starting Ray.
"""
from __future__ import annotations

from dataclasses import asdict
from itertools import combinations

import numpy as np
import pandas as pd

from audit.coreset import strata as st
from audit.coreset.design import DesignManifest
from audit.coreset.diagnostics import failure_taxonomy
from audit.coreset.estimate import (
    SPARSE_COUNT,
    StrataSample,
    estimate,
    ht_confusion,
    paired_contrast,
    sparse_strata,
    strata_sample,
)
from audit.coreset.validate import align_predictions
from connectors.coreset.designs import read_design
from connectors.coreset.predictions import Predictions, read_all_predictions
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.summaries import headline, records
from jobs.coreset.config import EstimateConfig
from jobs.coreset.diagnostics import diagnose

JOB = "coreset-estimate"


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
        predictors = read_all_predictions([(p.name, p.paths) for p in cfg.predictions], cfg.columns(), cfg.missing)
    payload = {"config": cfg.model_dump(), "design": {f.url: f.stamp for f in design_files},
               "predictions": {p.name: p.fingerprint for p in predictors}}
    with timer("estimate"):  # before the run directory: predictions that do not cover the design fail here
        estimates, contrasts, details, taxonomy = evaluate(cfg, design, manifest, predictors)
    with JobRun(JOB, cfg, opts, payload, seed=manifest.seed, timer=timer, use_ray=False) as job:
        n_total, n_pos = int(sum(manifest.population)), int(manifest.population[st.POSITIVE])
        summary = {
            "job": JOB, "run_id": job.run_id, "design": cfg.design, "level": cfg.level, "alpha": cfg.alpha,
            "targets": n_total, "positives": n_pos, "prevalence": n_pos / n_total, "coreset_rows": len(design),
            "strata": [{"stratum": s, "population": int(big_n), "sample": int(n)}
                       for s, big_n, n in zip(manifest.strata, manifest.population, manifest.sample)],
            "table": records(estimates),
            "headline": [headline(r["predictor"], r["metric"], r["estimate"], (r["lower"], r["upper"])) for r in records(estimates)],
            "estimates": records(estimates), "contrasts": records(contrasts), "predictors": details,
            "failure_taxonomy": records(taxonomy), "sparse_count": SPARSE_COUNT,
        }
        with timer("write"):
            job.write_table("estimates", estimates)
            if len(contrasts):
                job.write_table("contrasts", contrasts)
            if len(taxonomy):
                job.write_table("failure_taxonomy", taxonomy)
        from jobs.coreset.report import render_estimate_report

        return job.finish(
            summary, render_estimate_report,
            inputs={"design": {"run_dir": cfg.design, "files": [f.url for f in design_files],
                               "stamps": [f.stamp for f in design_files]},
                    "predictions": {p.name: {"files": [f.url for f in p.files], "fingerprint": p.fingerprint,
                                             "runs": list(p.runs)} for p in predictors}},
            seeds={"design_seed": manifest.seed},
            rows={"in": {p.name: int(p.values.size) for p in predictors}, "out": len(estimates),
                  "skipped_by_reason": {"missing_prediction_counted_negative": sum(p.missing_as_negative for p in predictors)}},
            ray={"address": None, "note": "runs on the driver: the design is small"},
        )
