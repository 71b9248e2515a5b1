"""``benchaudit landscape --from-lm-eval DIR``: the run around the one Ray Data pass of ``from_lm_eval``.

The pass writes every model's rows to data/scores/ and leaves small tables on the driver; here they
become data/candidates/ (every item of every audit benchmark with its statistics, ``score`` and
``flagged``), the review sheet (the flagged items and the top ones by score, most likely defective first,
with their text),
summary, report and manifest. Flags come from the models' logged answers on the plain prompt: a log
holds no noise-injected prompt, so there is no noise flag (``flags.from = "lm_eval_logs"``).
"""
from __future__ import annotations

import pandas as pd
import pyarrow as pa

from audit.landscape.metrics import hnorm_correlations
from audit.landscape.statistics import STATISTICS
from connectors.io.markup import csv_frame
from connectors.landscape.inputs import read_reference, read_review_labels
from jobs.common.cli.config import RunOptions
from jobs.common.models.answers import Skips
from jobs.common.models.pool import response_cache_root
from jobs.common.runtime.errors import JobError
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.summaries import clip_text, finite, records
from jobs.landscape.classify import classified, structure_prompt
from jobs.landscape.config import LandscapeConfig
from jobs.landscape.from_lm_eval import LmEvalError, LmEvalRead, read_lm_eval
from jobs.landscape.inputs import REJECTED_SCHEMA, rejections
from jobs.landscape.item_audit import RANKINGS, audit_overview, flags_from_audit, validate_audit
from jobs.landscape.summary import (
    POINT_DIGITS,
    PROBABILITY_NOTE,
    _headline,
    _labels_for,
    _shown,
    label_mass_warnings,
    reference_warnings,
)

JOB = "landscape"
FLAGS_FROM = "lm_eval_logs"
SHEET_COLUMNS = ["benchmark", "source_id", "score", "flagged", "n_models", "n_wrong", "mean_gold_prob", "agreed_option",
                 "agreed_mass", "question", "options", "gold"]


def _points(read: LmEvalRead, audit: dict[str, pd.DataFrame]) -> dict:
    """Per benchmark: the kept models' points and the model-averaged ones (from the per-item sums)."""
    out = {}
    for bench, models in sorted(read.points.items()):
        averaged = audit.get(bench)
        if averaged is None:  # a subtask of a group: its items of the group's table
            ids = set().union(*(set(f["source_id"]) for f in models.values()))
            group = next((t for t in audit.values() if t["source_id"].isin(ids).any()), None)
            averaged = group[group["source_id"].isin(ids)] if group is not None else pd.DataFrame(columns=["mean_ptop1", "mean_hnorm"])
        out[bench] = {"models": {m: f[["ptop1", "hnorm"]].round(POINT_DIGITS).to_numpy().tolist() for m, f in sorted(models.items())},
                      "model_averaged": averaged[["mean_ptop1", "mean_hnorm"]].round(POINT_DIGITS).to_numpy().tolist()}
    return out


def _correlations(read: LmEvalRead) -> list[dict]:
    rows = []
    for bench, models in sorted(read.points.items()):
        long = pd.concat([f.assign(model=m, error=None) for m, f in models.items()], ignore_index=True)
        rows += [{"benchmark": bench, **r} for r in records(hnorm_correlations(long))]
    return rows


