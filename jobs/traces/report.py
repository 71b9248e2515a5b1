"""Trace-audit report (``coreset traces``): every number comes from summary.json."""
from __future__ import annotations

from jobs.common.pages.html import RunInfo, bar_chart, definitions, esc, fmt, note, page, pct, table

READING_NOTE = (
    "A step passes when its pattern matches anywhere in the trace (a trace without text passes no step). "
    "Pass rates are shares of all traces with that verdict, per model; the gap is the rate among correct "
    "verdicts minus the rate among incorrect ones: a large positive gap marks a step that successful "
    "reasoning takes and failing reasoning skips. Lexical checks say what a trace mentions, not whether "
    "its reasoning is sound: read the sample."
)
KAPPA_NOTE = (
    "Kappa is agreement beyond chance: 1 perfect, 0 what the category frequencies give by chance, below 0 "
    "worse than chance; undefined (–) when every rating falls in one category. Fleiss' kappa pools all "
    "raters; Cohen's kappa compares each pair."
)


def _audit_section(model: str, counts: dict, rows: list[dict]) -> str:
    labels, values = [], []
    for r in rows:
        for verdict in ("correct", "incorrect"):
            if r[f"pass_rate_{verdict}"] is not None:
                labels.append(f"{r['step']} · {verdict}")
                values.append(r[f"pass_rate_{verdict}"])
    return "".join([
        f"<section><h2>{esc(model)}</h2><p class=note>{counts['traces']:,} traces: {counts['correct']:,} correct, "
        f"{counts['incorrect']:,} incorrect verdicts</p>",
        table(["step", "passes (correct)", "pass rate (correct)", "passes (incorrect)", "pass rate (incorrect)", "gap (pp)"],
              [[esc(r["step"]), f"{r['passes_correct']:,} of {r['n_correct']:,}", pct(r["pass_rate_correct"]),
                f"{r['passes_incorrect']:,} of {r['n_incorrect']:,}", pct(r["pass_rate_incorrect"]),
                "–" if r["gap"] is None else f"{100 * r['gap']:+.1f}"] for r in rows]),
        bar_chart(labels, values, "Pass rate by step and verdict"),
        "</section>",
    ])


DEFINITIONS = [
    ("pass rate (correct / incorrect)", "traces whose text matches the step's pattern / all traces with that verdict, per model."),
    ("gap (pp)", "pass rate among correct verdicts minus among incorrect ones, in percentage points."),
    ("Fleiss' kappa, Cohen's kappa", "agreement beyond chance between raters (all raters pooled; each pair)."),
]


def render_traces_report(summary: dict, run: RunInfo | None = None) -> str:
    rubric, sample = summary["rubric"], summary["sample"]
    body = [
        note(f"{summary['traces']:,} traces · verdicts from {summary['verdict_source']} · rubric {rubric['file']}"
             + (f": {rubric['description']}" if rubric["description"] else "")),
        note(READING_NOTE), definitions(DEFINITIONS),
        "<h2>Rubric</h2>" + table(["step", "pattern", "ignore case"],
                                  [[esc(s["name"]), f"<code>{esc(s['pattern'])}</code>", fmt(s["ignore_case"])]
                                   for s in rubric["steps"]]),
    ]
    if summary["traces_without_text"]:
        body.append(f"<p class=note>Traces without text: {summary['traces_without_text']:,} (they pass no step).</p>")
    by_model: dict[str, list[dict]] = {}
    for row in summary["table"]:
        by_model.setdefault(row["model"], []).append(row)
    body += [_audit_section(model, summary["models"][model], rows) for model, rows in by_model.items()]
    body.append(
        "<h2>Outcome-stratified sample</h2>"
        f"<p class=note>trace_sample.csv holds up to {sample['per_outcome']:,} correct and {sample['per_outcome']:,} "
        f"incorrect traces per model ({sample['rows']:,} rows), drawn by seeded hash key (seed {sample['seed']}): "
        "the same traces for the same seed, whatever the file order. Failures are rare, so a random sample would "
        "show few of them.</p>"
        + table(["model", "correct", "incorrect"],
                [[esc(m), c.get("correct", 0), c.get("incorrect", 0)] for m, c in sample["by_model"].items()]))
    agreement = summary["agreement"]
    if agreement:
        body.append(
            "<h2>Agreement between raters</h2>"
            f"<p class=note>{agreement['subjects']:,} rated traces · raters {esc(', '.join(agreement['raters']))} · "
            f"categories {esc(', '.join(map(str, agreement['categories'])))}. {esc(KAPPA_NOTE)}</p>"
            + table(["", "kappa"], [["Fleiss' kappa (all raters)", fmt(agreement["fleiss_kappa"])]])
            + table(["rater a", "rater b", "Cohen's kappa", "rated traces"],
                    [[esc(r["rater_a"]), esc(r["rater_b"]), fmt(r["kappa"]), r["n"]] for r in agreement["pairwise_cohen"]]))
    else:
        body.append(f"<p class=note>Agreement: skipped ({esc(summary['skipped']['agreement'])}).</p>")
    return page("Reasoning-trace audit", "".join(body), run)
