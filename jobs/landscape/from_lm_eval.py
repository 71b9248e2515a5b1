"""``--from-lm-eval DIR``: landscape rows from lm-evaluation-harness ``--log_samples`` output, no model run.

One pass of Ray Data over the models: each task reads one model's samples files, turns them into
result rows with the same ``result_rows`` as a model run, writes them to ``data/scores/model=<name>/``
itself, and sends back only what is small -- the model's summary rows (per task and per lm-eval group,
with intervals), its share of the per-item sums of the cross-model item audit
(``audit.landscape.label_errors``), its description for the manifest, and its points only for the
first ``MAX_POINT_MODELS`` models (the scatters and Hnorm correlations). The driver adds the sums
as they arrive, so its memory is flat in the number of models: no record of any model is ever held
there (``bench/bench_lm_eval_scale.py`` measures it).

Each row's per-option log-likelihoods go through the same ``result_rows`` as a model's label log-probs, so
points, MPD and flags are computed the same way. What they are is said per task
(``connectors.landscape.lm_eval_records``): the letter distribution with its label mass where every
continuation is an option letter (the label-mass warning then applies), else continuation
log-likelihoods, raw or per character (``--lm-eval-normalization``); the summary and report say which.
The items (question, option texts, gold) come from each record's document (``item_rule`` says by which
rule), so the review sheet shows the options' text and ``--reference`` matches on the document's question.

Subtasks are pooled into their lm-eval group (``group`` of the rows, else the group names of
results.json that prefix the task: ``mmlu`` for ``mmlu_anatomy``); the group is one more benchmark of
the table (its accuracy the micro average over its items, as lm-eval's group figure), and the item
audit runs over the group, where there are enough items to estimate each model's reliability.

A re-analysis reads every item unless ``--sample N`` is given; then items are drawn with the same
seeded hash as a model run, so every model of a task keeps the same documents. When one model has
several samples files for a task (reruns), the latest date is used and the others are listed in the
manifest. One task that cannot be read (not multiple choice, a broken file, every record rejected)
costs that task: it is counted and named with its reason (``unreadable``), and the other tasks are read.
"""
from __future__ import annotations

import pickle
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from audit.landscape.label_errors import model_sums, probabilities, reliability, score_items
from audit.landscape.statistics import STATISTICS, Statistic
from audit.landscape.summary import RESULT_COLUMNS, result_rows, summarize
from audit.stats.draws import sample_positions
from connectors.landscape.lm_eval import (
    LmEvalError,
    LmEvalRun,
    LmEvalSamples,
    find_lm_eval_runs,
    read_lm_eval_results,
    read_lm_eval_samples,
)
from connectors.runs.tables import write_table
from jobs.landscape.config import LandscapeConfig

SHOWN_REASONS = 5  # unreadable files named in the error when no task can be read (all are in the manifest)
MAX_POINT_MODELS = 8  # models whose per-item points reach the summary (scatters, Hnorm correlations)
ITEM_COLUMNS = ["benchmark", "source_id", "question", "options", "gold", "k"]
_SUM_PLAIN = ("n_models", "n_wrong", "gold_prob", "ptop1", "hnorm")
_SUM_VECTORS = ("votes", "prob", "log_evidence")

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


# -- groups -----------------------------------------------------------------------------------------------------------

def results_groups(info: dict) -> dict[str, str]:
    """Task -> its top lm-eval group, from one results file (``read_lm_eval_results``): the groups are the
    entries of ``results`` that have no task config, and a task's group is the shortest of them that
    prefixes its name (``mmlu`` of ``mmlu_anatomy``, not ``mmlu_other``)."""
    configured = set(info.get("output_types") or {})
    names = set(info.get("results") or {}) - configured
    out = {}
    for task in configured:
        prefixes = [g for g in names if task.startswith(g + "_")]
        if prefixes:
            out[task] = min(prefixes, key=len)
    return out


