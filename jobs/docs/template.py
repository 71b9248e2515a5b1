"""``benchaudit docs template``: the nine-field documentation template, pre-filled from audit runs.

Why here and not in ``audit.docs.template``: the template renders a mapping of measured values;
turning a run's summary.json (a job's output format) into that mapping is wiring between jobs.
Only what a run measured is filled in; a benchmark or corpus the run does not hold is an error
naming the ones it does, and a run of several needs the one the template documents named
(``--geo-corpus coco2017_val``).
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from jobs.common.cli.config import Flag, JobConfig, RunOptions

RUNS = "runs to fill the template from"

DECISION_METRICS = ("em", "f1", "bleu_acc", "rouge1_acc", "rouge2_acc", "rougeLsum_acc")


def _pick(blocks: dict, name: str | None, what: str, flag: str, run: str) -> str:
    """The one block a run holds, or the one ``--<flag>`` names: the template documents one benchmark,
    so a run of several (the default geo run: coco2017_val and cc3m_val) needs the user to say which
    is its; the error gives the flag ready to paste."""
    if name is None and len(blocks) == 1:
        return next(iter(blocks))
    names = sorted(blocks)
    if name is None:
        many = "corpora" if what == "corpus" else f"{what}s"
        raise ValueError(f"{run} holds {len(names)} {many} ({', '.join(names)}): choose the one this template documents "
                         f"with --{flag}, e.g. --{flag} {names[0]}")
    if name not in blocks:
        raise ValueError(f"--{flag} {name}: {run} holds no {what} {name!r}; it holds {', '.join(names)}")
    return name


def from_conventions(summary: dict, benchmark: str | None, run: str) -> tuple[str, dict]:
    """(benchmark name, measured values) from a conventions summary."""
    name = _pick(summary["benchmarks"], benchmark, "benchmark", "conventions-benchmark", run)
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
    name = _pick(summary["corpora"], corpus, "corpus", "geo-corpus", run)
    block = summary["corpora"][name]
    return {"geographic_coverage": block["coverage"], "countries": {t["name"]: t["share"] for t in block["top"]}}


def from_scorers(summary: dict, system: str | None, run: str) -> dict:
    """Mean variant-minus-original change of each scorer's decision metrics, over all variant types."""
    name = _pick(summary["systems"], system, "answer set", "scorers-answer-set", run)
    rows = summary["systems"][name]["sensitivity"]
    return {"scorer_sensitivity": {f"{r['scorer']} {r['metric']} ({r['n_pairs']} valid variants)": r["mean_difference"]
                                   for r in rows if r["transformation_type"] == "all" and r["metric"] in DECISION_METRICS}}


class TemplateConfig(JobConfig):
    """Which runs fill the template, and where it goes."""

    conventions_run: Annotated[str | None, Flag(RUNS, metavar="DIR")] = Field(None, description="a finished conventions run")
    conventions_benchmark: Annotated[str | None, Flag(RUNS, requires="conventions_run", deprecated=("--benchmark",),
                                                      default_text="its only benchmark")] = Field(
        None, description="benchmark of the conventions run (needed when it holds several)")
    geo_run: Annotated[str | None, Flag(RUNS, metavar="DIR")] = Field(
        None, description="a finished geo run (geographic coverage)")
    geo_corpus: Annotated[str | None, Flag(RUNS, requires="geo_run", deprecated=("--corpus",), default_text="its only corpus")] = Field(
        None, description="corpus of the geo run (needed when it holds several)")
    scorers_run: Annotated[str | None, Flag(RUNS, metavar="DIR")] = Field(
        None, description="a finished scorers run (scorer sensitivity)")
    scorers_answer_set: Annotated[str | None, Flag(RUNS, requires="scorers_run", deprecated=("--answers-set",),
                                                   default_text="its only answer set")] = Field(
        None, description="answer set of the scorers run (needed when it holds several)")
    name: Annotated[str | None, Flag("output", default_text="the conventions benchmark")] = Field(
        None, description="benchmark name in the title")
    to: Annotated[str | None, Flag("output", metavar="FILE", deprecated=("--out",), default_text="standard output")] = Field(
        None, description="Markdown file to write")


def build_template(cfg: TemplateConfig) -> str:
    """Markdown of the template for ``cfg.name`` (default: the conventions benchmark), pre-filled from the runs."""
    from audit.docs.template import render_template
    from connectors.runs.finished import read_run_summary

    measured: dict = {}
    name = cfg.name
    if cfg.conventions_run:
        summary = read_run_summary(cfg.conventions_run, "conventions")
        bench, measured = from_conventions(summary, cfg.conventions_benchmark, cfg.conventions_run)
        name = name or bench
    if cfg.geo_run:
        measured.update(from_geo(read_run_summary(cfg.geo_run, "geo"), cfg.geo_corpus, cfg.geo_run))
    if cfg.scorers_run:
        measured.update(from_scorers(read_run_summary(cfg.scorers_run, "scorers"), cfg.scorers_answer_set, cfg.scorers_run))
    if not name:
        raise ValueError("give --name (or --conventions-run, whose benchmark names the template)")
    from connectors.io.markup import md_text  # not at module level: the CLI parser imports this module

    # names from a run's summary (a shared run root) or the command line are shown, never rendered as Markdown
    shown = {k: {md_text(n): v for n, v in x.items()} if isinstance(x, dict) else x for k, x in measured.items()}
    return render_template(md_text(name), shown)


def run(cfg: TemplateConfig, opts: RunOptions) -> str:
    """Write the template to ``--to`` (the line printed says where), or return it for standard output."""
    from connectors.runs.rundir import write_text

    text = build_template(cfg)
    if cfg.to is None:
        return text.rstrip("\n")
    write_text(cfg.to, text)
    return f"template: {cfg.to}"
