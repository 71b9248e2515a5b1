"""The scorers report: every number comes from summary.json, nothing is computed here."""
from __future__ import annotations

from jobs.html import bar_chart, esc, fmt, page, pct, table

CAVEAT = (
    "Each accepted variant rewrites one convention of an answer (spelling, written-date order, 12/24-hour time, "
    "units at the stated precision) and nothing else; variants that would alter a name, a title or quoted text are "
    "rejected and listed. Variant and original are scored against the same gold references, so the difference is "
    "the scorer's reaction to the convention alone. With gold answers as originals, any loss is the scorer's. "
    "Intervals are percentile bootstraps resampling questions (a question's variants move together)."
)
DECISION_METRICS = ("em", "bleu_acc", "rouge1_acc", "rouge2_acc", "rougeLsum_acc")


def _ci(row: dict) -> str:
    if row["ci_low"] is None:
        return "–"
    return f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"


def _sensitivity_rows(rows: list[dict]) -> list[list]:
    return [[esc(r["scorer"]), esc(r["metric"]), esc(r["transformation_type"]), r["n_pairs"], r["n_questions"],
             fmt(r["mean_original"]), fmt(r["mean_variant"]), f"{r['mean_difference']:+.3f}", _ci(r),
             pct(r["share_changed"]), r["n_undefined"]] for r in rows]


def _system_section(name: str, s: dict) -> str:
    parts = [f"<section><h2>{esc(name)}</h2>",
             f"<p class=note>{esc(s['source'])}: {s['n_answers']:,} answers to {s['n_questions']:,} questions; "
             f"{s['n_questions_with_pairs']:,} questions have at least one accepted variant.</p>"]
    if s["skipped"]:
        parts.append(f"<p class=note>{len(s['skipped'])} question(s) left out: "
                     + esc("; ".join(f"{k['question_id']} ({k['reason']})" for k in s["skipped"][:10])) + "</p>")
    parts.append("<h3>Variants</h3>" + table(
        ["transformation", "accepted", "rejected"], [[esc(t), c["accepted"], c["rejected"]] for t, c in s["variants"].items()]))
    if s["rejection_reasons"]:
        parts.append("<h3>Why variants were rejected</h3>" + table(
            ["reason", "variants"], [[esc(r), n] for r, n in list(s["rejection_reasons"].items())[:20]]))
    flips = [r for r in s["sensitivity"] if r["transformation_type"] == "all" and r["metric"] in DECISION_METRICS]
    parts.append(bar_chart([f"{r['scorer']} {r['metric']}" for r in flips], [r["share_changed"] for r in flips],
                           "Share of correctness decisions flipped by a valid variant"))
    parts.append("<h3>Paired differences (variant − original) per scorer and transformation</h3>" + table(
        ["scorer", "metric", "transformation", "pairs", "questions", "original", "variant", "difference", "95% CI",
         "changed", "undefined replicates"], _sensitivity_rows(s["sensitivity"])))
    for status in ("accepted", "rejected"):
        rows = [[esc(e["question_id"]), esc(e["transformation"]), esc(e["original"]), esc(e["variant"]), esc(e["reason"])]
                for e in s["examples"].get(status, [])]
        if rows:
            parts.append(f"<h3>Examples: {status}</h3>" + table(["question", "transformation", "original", "variant", "reason"], rows))
    if s["failed_shards"]:
        parts.append("<h3>Failed shards (skipped)</h3>" + table(["shard", "error"], [[esc(f["shard"]), esc(f["error"])] for f in s["failed_shards"]]))
    parts.append("</section>")
    return "".join(parts)


def render_scorers_report(summary: dict) -> str:
    boot, bench = summary["bootstrap"], summary["benchmark"]
    rows = [[esc(r["system"]), esc(r["scorer"]), esc(r["metric"]), r["n_pairs"], r["n_questions"], fmt(r["mean_original"]),
             fmt(r["mean_variant"]), f"{r['mean_difference']:+.3f}", _ci(r), pct(r["share_changed"])] for r in summary["table"]]
    body = [f"<p class=note>Run {esc(summary['run_id'])} · benchmark {esc(bench['name'])} ({bench['n_questions']:,} questions) · "
            f"scorers {esc(', '.join(summary['scorers']))} · bootstrap {boot['replicates']:,} replicates over questions, "
            f"seed {boot['seed']}, level {boot['level']}</p>",
            f"<p class=note>{esc(CAVEAT)}</p>",
            table(["answers", "scorer", "metric", "pairs", "questions", "mean original", "mean variant", "difference",
                   "95% CI", "changed"], rows)]
    body += [_system_section(name, block) for name, block in summary["systems"].items()]
    return page("Scorer sensitivity to valid answer variants", "".join(body))