def _group_info(runs: list[LmEvalRun]) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], dict]]:
    """(model, task) -> group, and (model, group) -> lm-eval's own group accuracy (``acc``, where results.json
    has one) with the subtasks results.json counts in it (``subtasks``): a subtask whose samples file is missing is
    in lm-eval's figure and not in the pooled row."""
    groups: dict[tuple[str, str], str] = {}
    figures: dict[tuple[str, str], dict] = {}
    infos: dict[str, dict] = {}
    for run in runs:
        if run.results_path is None:
            continue
        if run.results_path not in infos:
            try:
                infos[run.results_path] = read_lm_eval_results(run.results_path)
            except (LmEvalError, OSError):
                infos[run.results_path] = {}
        info = infos[run.results_path]
        members = results_groups(info)
        group = members.get(run.task)
        if group is not None:
            groups[(run.model, run.task)] = group
            acc = (info["results"].get(group) or {}).get("acc,none")
            if isinstance(acc, (int, float)):
                figures[(run.model, group)] = {"acc": float(acc),
                                               "subtasks": sorted(t for t, g in members.items() if g == group)}
    return groups, figures


# -- one model, on a Ray worker ---------------------------------------------------------------------------------------

@dataclass
class ModelPart:
    """What one model's read sends to the driver: small, whatever the number of its records."""

    model: str
    table: pd.DataFrame
    sums: dict[str, pd.DataFrame] = field(default_factory=dict)
    text: dict[str, pd.DataFrame] = field(default_factory=dict)
    points: dict[str, pd.DataFrame] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    unreadable: list[dict] = field(default_factory=list)
    rows: int = 0


def _sums_frame(rows: pd.DataFrame, probs: np.ndarray, results: pd.DataFrame) -> pd.DataFrame:
    """One model's contribution to a benchmark's per-item sums, indexed by source_id (``model_sums`` plus
    the Ptop1 / Hnorm sums of the model-averaged points)."""
    gold, k = rows["gold"].to_numpy(), rows["k"].to_numpy()
    answered = results["error"].isna().to_numpy()
    probs = np.where(answered[:, None], probs, np.nan)
    sums = model_sums(probs, gold, k, reliability(float(results.loc[answered, "correct"].sum()), answered.sum()))
    out = {f: sums[f] for f in ("n_models", "n_wrong", "gold_prob")}
    out["ptop1"] = np.where(answered, results["ptop1"].to_numpy(), 0.0)
    out["hnorm"] = np.where(answered, results["hnorm"].to_numpy(), 0.0)
    for name in _SUM_VECTORS:
        for j in range(sums[name].shape[1]):
            out[f"{name}_{j}"] = sums[name][:, j]
    return pd.DataFrame(out, index=pd.Index(rows["source_id"].to_numpy(), name="source_id"))


def _group_column(frame: pd.DataFrame, model: str, task: str, groups: dict[tuple[str, str], str]) -> list[str | None]:
    """The lm-eval group of each row: the reader's ``group`` column where it has one, else results.json's."""
    fallback = groups.get((model, task))
    if "group" in frame:
        return [g if isinstance(g, str) and g else fallback for g in frame["group"]]
    return [fallback] * len(frame)


