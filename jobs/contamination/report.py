"""The contamination report: every number comes from summary.json, nothing is computed here.

Views, after the reference study: models above their clean baseline and the mean positive excess
per r; each model's trajectory (gain over its own baseline) across r; summed wrong->correct and
correct->wrong transitions across r, with where their order reverses; then score level against
score credibility (scatter and the per-model table), the trend, and everything missing.
"""
from __future__ import annotations

from collections.abc import Sequence

from jobs.common.pages.html import RunInfo, bar_chart, esc, fmt, line_chart, note, page, pct, scatter, table

CAVEAT = (
    "Each question reaches the worker only through routers. In the clean condition (forward_full) one router relays the "
    "problem completely; in the noisy condition r routers each drop part of the useful information, rewrite it and add "
    "noise, and the worker answers from their combined outputs. Without contamination, noisy accuracy should at most "
    "approach the clean baseline: a model that does better from less information (a violation, gain > 0) is suspected of "
    "answering from memory of the benchmark rather than from the question. Every figure of a model is on its shared "
    "questions, those it answered in the clean and in every one of its noisy settings, so its level is the baseline of "
    "each of its cells; unparsable answers count as wrong; failed, timed-out and blocked cells are left out and listed below."
)


def by_r(rs: Sequence[int], series: dict[str, Sequence[float | None]]) -> dict[str, list[tuple[str, float | None]]]:
    """Series over r as ``jobs.common.pages.html.line_chart`` draws them (x labelled "r = 1", ...)."""
    return {name: [(f"r = {r}", v) for r, v in zip(rs, values)] for name, values in series.items()}