def _sheet(flags: pd.DataFrame) -> str:
    """The review sheet: the flagged items and the top ones by score (``on_sheet``), most likely defective first,
    text clipped (whole in data/candidates/), the option the models favour as a letter, and the reviewer's
    columns (the layout --review-labels reads)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    shown = flags[flags["on_sheet"]].sort_values(["score", "n_wrong"], ascending=False, kind="stable").copy()
    shown["question"] = shown["question"].map(lambda q: clip_text(q) if isinstance(q, str) else q)
    shown["options"] = shown["options"].map(lambda o: " | ".join(clip_text(t) or "" for t in o))  # as a model run's sheet
    shown["gold"] = shown["gold"].map(lambda g: letters[int(g)])
    shown["agreed_option"] = shown["agreed_option"].map(lambda g: letters[int(g)])
    return csv_frame(shown[[*SHEET_COLUMNS, "review_label", "review_subtype", "review_note"]]).to_csv(index=False,
                                                                                                   float_format="%.4g")


def _candidates_table(flags: pd.DataFrame) -> pa.Table:
    out = flags.drop(columns=["min_wrong"]).copy()
    out["options"] = out["options"].map(list)
    return pa.Table.from_pandas(out, preserve_index=False)


def _flag_rows(flags: pd.DataFrame, limit: int) -> list[dict]:
    shown = flags[flags["flagged"]].sort_values("score", ascending=False, kind="stable").head(limit)
    return [{k: _shown(v) for k, v in row.items()} for row in shown.to_dict("records")]


def _structure(flags: pd.DataFrame) -> dict | None:
    """The classifier's verdicts by label and status, when it ran."""
    if "structure_label" not in flags:
        return None
    judged = flags[flags["structure_status"].notna()]
    return {"by_label": judged["structure_label"].value_counts().astype(int).to_dict(),
            "by_status": judged["structure_status"].value_counts().astype(int).to_dict(), "n": len(judged)}


def build_log_summary(run_id: str, cfg: LandscapeConfig, read: LmEvalRead, audit: dict[str, pd.DataFrame],
                      flags: pd.DataFrame, reference: pd.DataFrame | None, extra: dict) -> dict:
    """summary.json of a --from-lm-eval run: the same keys as a model run's, plus ``item_audit`` and ``groups``."""
    table = read.table
    checked, rankings, matches = validate_audit(audit, reference)
    probability = read.probability
    groups = []
    for r in table[table["benchmark"].isin(table["group_of"].dropna())].to_dict("records"):
        read_tasks = set(table.loc[(table["model"] == r["model"]) & (table["group_of"] == r["benchmark"]), "benchmark"])
        listed = read.group_figures.get((r["model"], r["benchmark"]), {}).get("subtasks", [])
        groups.append({"group": r["benchmark"], "model": r["model"], "n_items": int(r["n_items"]),
                       "accuracy": finite(r["accuracy"]), "lm_eval_acc": finite(r["lm_eval_group_acc"]),
                       "subtasks": len(read_tasks), "lm_eval_subtasks": len(listed),
                       "not_read": sorted(set(listed) - read_tasks)})
    overview = {
        "probability": probability, "benchmarks": sorted(table["benchmark"].unique().tolist()),
        "models": sorted(table["model"].unique().tolist()),
        "items": {b: int(n) for b, n in table.groupby("benchmark")["n_items"].max().items()},
        "accuracy": {b: {m: finite(a) for m, a in zip(g["model"], g["accuracy"])} for b, g in table.groupby("benchmark")},
        "mpd": {b: {m: finite(v) for m, v in zip(g["model"], g["mpd"])} for b, g in table.groupby("benchmark")},
        "flags_from": FLAGS_FROM, "review_candidates": {b: int(g["flagged"].sum()) for b, g in flags.groupby("benchmark")},
        "validation": [r for r in checked if r["chosen"]], "reference_matches": matches,
        "item_rules": {b: {r: int(n) for r, n in g["item_rule"].value_counts().items()}
                       for b, g in pd.concat(read.text.values()).groupby("benchmark")} if read.text else {},
    }
    shown = 200
    return {
        "job": JOB, "run_id": run_id, "probability": probability,
        "probability_note": PROBABILITY_NOTE[probability], "overview": overview, "headline": _headline(table, checked),
        "statistics": [s.describe() for s in STATISTICS.values()], "table": records(table),
        "points": _points(read, audit), "hnorm_correlations": _correlations(read), "groups": groups,
        "flags": {"from": FLAGS_FROM, "min_wrong": cfg.min_wrong, "candidates": _flag_rows(flags, shown),
                  "threshold": {b: {"min_wrong": cfg.min_wrong, "models": int(g["n_models"].max())}
                                for b, g in flags.groupby("benchmark")} if len(flags) else {},
                  "n_candidates": int(flags["flagged"].sum()) if len(flags) else 0},
        "item_audit": {"benchmarks": audit_overview(audit), "rankings": rankings, "ranking_names": RANKINGS},
        "validation": checked, "structure": _structure(flags),
        "warnings": label_mass_warnings(table[~table["benchmark"].isin(table["group_of"].dropna())])  # per task, not again per group
        + reference_warnings(matches), **extra,
    }


