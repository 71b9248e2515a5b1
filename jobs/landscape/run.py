"""``benchaudit landscape``: MCQA probability landscapes, benchmarks x models x perturbations, on Ray Data.

Wiring only. On the driver: read and check the benchmarks (``jobs.landscape.inputs``), sample
them. On Ray: the items become perturbed prompt rows in a CPU stage (``stages.prompt_batch``),
each model scores them through the model step every model audit shares (``jobs.common.models.step``: an
actor pool, the response cache under ``<out>/_cache/models`` in front), a CPU stage turns the label log-probs into landscape
rows (``stages.landscape_batch``), written per model to ``data/scores/model=<name>/`` (the run-data
convention of ``connectors.runs.tables``: ``pd.read_parquet("<run>/data/scores")`` loads every model). Back on the driver:
those small tables become the summary (``jobs.landscape.summary``), the optional classifier
runs on the review candidates, and report and manifest are written. ``--from-lm-eval`` skips
the model: its rows come from lm-eval's samples files (every item unless --sample is given), and no Ray
is started; a task that cannot be read is counted and named, and the other tasks are read.

A model that cannot run (weights not found, labels that are not single tokens, a chat-only
endpoint), answers no item (an unreachable endpoint) or fails so many items that the run can no
longer meet ``--max-skipped`` (stopped as soon as that is so: ``jobs.common.models.answers``) fails the
run naming the model and the top reasons, or under ``--on-error skip`` is left out and listed
(within ``--max-skipped-inputs``; ``ModelSteps.leave_out``: whether --resume can help comes from the
failure's transient flag, set where it failed). Answers that failed on their own item count against
``--max-skipped`` by reason (manifest, report, terminal); items the benchmark itself makes
unscorable are findings, listed per item, and never fail the run.
"""
from __future__ import annotations

from typing import Any

import fsspec
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from audit.landscape.prompts import McqaTemplate, load_template
from audit.landscape.structure import StructurePrompt
from connectors.io.markup import csv_frame
from connectors.landscape.inputs import read_reference, read_review_labels, read_template
from connectors.models.available import check_available
from connectors.models.batches import REPORT_COLUMN, merge_backend_reports
from connectors.runs.tables import DATA_DIR, partition_segment
from jobs.common.cli.config import RunOptions
from jobs.common.models.answers import Skips, StageAnswers, unusable_answers
from jobs.common.models.pool import ModelConfig, model_counts, response_cache_root
from jobs.common.models.step import ModelFailure, ModelSteps
from jobs.common.runtime.errors import JobError
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.summaries import clip_text
from jobs.landscape.classify import classified, structure_prompt
from jobs.landscape.config import LandscapeConfig
from jobs.landscape.inputs import REJECTED_SCHEMA, BenchmarkItems, items_table, load_benchmark, rejections
from jobs.landscape.stages import SCORE_TABLE, landscape_batch, prompt_batch
from jobs.landscape.summary import FINAL_POSITION, as_results, build_summary, candidates

JOB = "landscape"
ORDER = ("benchmark", "perturbation", "id", "variant")  # one prompt row
ERROR_COLUMNS = ("error", "error_code", "error_transient")  # an answer's failure, as its backend set it


def _template(cfg: LandscapeConfig) -> tuple[McqaTemplate, str]:
    return (read_template(cfg.template), cfg.template) if cfg.template else (load_template(), "shipped")


def _rm(url: str) -> None:
    fs, path = fsspec.core.url_to_fs(url)
    if fs.exists(path):
        fs.rm(path, recursive=True)


def _keep_prompts(batch: pa.Table) -> pa.Table:
    return batch.filter(pc.is_null(batch.column("rejected"))).drop_columns(["rejected"])


def _only_rejected(batch: pa.Table) -> pa.Table:
    return batch.filter(pc.is_valid(batch.column("rejected"))).select(["benchmark", "id", "perturbation", "rejected"])


