"""``benchaudit docs template``: the nine-field documentation template, pre-filled from audit runs.

Why here and not in ``audit.docs.template``: the template renders a mapping of measured values;
turning a run's summary.json (a job's output format) into that mapping is wiring between jobs.
Only what a run measured is filled in; a benchmark or corpus the run does not hold is an error
naming the ones it does.
"""
from __future__ import annotations

from fsspec.core import url_to_fs

from audit.docs.template import render_template
from jobs.rundir import read_json

DECISION_METRICS = ("em", "f1", "bleu_acc", "rouge1_acc", "rouge2_acc", "rougeLsum_acc")


def read_summary(run: str, job: str) -> dict:
    """summary.json of a finished run of ``job``; another job's run is an error, not a silent mix-up."""
    fs, path = url_to_fs(f"{run.rstrip('/')}/summary.json")
    if not fs.exists(path):
        raise FileNotFoundError(f"{run}: no summary.json (not a finished benchaudit run directory)")
    summary = read_json(f"{run.rstrip('/')}/summary.json")
    if summary.get("job") != job:
        raise ValueError(f"{run}: a {summary.get('job')!r} run, expected a {job!r} run")
    return summary


def _pick(blocks: dict, name: str | None, what: str, run: str) -> str:
    if name is None and len(blocks) == 1:
        return next(iter(blocks))
    if name not in blocks:
        raise ValueError(f"{run}: choose the {what} with --{what} (one of {sorted(blocks)}), got {name!r}")
    return name


def from_conventions(summary: dict, benchmark: str | None, run: str) -> tuple[str, dict]:
    """(benchmark name, measured values) from a conventions summary."""
    name = _pick(summary["benchmarks"], benchmark, "benchmark", run)
    b = summary["benchmarks"][name]
    measured = {"n_items": b["n_items"], "convention_coverage": b["coverage"]}
    if b["american_share"] is not None:
        measured["american_share"] = b["american_share"]
        if b["american_share_ci"][0] is not None:
            measured["american_share_ci"] = tuple(b["american_share_ci"])
    if b["american_share_excl_spelling"] is not None:
        measured["american_share_excluding_spelling"] = b["american_share_excl_spelling"]
    shares = {c: v["share"] for c, v in b["by_category"].items() if v["share"] is not None}
    if shares:
        measured["american_share_by_category"] = shares
    return name, measured


def from_geo(summary: dict, corpus: str | None, run: str) -> dict:
    """Geographic coverage and the most represented countries of one corpus of a geo run."""
    name = _pick(summary["corpora"], corpus, "corpus", run)
    block = summary["corpora"][name]
    return {"geographic_coverage": block["coverage"], "countries": {t["name"]: t["share"] for t in block["top"]}}


def from_scorers(summary: dict, system: str | None, run: str) -> dict:
    """Mean variant-minus-original change of each scorer's decision metrics, over all variant types."""
    name = _pick(summary["systems"], system, "answers-set", run)
    rows = summary["systems"][name]["sensitivity"]
    return {"scorer_sensitivity": {f"{r['scorer']} {r['metric']} ({r['n_pairs']} valid variants)": r["mean_difference"]
                                   for r in rows if r["transformation_type"] == "all" and r["metric"] in DECISION_METRICS}}


def build_template(name: str | None, conventions_run: str | None = None, benchmark: str | None = None,
                   geo_run: str | None = None, corpus: str | None = None, scorers_run: str | None = None,
                   answers_set: str | None = None) -> str:
    """Markdown of the template for ``name`` (default: the conventions benchmark), pre-filled from the runs."""
    measured: dict = {}
    if conventions_run:
        bench, measured = from_conventions(read_summary(conventions_run, "conventions"), benchmark, conventions_run)
        name = name or bench
    if geo_run:
        measured.update(from_geo(read_summary(geo_run, "geo"), corpus, geo_run))
    if scorers_run:
        measured.update(from_scorers(read_summary(scorers_run, "scorers"), answers_set, scorers_run))
    if not name:
        raise ValueError("give --name (or --conventions-run, whose benchmark names the template)")
    return render_template(name, measured)
