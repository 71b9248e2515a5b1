"""``--from-lm-eval DIR``: landscape rows from lm-evaluation-harness ``--log_samples`` output, no model run.

Each samples file is one (model, task); its per-option log-likelihoods go through the same
``result_rows`` as a model's label log-probs, so points, MPD and flags are computed the same way. What
they are is said per task (``connectors.landscape.lm_eval_records``): the letter distribution with its
label mass where every continuation is an option letter (the label-mass warning then applies), else
continuation log-likelihoods, raw or per character (``--lm-eval-normalization``); the summary and report
say which. A re-analysis reads every item unless ``--sample N`` is given; then items are
drawn with the same seeded hash as a model run, so every model of a task keeps the same documents.
When one model has several samples files for a task (reruns), the latest date is used and the
others are listed in the manifest.

One task that cannot be read (not multiple choice, a broken file, every record rejected) costs that
task: it is counted and named with its reason (``unreadable``), and the other tasks are read. Only
when no task at all can be read does the run fail, naming each file and why.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from audit.landscape.summary import result_rows
from audit.stats.draws import sample_positions
from connectors.landscape.lm_eval import LmEvalError, LmEvalRun, LmEvalSamples, find_lm_eval_runs, read_lm_eval_samples
from jobs.landscape.config import LandscapeConfig

SHOWN_REASONS = 5  # unreadable files named in the error when no task can be read (all are in the manifest)


@dataclass(frozen=True)
class LmEvalInputs:
    results: pd.DataFrame
    items: pd.DataFrame
    rejected: list[dict]
    runs: list[dict]
    superseded: list[str]
    unreadable: list[dict]

    @property
    def probability(self) -> str:
        """The run's probability kind: ``letters``, ``continuations``, or both joined by "+"."""
        kinds = sorted({k for r in self.runs for k in (r["probability"] or "").split("+") if k})
        return "+".join(kinds)


def _latest(runs: list[LmEvalRun]) -> tuple[list[LmEvalRun], list[str]]:
    by_key: dict[tuple[str, str], LmEvalRun] = {}
    for run in sorted(runs, key=lambda r: r.date or ""):
        by_key[(run.model, run.task)] = run
    kept = list(by_key.values())
    return kept, sorted(r.samples_path for r in runs if r not in kept)


def _unreadable(run: LmEvalRun, reason: str) -> dict:
    return {"model": run.model, "task": run.task, "samples": run.samples_path, "results": run.results_path, "reason": reason}


def _read(run: LmEvalRun, cfg: LandscapeConfig) -> tuple[LmEvalSamples | None, str | None]:
    """The samples of one run, and why the task cannot be read (None when it can)."""
    if run.problem:
        return None, run.problem
    try:
        samples = read_lm_eval_samples(run.samples_path, run.task, cfg.lm_eval_normalization, run.model, run.group)
    except LmEvalError as exc:  # names its file (connectors.landscape.lm_eval_records)
        return None, str(exc)
    except OSError as exc:  # the file it names, else the samples file
        return None, f"{exc.filename or run.samples_path}: {exc.strerror or exc}"
    if samples.table.num_rows == 0:
        first = samples.rejected[0]
        return samples, (f"{run.samples_path}: no readable record: all {samples.records} rejected (first, {samples.unit} "
                         f"{first['line']}: {first['reason']})")
    return samples, None


def read_lm_eval_inputs(cfg: LandscapeConfig) -> LmEvalInputs:
    runs, superseded = _latest(find_lm_eval_runs(cfg.from_lm_eval))
    frames, items, rejected, described, unreadable = [], [], [], [], []
    for run in runs:
        samples, problem = _read(run, cfg)
        if samples is not None:
            rejected += [{"benchmark": run.task, "id": r["id"], "perturbation": None, "stage": "read",
                          "reason": f"{run.samples_path}: {samples.unit} {r['line']}: {r['reason']}"} for r in samples.rejected]
        if problem is not None or samples is None:
            unreadable.append(_unreadable(run, problem or "unreadable"))
            continue
        every = samples.table.to_pandas()
        for column in ("option_logprobs", "options"):
            every[column] = samples.table.column(column).to_pylist()
        scored = result_rows(every, run.model)
        keep = sample_positions(samples.table.column("id").to_pylist(), cfg.items_per_benchmark(), cfg.seed,
                                stream=run.task)
        frame, res = every.iloc[keep].reset_index(drop=True), scored.iloc[keep].reset_index(drop=True)
        res["label_mass"] = frame["label_mass"].astype(float).to_numpy()  # NaN unless the task's options are letters
        frames.append(res)
        items.append(frame[["benchmark", "source_id", "question", "options", "gold", "item_rule", "group"]])
        described.append({"model": run.model, "task": run.task, "group": run.group, "probability": samples.probability,
                          "normalization": cfg.lm_eval_normalization if "continuations" in (samples.probability or "") else None,
                          "item_rules": {k: int(v) for k, v in frame["item_rule"].value_counts().items()},
                          "date": run.date, "samples": run.samples_path,
                          "results": run.results_path, "metrics": run.metrics, "notes": list(run.notes),
                          "records": samples.records, "rows": samples.table.num_rows, "sampled": len(keep),
                          "rejected": len(samples.rejected),
                          "acc": {"lm_eval": run.metrics.get("acc,none"), "recomputed": float(scored["correct"].mean()),
                                  "over_rows": int(scored["correct"].notna().sum())}})
    if not frames:
        shown = "; ".join(u["reason"] for u in unreadable[:SHOWN_REASONS])
        more = f" (and {len(unreadable) - SHOWN_REASONS} more)" if len(unreadable) > SHOWN_REASONS else ""
        raise LmEvalError(f"{cfg.from_lm_eval}: no task could be read: {shown}{more}")
    item_frame = pd.concat(items, ignore_index=True).drop_duplicates(["benchmark", "source_id"])
    return LmEvalInputs(pd.concat(frames, ignore_index=True), item_frame, rejected, described, superseded, unreadable)