def _excess(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def reversal_text(summary: dict) -> str:
    """Where summed wrong->correct overtakes correct->wrong, in words."""
    rev, m = summary["reversal"], summary["m"]
    first, sustained = rev["first_r"], rev["sustained_from_r"]
    if first is None:
        where = "at r = 1, the only setting" if m == 1 else f"at any r from 1 to {m}"
        return f"Wrong→correct never exceeds correct→wrong (summed over models) {where}."
    text = (f"Wrong→correct first exceeds correct→wrong (summed over models) at r = {first}"
            + (f", after r = 1–{first - 1} where it does not" if first > 1 else ""))
    if m == 1:
        return text + ", the only setting."
    if sustained is None:
        return text + f"; it does not stay ahead through r = {m}."
    if sustained == first:
        return text + f", and stays ahead through r = {m}."
    return text + f"; it falls back behind in between and stays ahead from r = {sustained} through r = {m}."


def significance_text(summary: dict) -> str:
    """What "significantly above baseline" means in this run, in words (from summary.json's significance block)."""
    sig = summary["significance"]
    return (f"Significantly above baseline: gain > 0 and a Holm-adjusted {sig['test']} below {sig['alpha']:g}, the family "
            f"being {sig['family']} ({sig['family_size']} tests). The family-wise error rate over all of them is at most "
            f"{sig['alpha']:g}, so the per-model and per-r counts and their total ({sig['significant_above_baseline']}) are "
            f"all controlled. \"Above baseline\" without \"significantly\" is a point estimate (gain > 0, no test; "
            f"{sig['above_baseline_point_estimate']} cells): at small n most such cells are noise.")


def _per_r_section(summary: dict) -> str:
    per_r = summary["per_r"]
    rs = [row["r"] for row in per_r]
    counts = bar_chart([f"r = {r}" for r in rs], [row["n_violators"] for row in per_r],
                       "Models above their clean baseline (point estimates), per r", value_fmt=lambda v: f"{int(v)}")
    excess = line_chart(by_r(rs, {"over violators": [row["mean_excess_violators"] for row in per_r],
                                  "over all models": [row["mean_excess_all_models"] for row in per_r]}),
                        "Mean positive excess per r (accuracy − clean baseline)", value_fmt=lambda v: f"{v:.3f}")
    rows = [[row["r"], f"{row['n_violators']} of {row['n_models']}", pct(row["share_violators"]),
             row["n_significant"],
             _excess(row["mean_excess_violators"]), _excess(row["mean_excess_all_models"]), _excess(row["mean_gain"]),
             row["improve"], row["degrade"], f"{row['net']:+d}"] for row in per_r]
    return ("<section><h2>Models above baseline and mean positive excess, per r</h2>"
            f"<p class=note>{esc(significance_text(summary))}</p>"
            "<p class=note>Mean positive excess is given twice: over the violating models only (how large a violation is "
            "when it occurs; the reference study's figure) and over all models with that cell (max(gain, 0) averaged: how "
            "much the field gains).</p>"
            + table(["r", "models above baseline (point estimate)", "share", "significantly above baseline",
                     "mean excess (violators)", "mean excess (all models)", "mean gain", "wrong→correct", "correct→wrong",
                     "net"], rows)
            + f"<div class=flex>{counts}{excess}</div></section>")


def _transitions_section(summary: dict) -> str:
    per_r = summary["per_r"]
    rs = [row["r"] for row in per_r]
    chart = line_chart(by_r(rs, {"wrong→correct (improve)": [row["improve"] for row in per_r],
                                 "correct→wrong (degrade)": [row["degrade"] for row in per_r]}),
                       "Question-level transitions against the clean baseline, summed over models (questions)")
    trend = summary["trend"]
    if trend is None:
        trend_text = "Too few settings (fewer than two r values) for a trend."
    else:
        trend_text = (f"Trend of (wrong→correct − correct→wrong) over r: slope {trend['slope']:+.2f} questions per added "
                      f"router, {100 * trend['level']:g}% interval [{trend['low']:+.2f}, {trend['high']:+.2f}] "
                      f"(question-clustered bootstrap, {trend['n_replicates']:,} replicates, seed {trend['seed']}, "
                      f"{trend['n_questions']} questions); the interval "
                      + ("excludes 0." if trend["excludes_zero"] else "includes 0."))
    return (f"<section><h2>Improve / degrade over r</h2><p><strong>{esc(reversal_text(summary))}</strong></p>{chart}"
            f"<p class=note>{esc(trend_text)} Identity gain = (improve − degrade) / n holds in every cell up to "
            f"{summary['identity_max_residual']:.1e}.</p></section>")


def _trajectories_section(summary: dict) -> str:
    cells, rs = summary["cells"], list(range(1, summary["m"] + 1))
    models = [row["model"] for row in summary["per_model"]]
    gain = {(c["model"], c["r"]): c["gain"] for c in cells}
    chart = line_chart(by_r(rs, {model: [gain.get((model, r)) for r in rs] for model in models}),
                       "Per-model gain over its own clean baseline (noisy accuracy − clean accuracy)",
                       reference=(0.0, "clean baseline"))  # ticks in one format with the decimals they need
    violation = {(c["model"], c["r"]): c["violation"] for c in cells}
    rows = [[esc(m)] + [("–" if gain.get((m, r)) is None else
                         (f"<strong>{gain[(m, r)]:+.2f}</strong>" if violation[(m, r)] else f"{gain[(m, r)]:+.2f}")) for r in rs]
            for m in models]
    return ("<section><h2>Per-model trajectories against the baseline</h2>" + chart
            + "<p class=note>Gain per model and r; bold: above the clean baseline (point estimate); –: no paired question "
              "(see what is missing).</p>"
            + table(["model"] + [f"r = {r}" for r in rs], rows) + "</section>")


def _level_section(summary: dict) -> str:
    rows = summary["table"]
    points = [(row["level"], row["breadth"], row["model"]) for row in rows if row["level"] is not None]
    chart = scatter(points, "Score level against credibility", "level: clean (forward_full) accuracy, shared questions",
                    f"breadth: settings above baseline (point estimate), of {summary['m']}")
    per_model = {row["model"]: row for row in summary["per_model"]}
    body = []
    for row in rows:
        pm = per_model[row["model"]]
        lost = pm["n_clean"] - pm["n_shared"]
        body.append([esc(row["model"]), pct(row["level"]), pm["n_shared"],
                     f"{pct(pm['clean_accuracy_all'])} on {pm['n_clean']}" + (f" ({lost} lost by noisy settings)" if lost else ""),
                     f"{row['breadth']} of {row['settings']}" + (f" (M = {row['m']})" if row["settings"] != row["m"] else ""),
                     row["significant_above_baseline"], _excess(row["mean_excess"]), _excess(row["max_excess"]),
                     _excess(pm["mean_gain"]), ", ".join(map(str, pm["missing_settings"])) or "none"])
    return ("<section><h2>Level vs credibility: the per-model table</h2>"
            "<p class=note>Level is the clean accuracy on the model's shared questions (answered in the clean and in every "
            "one of its noisy settings), the baseline every one of its cells is compared with; the clean accuracy on every "
            "question it answered clean is beside it, with how many questions the noisy settings lost. Credibility is how "
            "often (breadth, a point estimate) and how far (mean and max excess over the violating settings) noisy routing "
            "beats it; the settings significantly above baseline are tested (Holm over every model × r cell, family-wise "
            f"error rate {summary['alpha']:g}). Compare models of similar level by these.</p>"
            + table(["model", "level", "shared questions", "clean accuracy (all clean questions)",
                     "breadth (above baseline, point estimate)", "significantly above baseline", "mean excess", "max excess",
                     "mean gain", "missing settings"], body)
            + chart + "</section>")


def _missing_section(summary: dict) -> str:
    parts = ["<section><h2>What is missing</h2>"]
    totals = summary["status_totals"]
    meanings = summary["status_meanings"]
    parts.append(table(["category", "cells", "meaning"], [[esc(k), totals[k], esc(meanings[k])] for k in totals]))
    missing = summary["missing"]
    if missing:
        parts.append(f"<p><strong>{len(missing)} model × r cell(s) have no paired question</strong> and are left out of the "
                     "per-r and per-model figures (their counts say how many cells they cover):</p>"
                     + table(["model", "r", "reason"], [[esc(c["model"]), c["r"], esc(c["reason"])] for c in missing]))
    else:
        parts.append("<p>Every model × r cell has paired questions.</p>")
    unscored = [c for c in summary["categories"] if any(c[k] for k in ("empty_router", "failed", "timeout", "no_options"))
                or c["absent"] or c["unparsable"]]
    if unscored:
        parts.append("<h3>Cells with unscored, unparsable or absent rows</h3>" + table(
            ["model", "condition", "r", "answered", "unparsable", "empty router", "failed", "timeout", "no options", "absent"],
            [[esc(c["model"]), esc(c["condition"]), c["r"], c["answered"], c["unparsable"], c["empty_router"], c["failed"],
              c["timeout"], c["no_options"], c["absent"]] for c in unscored]))
    sample = summary.get("sample")
    if sample is not None:
        skipped = sample["skipped"]
        text = ", ".join(f"{v['count']} {k} ({v['meaning']})" for k, v in skipped.items()) or "none"
        parts.append(f"<p class=note>Sample: {sample['n']} of {sample['eligible']} eligible items ({sample['population']} read), "
                     f"seed {sample['seed']}; items not eligible: {esc(text)}.</p>")
    calls = summary.get("calls")
    if calls is not None:
        rows = [[role, c["calls"], c["cache_hits"], c["computed"], c["failed"], c["timeout"], c["empty_outputs"],
                 c["prompt_tokens"], c["completion_tokens"]] for role, c in (("router", calls["router"]), ("worker", calls["worker"]))]
        parts.append("<h3>Calls</h3>" + table(["role", "calls", "cache hits", "computed", "failed", "timed out", "empty output",
                                               "prompt tokens", "completion tokens"], rows))
        blocked = calls["worker"]["blocked_cells"]
        if blocked:
            parts.append(f"<p class=note>Cells that made no worker call: {esc(', '.join(f'{v} {k}' for k, v in blocked.items()))}.</p>")
        parts.append(_unusable_section(summary))
    parts.append("</section>")
    return "".join(parts)


def _cells_section(summary: dict) -> str:
    rows = [[esc(c["model"]), c["r"], c["n"], pct(c["baseline"]), pct(c["accuracy"]), _excess(c["gain"]), c["improve"], c["degrade"],
             fmt(c["mcnemar_p"], 4), fmt(c["holm_p"], 4), "yes" if c["significant"] else "no"] for c in summary["cells"]]
    family = summary["significance"]["family_size"]
    return ("<section><h2>Every cell</h2>" + table(["model", "r", "questions", "baseline", "accuracy", "gain", "wrong→correct",
                                                    "correct→wrong", "McNemar p", f"Holm p (family of {family} cells)",
                                                    "significantly above baseline"], rows) + "</section>")


def _header(summary: dict) -> str:
    h = summary["overview"]
    if summary["mode"] == "outcomes":
        source = summary["outcomes"]
        where = (f"re-analysis of {esc(source['source'])} ({source['rows']:,} rows, fingerprint "
                 f"{esc(source['fingerprint'][:12])}…): no model was called")
    else:
        d = summary["design"]
        models = "; ".join(f"{esc(m['worker'])}" + (f" (routed by {esc(m['router'])})" if m["router"] != m["worker"] else "")
                           for m in d["models"])
        prompts = ", ".join(f"{esc(k)} v{esc(v['version'])} {esc(v['sha256'][:10])}…" for k, v in summary["prompts"].items())
        where = (f"benchmark {esc(summary['benchmark']['name'])}; {d['design']} design; models: {models}; prompts: {prompts}")
    return (f"<p class=note>Run {esc(summary['run_id'])} · {where} · {h['models']} model(s), {h['n_questions']} questions, "
            f"r = 1…{h['m']}</p><p class=note>{esc(CAVEAT)}</p>")


def _reasons(block: dict, k: int = 3) -> str:
    return "; ".join(f"{n:,} × {reason}" for reason, n in list(block["by_reason"].items())[:k])


def unusable_text(summary: dict) -> list[str]:
    """Why answers are missing, in words, before any figure: unusable router and worker answers with their
    top reasons, and, when no cell was scored, that the figures are empty and why."""
    calls = summary.get("calls")
    if not calls or "unusable" not in calls["router"]:
        return []
    lines = []
    for role in ("router", "worker"):
        block, made = calls[role]["unusable"], calls[role]["calls"]
        if block["total"]:
            every = "All" if block["total"] == made else f"{block['total']:,} of"
            lines.append(f"{every} {made:,} {role} answers were unusable ({_reasons(block)}).")
    totals = summary["status_totals"]
    if not totals["answered"] + totals["unparsable"]:
        blocked = sum(calls["worker"]["blocked_cells"].values())
        lines.append(f"No cell was scored ({blocked:,} of {calls['worker']['cells']:,} cells made no worker call), so this "
                     "report has no figures: the reasons above say why.")
    elif lines:
        lines.append("Cells fed by an unusable router output made no worker call, and unparsable worker answers count as "
                     "wrong; every reason is in manifest.json (calls.*.unusable) and what is missing is listed below.")
    return lines


def _unusable_section(summary: dict) -> str:
    calls = summary.get("calls")
    if not calls or "unusable" not in calls["router"] or not calls["total"]["unusable"]["total"]:
        return ""
    rows = [[role, esc(reason), n, esc(calls[role]["unusable"]["examples"].get(reason, ""))]
            for role in ("router", "worker") for reason, n in calls[role]["unusable"]["by_reason"].items()]
    return "<h3>Unusable answers by reason</h3>" + table(["role", "reason", "answers", "example"], rows)


def render_contamination_report(summary: dict, run: RunInfo | None = None) -> str:
    warnings = "".join(note(line, warn=True) for line in unusable_text(summary))
    totals = summary["status_totals"]
    if summary["mode"] == "models" and not totals["answered"] + totals["unparsable"]:
        body = [_header(summary), warnings, _missing_section(summary)]  # nothing scored: no empty charts
    else:
        body = [_header(summary), warnings, _per_r_section(summary), _trajectories_section(summary),
                _transitions_section(summary), _level_section(summary), _missing_section(summary), _cells_section(summary)]
    return page("Contamination sensitivity: routers, a worker, and above-baseline anomalies", "".join(body), run)