def read_model(model: str, runs: list[LmEvalRun], cfg: LandscapeConfig, groups: dict[tuple[str, str], str],
               run_dir: str, keep_points: bool, statistics: dict[str, Statistic] | None = None) -> ModelPart:
    """Every task of one model: its scores written under ``run_dir``, and its ``ModelPart``."""
    part = ModelPart(model, pd.DataFrame())
    frames, items = [], []
    for run in runs:
        samples, problem = _read(run, cfg)
        if samples is not None:
            part.rejected += [{"benchmark": run.task, "id": r["id"], "perturbation": None, "stage": "read",
                               "reason": f"{run.samples_path}: {samples.unit} {r['line']}: {r['reason']}"} for r in samples.rejected]
        if problem is not None or samples is None:
            part.unreadable.append(_unreadable(run, problem or "unreadable"))
            continue
        every = samples.table.to_pandas()
        for column in ("option_logprobs", "options"):
            every[column] = samples.table.column(column).to_pylist()
        scored = result_rows(every, model)
        keep = sample_positions(samples.table.column("id").to_pylist(), cfg.items_per_benchmark(), cfg.seed,
                                stream=run.task)
        frame, res = every.iloc[keep].reset_index(drop=True), scored.iloc[keep].reset_index(drop=True)
        res["label_mass"] = frame["label_mass"].astype(float).to_numpy()  # NaN unless the task's options are letters
        res["lm_eval_group"] = _group_column(frame, model, run.task, groups)  # "group" is an SQL word: not a column name
        frames.append(res)
        items.append(frame)
        part.runs.append({"model": model, "task": run.task, "probability": samples.probability,
                          "normalization": cfg.lm_eval_normalization if "continuations" in (samples.probability or "") else None,
                          "item_rules": {k: int(v) for k, v in frame["item_rule"].value_counts().items()},
                          "date": run.date, "samples": run.samples_path,
                          "results": run.results_path, "metrics": run.metrics, "notes": list(run.notes),
                          "records": samples.records, "rows": samples.table.num_rows, "sampled": len(keep),
                          "rejected": len(samples.rejected), "group": run.group or groups.get((model, run.task)),
                          "acc": {"lm_eval": run.metrics.get("acc,none"), "recomputed": float(scored["correct"].mean()),
                                  "over_rows": int(scored["correct"].notna().sum())}})
    if not frames:
        return part
    results = pd.concat(frames, ignore_index=True)
    rows = pd.concat(items, ignore_index=True)
    part.rows = len(results)
    scores = results.drop(columns=["model"])
    write_table(run_dir, "scores", pa.Table.from_pandas(scores, preserve_index=False), "part-0", ("model", model))
    grouped = results["lm_eval_group"].notna().to_numpy()
    pooled = results[grouped].assign(benchmark=results.loc[grouped, "lm_eval_group"])
    both = pd.concat([results, pooled], ignore_index=True)
    table = summarize(both[RESULT_COLUMNS], exact_limit=cfg.mpd_exact_limit, pairs=cfg.mpd_pairs, seed=cfg.seed,
                      statistics=statistics)
    ok = both[both["error"].isna()]
    mass = ok.groupby("benchmark")["label_mass"].mean()
    table["mean_label_mass"] = table["benchmark"].map(mass)
    table["group_of"] = table["benchmark"].map(results.groupby("benchmark")["lm_eval_group"].first())
    part.table = table
    audit_bench = np.where(grouped, results["lm_eval_group"].astype(object), results["benchmark"].astype(object))
    for bench in pd.unique(audit_bench):
        at = np.flatnonzero(audit_bench == bench)
        sub_rows, sub_res = rows.iloc[at].reset_index(drop=True), results.iloc[at].reset_index(drop=True)
        kmax = int(sub_rows["k"].max())
        part.sums[bench] = _sums_frame(sub_rows, probabilities(sub_rows["option_logprobs"].tolist(), kmax), sub_res)
        text = sub_rows[["source_id", "benchmark", "question", "options", "gold", "k", "item_rule"]].copy()
        if "continuations" in sub_rows:
            text["continuations"] = sub_rows["continuations"]
        part.text[bench] = text.set_index("source_id")
    if keep_points:
        base = both[both["error"].isna()]
        part.points = {b: g[["source_id", "ptop1", "hnorm"]].reset_index(drop=True) for b, g in base.groupby("benchmark")}
    return part


def _read_model_row(row: dict[str, Any], cfg: LandscapeConfig, groups: dict, run_dir: str,
                    point_models: frozenset[str], statistics: dict[str, Statistic]) -> dict[str, Any]:
    runs = pickle.loads(row["runs"])
    part = read_model(row["model"], runs, cfg, groups, run_dir, row["model"] in point_models, statistics)
    return {"part": pickle.dumps(part)}


# -- the driver -------------------------------------------------------------------------------------------------------

