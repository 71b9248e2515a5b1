"""``--from-lm-eval DIR``: landscape rows from lm-evaluation-harness ``--log_samples`` output, no model run.

Each samples file is one (model, task); its per-option continuation log-likelihoods go through
the same ``result_rows`` as a model's label log-probs, so points, MPD and flags are computed the
same way -- but they are a different probability (see ``connectors.landscape.lm_eval``), and the summary
and report say so. Items are sampled with the same seeded hash as a model run (``--sample``),
so every model of a task keeps the same documents. When one model has several samples files for
a task (reruns), the latest date is used and the others are listed in the manifest.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from audit.landscape.summary import result_rows
from audit.stats.draws import sample_positions
from connectors.landscape.lm_eval import LmEvalRun, find_lm_eval_runs, read_lm_eval_samples
from jobs.landscape.config import LandscapeConfig


@dataclass(frozen=True)
class LmEvalInputs:
    results: pd.DataFrame
    items: pd.DataFrame
    rejected: list[dict]
    runs: list[dict]
    superseded: list[str]


def _latest(runs: list[LmEvalRun]) -> tuple[list[LmEvalRun], list[str]]:
    by_key: dict[tuple[str, str], LmEvalRun] = {}
    for run in sorted(runs, key=lambda r: r.date):
        by_key[(run.model, run.task)] = run
    kept = list(by_key.values())
    return kept, sorted(r.samples_path for r in runs if r not in kept)


def read_lm_eval_inputs(cfg: LandscapeConfig) -> LmEvalInputs:
    runs, superseded = _latest(find_lm_eval_runs(cfg.from_lm_eval))
    frames, items, rejected, described = [], [], [], []
    for run in runs:
        samples = read_lm_eval_samples(run.samples_path, run.task)
        table = samples.table
        keep = sample_positions(table.column("id").to_pylist(), cfg.sample, cfg.seed, stream=run.task)
        table = table.take(keep)
        frame = table.to_pandas()
        frame["option_logprobs"] = table.column("option_logprobs").to_pylist()
        frame["options"] = table.column("options").to_pylist()
        res = result_rows(frame, run.model)
        res["label_mass"] = float("nan")
        frames.append(res)
        items.append(frame[["benchmark", "source_id", "question", "options", "gold"]])
        rejected += [{"benchmark": run.task, "id": r["id"], "perturbation": None, "stage": "read",
                      "reason": f"{run.samples_path}: line {r['line']}: {r['reason']}"} for r in samples.rejected]
        described.append({"model": run.model, "task": run.task, "date": run.date, "samples": run.samples_path,
                          "results": run.results_path, "metrics": run.metrics, "rows": table.num_rows,
                          "rejected": len(samples.rejected)})
    item_frame = pd.concat(items, ignore_index=True).drop_duplicates(["benchmark", "source_id"])
    return LmEvalInputs(pd.concat(frames, ignore_index=True), item_frame, rejected, described, superseded)
