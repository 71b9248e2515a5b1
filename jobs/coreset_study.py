"""``benchaudit coreset study``: how close each sampler lands on full-table metrics, over K draws.

Wiring only: ``connectors.targets.read_full_table`` reads the label, score and prediction columns
(the study needs every row: the truth is the full-table metric), ``audit.sampling.study`` does the
science. The frozen protocol (samplers, K, budgets, seeds, inputs) is written to the run directory
before any draw is made; then each direction (strata from one scorer family, predictions from
another) runs as one Ray task, in parallel.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import ray
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.sampling import strata as st
from audit.sampling.allocation import negative_budget
from audit.sampling.study import (
    SAMPLERS,
    HeldOutCase,
    StudyConfig,
    run_study,
    study_protocol,
)
from audit.sampling.validate import require_budget, require_positive_count
from connectors.targets import FullTable, read_full_table
from jobs.config import RunOptions, config_hash
from jobs.manifest import StageTimer, base_manifest
from jobs.progress import Progress
from jobs.rundir import RunDir, write_json, write_parquet, write_text
from jobs.runtime import init_ray
from jobs.summaries import records

JOB = "coreset-study"


class DirectionConfig(BaseModel):
    """Strata built from one scorer family's columns, predictions from another family's runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    construction_scores: list[str] = Field(min_length=1)
    tau: float = Field(gt=0, lt=1)
    predictions: list[str] = Field(min_length=1)
    prediction_threshold: float | None = Field(None, gt=0, le=1)


