"""The scorers report: every number comes from summary.json, nothing is computed here."""
from __future__ import annotations

from connectors.runs.tables import partition_segment
from jobs.common.pages.html import (
    RunInfo,
    bar_chart,
    definitions,
    esc,
    fmt,
    interval,
    interval_chart,
    note,
    page,
    pct,
    signed,
    table,
)

CAVEAT = (
    "Each accepted variant rewrites one convention of an answer (spelling, written-date order, 12/24-hour time, "
    "units at the stated precision) and nothing else; variants that would alter a name, a title or quoted text are "
    "rejected and listed. Variant and original are scored against the same gold references, so the difference is "
    "the scorer's reaction to the convention alone. With gold answers as originals, any loss is the scorer's."
)
DECISION_METRICS = ("em", "bleu_acc", "rouge1_acc", "rouge2_acc", "rougeLsum_acc")


def _definitions(min_questions: int) -> str:
    return definitions([
        ("original, variant", "the mean score of the original answers and of their accepted variants (0–1)."),
        ("difference", "mean of (variant score − original score) over pairs: negative means the scorer takes credit "
                       "away from a valid rewrite."),
        ("95% CI", "percentile bootstrap resampling questions (a question's variants move together); not shown (–) for "
                   f"fewer than {min_questions} questions, too few distinct resamples to bound a 95% interval."),
        ("changed", "share of pairs whose score moved; for EM and the TruthfulQA *_acc decisions, the share of "
                    "correctness decisions a valid variant flipped."),
        ("pairs, questions", "accepted (original, variant) pairs scored, and the questions they come from."),
    ])


def _overview(rows: list[dict]) -> str:
    """One row per scorer metric, one column per answer set: the difference and its interval."""
    systems = list(dict.fromkeys(r["system"] for r in rows))
    cells: dict[str, dict[str, str]] = {}
    for r in rows:
        key = f"{r['scorer']} {r['metric']}"
        cells.setdefault(key, {})[r["system"]] = (f"{signed(r['mean_difference'])} "
                                                  f"{interval(r['ci_low'], r['ci_high'], signed)}")
    return table(["scorer metric", *[f"{s}: difference [95% CI]" for s in systems]],
                 [[esc(k), *[v.get(s, "–") for s in systems]] for k, v in cells.items()], collapse_after=40, what="metrics")


def _system_section(name: str, s: dict, min_questions: int) -> str:
    parts = [f"<section><h2>{esc(name)}</h2>",
             note(f"{s['source']}: {s['n_answers']:,} answers to {s['n_questions']:,} questions; "
                  f"{s['n_questions_with_pairs']:,} questions have at least one accepted variant.")]
    if s["skipped"]:
        parts.append(note(f"{len(s['skipped'])} question(s) left out: "
                          + "; ".join(f"{k['question_id']} ({k['reason']})" for k in s["skipped"][:10])))
    everything = [r for r in s["sensitivity"] if r["transformation_type"] == "all"]
    parts.append(table(["scorer metric", "pairs", "questions", "original", "variant", "difference", "95% CI", "changed"],
                       [[esc(f"{r['scorer']} {r['metric']}"), r["n_pairs"], r["n_questions"], fmt(r["mean_original"]),
                         fmt(r["mean_variant"]), signed(r["mean_difference"]), interval(r["ci_low"], r["ci_high"], signed),
                         pct(r["share_changed"])] for r in everything], what="metrics"))
    parts.append(interval_chart([f"{r['scorer']} {r['metric']}" for r in everything], [r["mean_difference"] for r in everything],
                                [r["ci_low"] for r in everything], [r["ci_high"] for r in everything],
                                "Paired difference (variant − original), all transformations, with its 95% interval"))
    flips = [r for r in everything if r["metric"] in DECISION_METRICS]
    parts.append(bar_chart([f"{r['scorer']} {r['metric']}" for r in flips], [r["share_changed"] for r in flips],
                           "Share of correctness decisions flipped by a valid variant"))
    parts.append('<div class="flex"><div><h3>Variants</h3>' + table(
        ["transformation", "accepted", "rejected"], [[esc(t), c["accepted"], c["rejected"]] for t, c in s["variants"].items()])
        + "</div>")
    if s["rejection_reasons"]:
        parts.append("<div><h3>Why variants were rejected</h3>" + table(
            ["reason", "variants"], [[esc(r), n] for r, n in s["rejection_reasons"].items()], what="reasons") + "</div>")
    parts.append("</div>")
    by_kind = [r for r in s["sensitivity"] if r["transformation_type"] != "all"]
    undefined = sum(r.get("n_undefined") or 0 for r in s["sensitivity"])
    parts.append("<h3>By transformation type</h3>" + table(
        ["scorer metric", "transformation", "pairs", "questions", "original", "variant", "difference", "95% CI", "changed"],
        [[esc(f"{r['scorer']} {r['metric']}"), esc(r["transformation_type"]), r["n_pairs"], r["n_questions"],
          fmt(r["mean_original"]), fmt(r["mean_variant"]), signed(r["mean_difference"]),
          interval(r["ci_low"], r["ci_high"], signed), pct(r["share_changed"])] for r in by_kind],
        collapse_after=12, full_table=f"data/sensitivity/{partition_segment('system', name)}/", what="scorer × transformation rows"))
    if undefined:
        parts.append(note(f"{undefined:,} bootstrap replicates (over all rows) drew no pair of a row's transformation type; "
                          "they are left out of that row's interval (column n_undefined in data/sensitivity/)."))
    for status in ("accepted", "rejected"):
        rows = [[esc(e["question_id"]), esc(e["transformation"]), esc(e["original"]), esc(e["variant"]), esc(e["reason"])]
                for e in s["examples"].get(status, [])]
        if rows:
            parts.append(f"<h3>Examples: {status}</h3>" + table(["question", "transformation", "original", "variant", "reason"],
                                                                 rows, full_table="data/variants/", what="examples"))
    if s["failed_shards"]:
        parts.append("<h3>Failed shards (skipped)</h3>"
                     + table(["file", "error"], [[esc(f["file"]), esc(f["error"])] for f in s["failed_shards"]]))
    parts.append("</section>")
    return "".join(parts)


def render_scorers_report(summary: dict, run: RunInfo | None = None) -> str:
    boot, bench = summary["bootstrap"], summary["benchmark"]
    min_questions = summary.get("min_questions_for_interval", 5)
    body = [note(f"Benchmark {bench['name']} ({bench['n_questions']:,} questions) · scorers {', '.join(summary['scorers'])} · "
                 f"bootstrap {boot['replicates']:,} replicates over questions, seed {boot['seed']}, level {boot['level']}"),
            note(CAVEAT),
            "<h2>Paired difference per scorer metric, all transformations</h2>", _overview(summary["table"]),
            _definitions(min_questions)]
    body += [_system_section(name, block, min_questions) for name, block in summary["systems"].items()]
    return page("Scorer sensitivity to valid answer variants", "".join(body), run)