def _classified(job: JobRun, cfg: LandscapeConfig, flags: pd.DataFrame, cache_root: str) -> tuple[pd.DataFrame, dict]:
    """The flagged items with the structural classifier's verdicts (``--classify --classifier-model SPEC``)."""
    structure, classifier = structure_prompt(cfg), cfg.classifier([])
    if structure is None or classifier is None:
        raise JobError("--classify needs --classifier-model")
    flags, _, info = classified(job, cfg, flags, structure, classifier, cache_root)
    return flags, info


def run_lm_eval(cfg: LandscapeConfig, opts: RunOptions) -> str:
    """Read every model's logs in one Ray Data pass, then write candidates, summary, report and manifest."""
    from jobs.landscape.report import write_landscape_outputs  # presentation only

    timer = StageTimer()
    with timer("plan"):
        labels = read_review_labels(cfg.review_labels) if cfg.review_labels else None
        reference = read_reference(cfg.reference) if cfg.reference else None
    cache_root = response_cache_root(cfg.cache, opts.out)
    payload = {"config": cfg.model_dump(exclude={"cache"}), "lm_eval": cfg.from_lm_eval, "on_error": opts.on_error}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer) as job:
        with job.timer("read"):
            try:
                read = read_lm_eval(cfg, job.dir.partial)
            except LmEvalError as exc:
                raise JobError(str(exc)) from exc
        job.write_table("rejected", pa.Table.from_pylist(read.rejected, schema=REJECTED_SCHEMA))
        with job.timer("item_audit"):
            audit = read.item_audit()
            benches = sorted(audit)
            flags = flags_from_audit(audit, cfg, lambda b: _labels_for(labels, b, len(benches) > 1))
        classifier_info = None
        if cfg.classify:
            flags, classifier_info = _classified(job, cfg, flags, cache_root)
        rejected = rejections(read.rejected)
        skips = Skips()
        tasks = ~read.table["benchmark"].isin(read.table["group_of"].dropna())  # a group's rows are its tasks' again
        errors = int(read.table.loc[tasks, "n_errors"].sum())
        lm_eval = {"root": cfg.from_lm_eval, "runs": read.runs, "superseded": read.superseded, "unreadable": read.unreadable,
                   "tasks": {"read": len(read.runs), "unreadable": len(read.unreadable)},
                   "groups": sorted({r["group"] for r in read.runs if r.get("group")})}
        extra = {"failed_models": [], "rejected": rejected, "failed_answers": {**skips.to_json(), "answers": read.rows},
                 "template": None, "unreadable_tasks": [{**u, "reason": clip_text(u["reason"])} for u in read.unreadable]}
        with job.timer("summary"):
            summary = build_log_summary(job.run_id, cfg, read, audit, flags, reference, extra)
        write_landscape_outputs(job, summary, _candidates_table(flags), _sheet(flags), quiet=opts.log_level == "error")
        manifest = job.manifest(
            lm_eval=lm_eval, rejected=rejected, probability=read.probability, cache={"root": cache_root}, failed_models=[],
            seeds={"sample": cfg.seed, "mpd": cfg.seed},
            sample={"items_per_benchmark": cfg.items_per_benchmark(), "given": cfg.sample is not None},
            rows={"in": read.rows, "out": read.rows - errors, "skipped_by_reason": {}, "unread": 0},
            failed_answers=skips.to_json(),
            review={"candidates": int(flags["flagged"].sum()) if len(flags) else 0, "labels": cfg.review_labels,
                    "reference": cfg.reference, "classifier": classifier_info, "flags_from": FLAGS_FROM},
            outputs={"review_candidates": "review_candidates.csv", "candidates": "data/candidates/"},
        )
        return job.commit_checked(manifest, skip_limits=lambda: job.check_skips(read.rows, read.rows - errors, errors, 0, [],
                                                                                   unit="model answers"))