def build_prompts(job: JobRun, benchmarks: list[BenchmarkItems], template: McqaTemplate, cfg: LandscapeConfig):
    """(prompt rows as a materialised Ray Dataset, perturbation rejections); data/prompts/ written."""
    import ray

    items = items_table([item for b in benchmarks for item in b.items])
    rows = ray.data.from_arrow(items).map_batches(
        prompt_batch, fn_kwargs={"template": template, "perturbations": cfg.perturbations, "seed": cfg.seed,
                                 "params": cfg.perturbation_params()},
        batch_size=256, batch_format="pyarrow").materialize()
    rejected = [{"benchmark": r["benchmark"], "id": r["id"], "perturbation": r["perturbation"], "stage": "perturbation",
                 "reason": r["rejected"]} for r in rows.map_batches(_only_rejected, batch_format="pyarrow").take_all()]
    prompts = rows.map_batches(_keep_prompts, batch_format="pyarrow").materialize()
    _rm(job.path(DATA_DIR, "prompts"))  # a resumed run rewrites them
    prompts.write_parquet(job.path(DATA_DIR, "prompts"))
    return prompts, rejected


def score_model(job: JobRun, steps: ModelSteps, prompts, n_prompts: int, model: ModelConfig) -> tuple[pa.Table, dict]:
    """One model over every prompt row through the shared model step (``jobs.common.models.step``): its
    landscape rows (written to data/scores/model=<name>/) and its call accounting. A ``ModelFailure``
    leaves with the model's manifest entry as far as it got."""
    folder = f"{DATA_DIR}/scores/{partition_segment('model', model.name)}"
    _rm(job.path(*folder.split("/")))  # a resumed run rewrites the model's rows (from the cache) instead of appending to them
    what = f"model {model.name}"
    try:
        table = steps.answer(prompts, model.stage(), "choice", what=what, named=f"{what} ({model.spec})", expected=n_prompts,
                             reasons=unusable_answers, empty=SCORE_TABLE.empty_table(), then=landscape_batch,
                             then_kwargs={"model": model.name}, no_answer_fails=True, calls=_calls)
    except ModelFailure as exc:
        exc.info = _model_info(model, folder, steps.stages[what], None)
        raise
    table = table.select(SCORE_TABLE.names).cast(SCORE_TABLE)
    table = table.sort_by([(c, "ascending") for c in ORDER])  # batches come back in any order; a rerun's rows do not
    info = _model_info(model, folder, steps.stages[what], table)
    job.write_table("scores", table.drop_columns(["model", REPORT_COLUMN]), partition=("model", model.name))
    return table.drop_columns([REPORT_COLUMN]), info


def _calls(table: pa.Table) -> str:
    """What a model's calls cost, from its answers' backend reports: ``requests 12, retries 6, failures 6``."""
    counters = merge_backend_reports(table.column(REPORT_COLUMN).to_pylist())["counters"]
    return ", ".join(f"{k} {counters[k]}" for k in ("requests", "retries", "failures") if k in counters) or "no calls counted"


def _model_info(model: ModelConfig, folder: str, answers: StageAnswers, table: pa.Table | None) -> dict:
    """A model's manifest entry: spec, settings as requested and as resolved, call accounting (of the
    answers that came back, when the stage stopped early), failed answers by reason, progress samples."""
    if table is None:
        table = answers.table(SCORE_TABLE.empty_table()).select(SCORE_TABLE.names)
    report = merge_backend_reports(table.column(REPORT_COLUMN).to_pylist())
    return {"spec": model.spec, "requested_settings": model.settings, "settings": report["settings"],
            "batch_size": model.batch_size, "actors": model.actors, "calls": {**model_counts(table), **report["counters"]},
            "failed_answers": answers.skips.to_json(), "progress": answers.progress.samples, "output": folder + "/"}