@dataclass
class LmEvalRead:
    """Everything the driver keeps from the pass: small tables, and the per-item sums of every benchmark."""

    table: pd.DataFrame
    sums: dict[str, pd.DataFrame]
    text: dict[str, pd.DataFrame]
    points: dict[str, dict[str, pd.DataFrame]]
    runs: list[dict]
    superseded: list[str]
    unreadable: list[dict]
    rejected: list[dict]
    group_figures: dict[tuple[str, str], dict]
    rows: int

    @property
    def probability(self) -> str:
        """The run's probability kind: ``letters``, ``continuations``, or both joined by "+"."""
        kinds = sorted({k for r in self.runs for k in (r["probability"] or "").split("+") if k})
        return "+".join(kinds)

    def item_audit(self) -> dict[str, pd.DataFrame]:
        """Per audit benchmark, the item table of ``audit.landscape.label_errors.score_items`` with the text."""
        out = {}
        for bench, sums in self.sums.items():
            text = self.text[bench].loc[sums.index]
            arrays = {f: sums[f].to_numpy() for f in ("n_models", "n_wrong", "gold_prob")}
            for name in _SUM_VECTORS:
                cols = sorted((c for c in sums.columns if re.fullmatch(rf"{name}_\d+", c)), key=lambda c: int(c.rsplit("_", 1)[1]))
                arrays[name] = sums[cols].to_numpy()
            keys = pd.DataFrame({"benchmark": bench, "task": text["benchmark"].to_numpy(), "source_id": sums.index.to_numpy(),
                                 "question": text["question"].to_numpy(), "options": list(text["options"])})
            scored = score_items(keys, arrays, text["gold"].to_numpy(), text["k"].to_numpy())
            table = scored.table
            table["gold_accuracy"] = scored.gold_accuracy
            averaged = (sums[["ptop1", "hnorm"]].div(sums["n_models"].clip(lower=1), axis=0))
            table = table.merge(averaged.rename(columns={"ptop1": "mean_ptop1", "hnorm": "mean_hnorm"}),
                                left_on="source_id", right_index=True, how="left")
            out[bench] = table
        return out


def _add(total: pd.DataFrame | None, part: pd.DataFrame) -> pd.DataFrame:
    return part if total is None else total.add(part, fill_value=0.0)


def _new_text(total: pd.DataFrame | None, part: pd.DataFrame) -> pd.DataFrame:
    if total is None:
        return part
    fresh = part[~part.index.isin(total.index)]
    return pd.concat([total, fresh]) if len(fresh) else total


def read_lm_eval(cfg: LandscapeConfig, run_dir: str) -> LmEvalRead:
    """The one pass over every model's files (Ray Data, one task per model); raises when no task can be read."""
    import ray

    runs, superseded = _latest(find_lm_eval_runs(cfg.from_lm_eval))
    groups, figures = _group_info(runs)
    by_model: dict[str, list[LmEvalRun]] = defaultdict(list)
    for run in runs:
        by_model[run.model].append(run)
    models = sorted(by_model)
    point_models = frozenset(models[:MAX_POINT_MODELS])
    ds = ray.data.from_items([{"model": m, "runs": pickle.dumps(by_model[m])} for m in models],
                             override_num_blocks=max(1, min(len(models), 200)))
    parts = ds.map(_read_model_row, fn_kwargs={"cfg": cfg, "groups": groups, "run_dir": run_dir,
                                               "point_models": point_models,
                                               "statistics": dict(STATISTICS)})  # a worker's registry lacks the driver's additions
    tables, described, unreadable, rejected, total_rows = [], [], [], [], 0
    sums: dict[str, pd.DataFrame] = {}
    text: dict[str, pd.DataFrame] = {}
    points: dict[str, dict[str, pd.DataFrame]] = defaultdict(dict)
    for row in parts.iter_rows():
        part: ModelPart = pickle.loads(row["part"])
        tables.append(part.table)
        described += part.runs
        unreadable += part.unreadable
        rejected += part.rejected
        total_rows += part.rows
        for bench, frame in part.sums.items():
            sums[bench] = _add(sums.get(bench), frame)
            text[bench] = _new_text(text.get(bench), part.text[bench])
        for bench, frame in part.points.items():
            points[bench][part.model] = frame
    if not described:
        shown = "; ".join(u["reason"] for u in unreadable[:SHOWN_REASONS])
        more = f" (and {len(unreadable) - SHOWN_REASONS} more)" if len(unreadable) > SHOWN_REASONS else ""
        raise LmEvalError(f"{cfg.from_lm_eval}: no task could be read: {shown}{more}")
    table = pd.concat([t for t in tables if len(t)], ignore_index=True)
    table["lm_eval_group_acc"] = [figures.get((m, b), {}).get("acc") for m, b in zip(table["model"], table["benchmark"])]
    described.sort(key=lambda r: (r["model"], r["task"]))
    unreadable.sort(key=lambda r: (r["model"], r["task"]))
    return LmEvalRead(table, sums, text, dict(points), described, superseded, unreadable, rejected, figures, total_rows)
