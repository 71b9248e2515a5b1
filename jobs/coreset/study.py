"""``benchaudit coreset study``: how close each sampler lands on full-table metrics, over K draws.

Wiring only: ``connectors.coreset.targets.read_full_table`` reads the label, score and prediction columns
(the study needs every row: the truth is the full-table metric), ``audit.coreset.study`` does the
science. The frozen protocol (samplers, K, budgets, seeds, inputs) is written to the run directory
before any draw is made; then each direction (strata from one scorer family, predictions from
another) runs as one Ray task, in parallel.
"""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import ray

from audit.coreset import strata as st
from audit.coreset.allocation import negative_budget
from audit.coreset.study import SAMPLERS, HeldOutCase, StudyConfig, run_study, study_protocol
from audit.coreset.validate import require_budget, require_positive_count
from connectors.coreset.targets import FullTable, read_full_table
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.errors import one_line
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.progress import Progress
from jobs.common.runtime.summaries import headline, records
from jobs.coreset.config import StudyJobConfig

JOB = "coreset-study"


def _cases(cfg: StudyJobConfig, table: FullTable) -> list[HeldOutCase]:
    cases = []
    for d in cfg.directions():
        construction = st.ensemble_score(np.column_stack([table.scores[c] for c in d.construction_scores]))
        if cfg.prediction_threshold is None:
            preds = np.column_stack([table.predictions[c] for c in d.predictions])
        else:
            preds = np.column_stack([table.scores[c] >= cfg.prediction_threshold for c in d.predictions])
        assert d.tau is not None, "directions() resolves every direction's tau"
        cases.append(HeldOutCase(cfg.dataset, d.name, table.labels, construction, d.tau, preds))
    return cases


def _check_budgets(cfg: StudyJobConfig, table: FullTable) -> None:
    """Every budget must fit the negatives: fail before the protocol is written, naming the input."""
    n_pos = int(table.labels.sum())
    require_positive_count(n_pos, cfg.label_column, ", ".join(cfg.input))
    for multiplier in cfg.budget_multipliers:
        require_budget(negative_budget(n_pos, multiplier), len(table.labels) - n_pos, ", ".join(cfg.input))


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
        directions = cfg.directions()
        scores = list(dict.fromkeys(c for d in directions for c in d.construction_scores))
        if cfg.prediction_threshold is not None:
            scores += [c for d in directions for c in d.predictions if c not in scores]
            binary: list[str] = []
        else:
            binary = list(dict.fromkeys(c for d in directions for c in d.predictions))
        table = read_full_table(cfg.input, cfg.label_column, scores, binary, cfg.format)
        cases = _cases(cfg, table)
        _check_budgets(cfg, table)
    config = cfg.study_config()
    payload = {"config": cfg.model_dump(), "input_fingerprint": table.fingerprint}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer) as job:
        protocol = {**study_protocol(config, cases),
                    "inputs": {"paths": cfg.input, "files": [f.url for f in table.files], "fingerprint": table.fingerprint,
                               "directions": [d.model_dump() for d in directions],
                               "prediction_threshold": cfg.prediction_threshold}}
        job.write_json("protocol.json", protocol)  # frozen before any draw is made
        protocol_at = datetime.now(timezone.utc).isoformat()
        # the table's rows, once (every direction studies all of them): each finished direction counts its share
        n_rows = len(table.labels)
        shares = [n_rows // len(cases) + (i < n_rows % len(cases)) for i in range(len(cases))]
        progress = Progress(JOB, n_rows, len(cases), quiet=opts.log_level in ("warning", "error"))
        with timer("study"):
            progress.start()
            config_ref = ray.put(config)
            pending = {_study_case.remote(config_ref, case): case.direction for case in cases}
            results: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
            first_result_at = None
            while pending:  # results in completion order, for progress; the table is assembled in plan order
                done, _ = ray.wait(list(pending), num_returns=1)
                direction = pending.pop(done[0])
                try:
                    results[direction] = ray.get(done[0])
                except ray.exceptions.RayTaskError as exc:
                    raise ValueError(f"{JOB}: direction {direction}: {one_line(exc)}") from None
                first_result_at = first_result_at or datetime.now(timezone.utc).isoformat()
                share = shares[len(results) - 1]
                progress.update(share, planned=share)
        order = [c.direction for c in cases]
        summary_table = pd.concat([results[d][0] for d in order], ignore_index=True)
        draws = pd.concat([results[d][1] for d in order], ignore_index=True)
        summary = {
            "job": JOB, "run_id": job.run_id, "dataset": cfg.dataset, "protocol_sha256": hashlib.sha256(
                json.dumps(protocol, sort_keys=True, default=str).encode()).hexdigest(),
            "cases": protocol["cases"], "draws": cfg.draws, "level": cfg.level, "alpha": 1 - cfg.level,
            "table": records(summary_table), "f1_rmse_ranking": rmse_ranking(summary_table),
            "headline": [headline(f"{cfg.dataset}:{r['direction']}", f"{r['sampler']}.f1_rmse@{r['budget_multiplier']:g}x", r["rmse"])
                         for r in records(summary_table) if r["metric"] == "f1"],
        }
        with timer("write"):
            job.write_table("sampler_study", summary_table)
            job.write_table("draws", draws)
        from jobs.coreset.report import render_study_report

        return job.finish(
            summary, render_study_report, files=("protocol.json",), timings={"progress": progress.samples},
            inputs=protocol["inputs"],
            seeds=protocol["seeds"],
            protocol={"file": "protocol.json", "written_at": protocol_at, "first_result_at": first_result_at,
                      "sha256": summary["protocol_sha256"]},
            rows={"in": int(len(table.labels)), "out": len(summary_table), "skipped_by_reason": {}},
        )