def _items_frame(benchmarks: list[BenchmarkItems]) -> pd.DataFrame:
    rows = [{"benchmark": i.benchmark, "source_id": i.source_id, "question": i.question, "options": list(i.options),
             "gold": i.gold} for b in benchmarks for i in b.items]
    return pd.DataFrame(rows, columns=["benchmark", "source_id", "question", "options", "gold"])


def _candidates_csv(flags: pd.DataFrame) -> str:
    """The review sheet: flagged items with their text (each field clipped to ``MAX_TEXT_CHARS``; the
    full text is in data/candidates/), and the reviewer's columns to fill in (the layout
    --review-labels reads back)."""
    shown = flags[flags["flagged"]].copy()
    shown["question"] = shown["question"].map(lambda q: clip_text(q) if isinstance(q, str) else q)
    shown["options"] = shown["options"].map(lambda o: " | ".join(map(clip_text, o)) if isinstance(o, (list, tuple)) else "")
    shown["gold"] = shown["gold"].map(lambda g: "" if pd.isna(g) else "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[int(g)])
    cols = ["benchmark", "source_id", "n_models", "n_wrong", "question", "options", "gold",
            *(c for c in ("structure_label",) if c in shown), "review_label", "review_subtype", "review_note"]
    return csv_frame(shown[cols]).to_csv(index=False)


def _candidates_table(flags: pd.DataFrame) -> pa.Table:
    """Every review candidate with its counts, text and reviewer fields (data/candidates/)."""
    shown = flags[flags["flagged"]].drop(columns=["flagged"]).reset_index(drop=True)
    shown["options"] = shown["options"].map(lambda o: list(o) if isinstance(o, (list, tuple)) else [])
    return pa.Table.from_pandas(shown, preserve_index=False)


def _finish(job: JobRun, cfg: LandscapeConfig, opts: RunOptions, results: pd.DataFrame, items: pd.DataFrame,
            probability: str, labels: pd.DataFrame | None, reference: pd.DataFrame | None,
            structure: StructurePrompt | None, classifier: ModelConfig | None, cache_root: str,
            failed: list[dict], manifest_extra: dict[str, Any]) -> str:
    """Flags, classifier, summary, report, manifest and the skip limits: the same for both modes."""
    from jobs.landscape.report import write_landscape_outputs  # presentation only: kept out of the workers

    with job.timer("summary"):
        flags, correct_by_bench = candidates(results, items, cfg, labels)
    verdicts, classifier_info = None, None
    if structure is not None and classifier is not None:
        flags, verdicts, classifier_info = classified(job, cfg, flags, structure, classifier, cache_root)
    answered = results[results["error"].isna()]
    skips = Skips.of(unusable_answers(pa.Table.from_pandas(results[[c for c in ERROR_COLUMNS if c in results]],
                                                           preserve_index=False)))
    with job.timer("summary"):
        summary = build_summary(job.run_id, cfg, results, flags, correct_by_bench, items, probability, reference, verdicts,
                                {"failed_models": failed, "rejected": manifest_extra["rejected"],
                                 "failed_answers": {**skips.to_json(), "answers": len(results)},
                                 "template": manifest_extra.get("template"),
                                 "unreadable_tasks": [{**u, "reason": clip_text(u["reason"])}
                                                      for u in manifest_extra.get("lm_eval", {}).get("unreadable", [])]})
    write_landscape_outputs(job, summary, _candidates_table(flags), _candidates_csv(flags), quiet=opts.log_level == "error")
    manifest = job.manifest(
        **manifest_extra, probability=probability, cache={"root": cache_root}, failed_models=failed,
        seeds={"sample": cfg.seed, "perturbations": cfg.seed, "mpd": cfg.seed},
        sample={"items_per_benchmark": cfg.items_per_benchmark(), "given": cfg.sample is not None},
        rows={"in": len(results), "out": len(answered), "skipped_by_reason": dict(skips.by_reason.most_common()), "unread": 0},
        failed_answers=skips.to_json(),
        review={"candidates": int(flags["flagged"].sum()) if len(flags) else 0, "labels": cfg.review_labels,
                "reference": cfg.reference, "classifier": classifier_info},
        outputs={"review_candidates": "review_candidates.csv"},
    )
    return job.commit_checked(manifest, skip_limits=lambda: job.check_skips(len(results), len(answered), len(results) - len(answered),
                                                                    0, failed, reasons=skips, unit="model answers"))


def run(cfg: LandscapeConfig, opts: RunOptions) -> str:
    """Run the landscape audit; returns the final run directory."""
    if cfg.from_lm_eval:
        return _run_lm_eval(cfg, opts)
    timer = StageTimer()
    with timer("plan"):
        template, template_source = _template(cfg)
        structure = structure_prompt(cfg)
        labels = read_review_labels(cfg.review_labels) if cfg.review_labels else None
        reference = read_reference(cfg.reference) if cfg.reference else None
        benchmarks = [load_benchmark(b.to_spec(), cfg) for b in cfg.benchmark_configs()]
        models = cfg.model_configs()
        for m in models:  # a hub model nobody can load fails here, before Ray starts
            check_available(m.spec, m.settings)
    cache_root = response_cache_root(cfg.cache, opts.out)
    payload = {"config": cfg.model_dump(exclude={"cache"}), "template_sha256": template.sha256,
               "inputs": {b.name: b.fingerprint for b in benchmarks}, "on_error": opts.on_error}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer) as job:
        with job.timer("prompts"):
            prompts, perturb_rejected = build_prompts(job, benchmarks, template, cfg)
        rejected = [r for b in benchmarks for r in b.rejected] + perturb_rejected
        job.write_table("rejected", pa.Table.from_pylist(rejected, schema=REJECTED_SCHEMA))
        n_prompts = prompts.count()
        extra = {
            "inputs": {b.name: {"files": list(b.files), "fingerprint": b.fingerprint, "preset": b.preset,
                                "rows_read": b.rows_read, "scorable": b.scorable, "sampled": len(b.items)} for b in benchmarks},
            "template": {"name": template.name, "version": template.version, "sha256": template.sha256, "source": template_source},
            "perturbations": {"names": cfg.perturbations, "params": cfg.perturbation_params(), "prompt_rows": n_prompts},
            "rejected": rejections(rejected),
        }
        if n_prompts == 0:
            job.write_json("manifest.json", job.manifest(**extra))
            raise JobError(f"{JOB}: no item can be scored ({len(rejected):,} left out, each with its reason in "
                           f"{job.path(DATA_DIR, 'rejected')})")
        tables, infos = [], {}
        steps = ModelSteps.of(job, n_prompts * len(models), cache_root)  # every model answers every prompt row
        for i, model in enumerate(models):
            try:
                with job.timer(f"model_{i:02d}"):
                    table, infos[model.name] = score_model(job, steps, prompts, n_prompts, model)
                tables.append(table)
            except ModelFailure as exc:
                infos[model.name] = exc.info or {"spec": model.spec, "requested_settings": model.settings}
                stop = steps.leave_out(exc, model.name, model.spec, n_prompts)
                if stop is not None:
                    job.write_json("manifest.json", job.manifest(**extra, models=infos, failed_models=steps.failed))
                    raise stop from exc
        failed = steps.failed
        if not tables:
            job.write_json("manifest.json", job.manifest(**extra, models=infos, failed_models=failed))
            raise JobError(f"{JOB}: no model answered; first: {failed[0]['error']}")
        results = as_results(pa.concat_tables(tables).to_pandas())
        return _finish(job, cfg, opts, results, _items_frame(benchmarks), FINAL_POSITION, labels, reference, structure,
                       cfg.classifier(models), cache_root, failed, {**extra, "models": infos})


def _run_lm_eval(cfg: LandscapeConfig, opts: RunOptions) -> str:
    from jobs.landscape.lm_eval_run import run_lm_eval

    return run_lm_eval(cfg, opts)