class StudyJobConfig(BaseModel):
    """The table, the directions and the study protocol's knobs (fractions, not percentages)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    paths: list[str] = Field(min_length=1)
    format: Literal["parquet", "csv", "jsonl"] | None = None
    dataset: str = "targets"
    label_column: str = "label"
    directions: list[DirectionConfig] = Field(min_length=1)
    draws: int = Field(500, ge=2)
    budget_multipliers: list[float] = Field(default_factory=lambda: [2.0], min_length=1)
    samplers: list[str] = Field(default_factory=lambda: list(SAMPLERS))
    metrics: list[str] = Field(default_factory=lambda: ["precision", "recall", "f1"])
    hard_cut_fraction: float = 0.5
    hard_reserve_fraction: float = 0.3
    n_easy_strata: int = 3
    alpha: float = 0.05
    root_seed: int = 20260930

    @model_validator(mode="after")
    def _checks(self) -> StudyJobConfig:
        names = [d.name for d in self.directions]
        if len(set(names)) != len(names):
            raise ValueError(f"direction names must be unique, got {names}")
        self.study_config()  # StudyConfig raises a ValueError naming the field
        return self

    def study_config(self) -> StudyConfig:
        return StudyConfig(
            draws=self.draws, budget_multipliers=tuple(self.budget_multipliers), samplers=tuple(self.samplers),
            metrics=tuple(self.metrics), hard_cut_fraction=self.hard_cut_fraction,
            hard_reserve_fraction=self.hard_reserve_fraction, n_easy_strata=self.n_easy_strata, alpha=self.alpha,
            root_seed=self.root_seed,
        )


def _cases(cfg: StudyJobConfig, table: FullTable) -> list[HeldOutCase]:
    cases = []
    for d in cfg.directions:
        construction = st.ensemble_score(np.column_stack([table.scores[c] for c in d.construction_scores]))
        if d.prediction_threshold is None:
            preds = np.column_stack([table.predictions[c] for c in d.predictions])
        else:
            preds = np.column_stack([table.scores[c] >= d.prediction_threshold for c in d.predictions])
        cases.append(HeldOutCase(cfg.dataset, d.name, table.labels, construction, d.tau, preds))
    return cases


def _check_budgets(cfg: StudyJobConfig, table: FullTable) -> None:
    """Every budget must fit the negatives: fail before the protocol is written, naming the input."""
    n_pos = int(table.labels.sum())
    require_positive_count(n_pos, cfg.label_column, ", ".join(cfg.paths))
    for multiplier in cfg.budget_multipliers:
        require_budget(negative_budget(n_pos, multiplier), len(table.labels) - n_pos, ", ".join(cfg.paths))


@ray.remote
def _study_case(config: StudyConfig, case: HeldOutCase) -> tuple[pd.DataFrame, pd.DataFrame]:
    return run_study(config, [case])


def rmse_ranking(summary: pd.DataFrame, metric: str = "f1") -> list[dict]:
    """Per direction and budget: weighted samplers ordered by RMSE of ``metric`` (lowest first)."""
    rows = summary[(summary["metric"] == metric) & summary["sampler"].map(lambda s: SAMPLERS[s][1])]
    out = []
    for (direction, budget), group in rows.groupby(["direction", "budget_multiplier"], sort=False):
        ordered = group.sort_values("rmse")
        out.append({"direction": direction, "budget_multiplier": budget, "metric": metric,
                    "order": ordered["sampler"].tolist(), "rmse": ordered["rmse"].tolist()})
    return out


def run(cfg: StudyJobConfig, opts: RunOptions) -> str:
    """Write the protocol, run the study, write the sampler-study table; returns the run directory."""
    timer = StageTimer()
    with timer("read"):
        scores = list(dict.fromkeys(c for d in cfg.directions for c in d.construction_scores))
        scores += [c for d in cfg.directions if d.prediction_threshold is not None for c in d.predictions if c not in scores]
        binary = list(dict.fromkeys(c for d in cfg.directions if d.prediction_threshold is None for c in d.predictions))
        table = read_full_table(cfg.paths, cfg.label_column, scores, binary, cfg.format)
        cases = _cases(cfg, table)
        _check_budgets(cfg, table)
    config = cfg.study_config()
    payload = {"config": cfg.model_dump(), "input_fingerprint": table.fingerprint}
    chash = config_hash(payload)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    protocol = {**study_protocol(config, cases),
                "inputs": {"paths": cfg.paths, "files": [f.url for f in table.files], "fingerprint": table.fingerprint,
                           "directions": [d.model_dump() for d in cfg.directions]}}
    write_json(run_dir.path("protocol.json"), protocol)  # frozen before any draw is made
    protocol_at = datetime.now(timezone.utc).isoformat()
    with timer("ray_init"):
        ray_info = init_ray(opts.address, opts.num_cpus)
    progress = Progress(JOB, len(table.labels) * len(cases), len(cases))  # rows: targets x directions
    with timer("study"):
        progress.start()
        config_ref = ray.put(config)
        pending = {_study_case.remote(config_ref, case): case.direction for case in cases}
        results: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
        first_result_at = None
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            direction = pending.pop(done[0])
            try:
                results[direction] = ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:
                raise ValueError(f"{JOB}: direction {direction}: {exc.cause}") from exc
            first_result_at = first_result_at or datetime.now(timezone.utc).isoformat()
            progress.update(len(table.labels))
    order = [c.direction for c in cases]
    summary_table = pd.concat([results[d][0] for d in order], ignore_index=True)
    draws = pd.concat([results[d][1] for d in order], ignore_index=True)
    summary = {
        "job": JOB, "run_id": run_dir.run_id, "dataset": cfg.dataset, "protocol_sha256": hashlib.sha256(
            json.dumps(protocol, sort_keys=True, default=str).encode()).hexdigest(),
        "cases": protocol["cases"], "draws": cfg.draws, "alpha": cfg.alpha,
        "table": records(summary_table), "f1_rmse_ranking": rmse_ranking(summary_table),
    }
    with timer("write"):
        write_parquet(run_dir.path("sampler_study.parquet"), pa.Table.from_pandas(summary_table, preserve_index=False))
        write_text(run_dir.path("sampler_study.csv"), summary_table.to_csv(index=False))
        write_parquet(run_dir.path("draws.parquet"), pa.Table.from_pandas(draws, preserve_index=False))
        write_json(run_dir.path("summary.json"), summary)
        from jobs.report_coreset import render_study_report

        write_text(run_dir.path("report.html"), render_study_report(summary))
    manifest = base_manifest(JOB, run_dir.run_id, cfg, opts, chash, cfg.root_seed, timer, ray_info)
    manifest.update({
        "inputs": protocol["inputs"],
        "seeds": protocol["seeds"],
        "protocol": {"file": "protocol.json", "written_at": protocol_at, "first_result_at": first_result_at,
                     "sha256": summary["protocol_sha256"]},
        "rows": {"in": int(len(table.labels)), "out": len(summary_table), "skipped_by_reason": {}},
        "timings": {**timer.seconds, "wall_s": timer.wall(), "progress": progress.samples},
    })
    write_json(run_dir.path("manifest.json"), manifest)
    return run_dir.commit()
