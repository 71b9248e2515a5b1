"""HT-Coreset reports (build, estimate, study): every number comes from summary.json."""
from __future__ import annotations

from audit.coreset.diagnostics import FAILURE_CATEGORIES
from jobs.common.pages.html import RunInfo, bar_chart, definitions, esc, fmt, note, page, pct, table

SAMPLER_NOTE = (
    "uniform_ht: one negative stratum, HT weights · difficulty_ht: difficulty strata over all negatives · "
    "ht_coreset: hard-negative stratum plus difficulty strata · ht_coreset_unweighted: the HT-Coreset draws "
    "with weight 1 (what a small balanced subset reports without weights)."
)
READING_NOTE = (
    "Recall is exact: every positive is in the coreset. Precision, F1 and lift are ratio estimators over "
    "the HT estimate of false positives (consistent, not unbiased). SE is the linearised (delta-method) "
    "sampling SE; the interval is the conservative one (exact hypergeometric bounds per sampled stratum, "
    "Bonferroni over strata × runs × comparisons), covering at least 95% for each cell on its own. "
    "Run SD is the spread between runs (seeds) of one model, never mixed into the SE. The unweighted subset "
    "column is what the coreset rows say without weights: not an estimate of the full table."
)

TAXONOMY_NOTE = (
    "Each (row, run) falls in one category: correct; over_prediction (positive verdict on a negative); "
    "under_prediction (negative verdict on a positive); wrong_group (a detected positive attributed to another "
    "group); no_response (nothing came back: null or blank raw response); unparsable (text came back but no "
    "verdict was parsed). Counts describe the coreset rows the model saw; negatives are over-represented there, "
    "so they are not full-table rates."
)


def _pp(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def _value(value: float | None, metric: str) -> str:
    """Percentage points for precision/recall/F1, a ratio for lift, a count for FP."""
    if value is None:
        return "–"
    return f"{value:,.1f}" if metric == "fp" else (f"{value:,.3f}" if metric == "lift" else _pp(value))


def _interval(lower: float | None, upper: float | None, metric: str) -> str:
    if lower is None or upper is None:
        return "–"
    return f"[{_value(lower, metric)}, {_value(upper, metric)}]"


def _strata_table(strata: list[dict]) -> str:
    return table(
        ["stratum", "population N_h", "drawn n_h", "inclusion π", "weight w", "census"],
        [[esc(s["stratum"]), s["population"], s["sample"], fmt(s.get("pi"), 6), fmt(s.get("w"), 3),
          "yes" if s.get("census") else ""] for s in strata],
    )


BUILD_DEFINITIONS = [
    ("population N_h, drawn n_h", "targets in the stratum, and rows of the stratum in the coreset."),
    ("inclusion π", "n_h / N_h: the chance a target of the stratum is in the coreset (1 for a census)."),
    ("weight w", "N_h / n_h = 1/π: how many targets of the full table each coreset row stands for."),
    ("reduction", "targets / coreset rows."),
    ("difficulty", "1 − 2·|p − 0.5| of the ensemble score p: 1 at p = 0.5, 0 at p = 0 or 1."),
]
ESTIMATE_DEFINITIONS = [
    ("HT estimate", "the full-table metric from the coreset rows weighted by w (Horvitz–Thompson)."),
    ("SE", "the linearised (delta-method) sampling standard error."),
    ("conservative interval", "exact hypergeometric bounds per sampled stratum, Bonferroni over strata × runs × "
                              "comparisons: the interval to quote."),
    ("run SD", "spread between runs (seeds) of one model, kept apart from the SE."),
    ("unweighted subset", "the metric of the coreset rows without weights: not an estimate of the full table."),
    ("predict-all floor", "the metric of a model that flags everything: P = prevalence, R = 1."),
]
STUDY_DEFINITIONS = [
    ("bias, MAE, RMSE, SD", "over the draws, of the estimate against the full-table truth, in percentage points."),
    ("mean SE, mean width", "the estimator's own SE and conservative-interval width, averaged over draws (pp)."),
    ("coverage", "share of draws whose conservative interval holds the truth, with its Monte-Carlo SE."),
    ("Wald coverage", "the same for estimate ± 1.96 SE."),
]


def render_build_report(summary: dict, run: RunInfo | None = None) -> str:
    facts = [
        ["targets", summary["targets"]], ["positives (census)", summary["positives"]],
        ["prevalence", pct(summary["prevalence"], 4)], ["negative budget B", summary["budget"]],
        ["coreset rows", summary["coreset_rows"]], ["reduction", f"{summary['reduction']:,.1f}×"],
        ["operating threshold τ", fmt(summary["tau"], 4)], ["hard cut c·τ", fmt(summary["hard_cut"], 4)],
        ["easy-pool difficulty bounds", esc(", ".join(f"{b:.6g}" for b in summary["easy_bounds"]) or "–")],
        ["at percentiles", esc(", ".join(f"{q:g}" for q in summary["easy_percentiles"]) or "–")],
        ["draw seed", summary["seed"]],
    ]
    strata = summary["strata"]
    body = [
        note(f"Dataset {summary.get('dataset', '')} · input {summary['input']}"),
        table(["", "value"], facts), definitions(BUILD_DEFINITIONS),
        "<h2>Strata</h2>", _strata_table(strata),
        bar_chart([s["stratum"] for s in strata], [float(s["sample"]) for s in strata], "Rows drawn per stratum",
                  value_fmt=lambda v: f"{v:,.0f}"),
        f"<p class=note>Weights are N_h/n_h from the realised draw. Σw over drawn negatives = "
        f"{summary['negative_weight_sum']:,.0f} = the negative population ({summary['negatives']:,}); this holds "
        "for any partition, so it is a bookkeeping check, not a correctness test.</p>",
    ]
    return page("HT-Coreset design", "".join(body), run)


def render_estimate_report(summary: dict, run: RunInfo | None = None) -> str:
    body = [
        note(f"Design {summary['design']} · {summary['targets']:,} targets, {summary['positives']:,} positives (prevalence "
             f"{pct(summary['prevalence'], 4)}), {summary['coreset_rows']:,} coreset rows · α = {fmt(summary['alpha'])}"),
        note(f"{READING_NOTE} Percentages are percentage points; lift is a ratio; FP is a count."),
        definitions(ESTIMATE_DEFINITIONS),
    ]
    by_predictor: dict[str, list[dict]] = {}
    for row in summary["estimates"]:
        by_predictor.setdefault(row["predictor"], []).append(row)
    for name, rows in by_predictor.items():
        detail = summary["predictors"][name]
        body.append(f"<section><h2>{esc(name)}</h2><p class=note>{esc(detail['source'])} · runs: "
                    f"{esc(', '.join(detail['runs']))}</p>")
        body.append(table(
            ["metric", "HT estimate", "SE", "conservative 95% interval", "run SD", "unweighted subset", "predict-all floor"],
            [[esc(r["metric"]), _value(r["estimate"], r["metric"]), _value(r["se"], r["metric"]),
              _interval(r["lower"], r["upper"], r["metric"]), _value(r["run_sd"], r["metric"]),
              _value(r["subset_unweighted"], r["metric"]), _value(r["predict_all_floor"], r["metric"])] for r in rows],
        ))
        if detail["missing_counted_negative"]:
            body.append(f"<p class=note>{detail['missing_counted_negative']:,} missing predictions were counted as negative.</p>")
        if detail["sparse_strata"]:
            listed = ", ".join(f"{s['stratum']} ({', '.join(map(str, s['positive_predictions_per_run']))})"
                               for s in detail["sparse_strata"])
            body.append(note(f"Sampled strata with fewer than {summary['sparse_count']} positive predictions per run: {listed}. "
                             "The SE treats their variance as (nearly) zero and is too small here: read the conservative "
                             "interval.", warn=True))
        if detail.get("group_recall"):
            body.append("<h3>Recall by group (exact)</h3>" + table(
                ["group", "positives", "recall"],
                [[esc(g["group"]), g["n_positives"], pct(g["recall"])] for g in detail["group_recall"]]))
        if detail.get("group_f1"):
            g = detail["group_f1"]
            body.append(f"<h3>Group named for detected positives</h3><p class=note>Macro-F1 {fmt(g['macro_f1'])} "
                        f"(run average; per run {esc(', '.join(f'{r}: {fmt(v)}' for r, v in g['macro_f1_by_run'].items()))}). "
                        "Rows: positives the model detected; "
                        f"'(none)': no group named, scored like a hallucinated group.</p>" + table(
                ["run", "group", "true", "named", "precision", "recall", "F1"],
                [[esc(r["run"]), esc(r["group"]), r["support"], r["predicted"], pct(r["precision"]), pct(r["recall"]),
                  fmt(r["f1"])] for r in g["groups"]]))
        if detail.get("versus_construction_scorer"):
            body.append("<h3>Against the construction scorer (HT-weighted, run average)</h3>" + table(
                ["cell", "targets", "positives", "negatives", "mean scorer probability"],
                [[esc(c["cell"]), fmt(c["n"], 1), fmt(c["n_positive"], 1), fmt(c["n_negative"], 1),
                  fmt(c["mean_reference_score"])] for c in detail["versus_construction_scorer"]]))
        if detail["diagnostics_skipped"]:
            body.append("<p class=note>Skipped: " + "; ".join(f"{esc(k)} ({esc(v)})" for k, v in
                                                                detail["diagnostics_skipped"].items()) + ".</p>")
        body.append("</section>")
    if summary["failure_taxonomy"]:
        body.append("<h2>Failure taxonomy (coreset rows × runs, unweighted)</h2>"
                    f"<p class=note>{esc(TAXONOMY_NOTE)}</p>" + table(
                        ["predictor", "rows", *FAILURE_CATEGORIES],
                        [[esc(r["model"]), r["n"], *(f"{r[c]:,} ({pct(r[c + '_share'])})" for c in FAILURE_CATEGORIES)]
                         for r in summary["failure_taxonomy"]]))
    f1 = [r for r in summary["estimates"] if r["metric"] == "f1"]
    if f1:
        body.append('<div class="flex">')
        body.append(bar_chart([r["predictor"] for r in f1], [r["estimate"] for r in f1], "F1, HT estimate (full table)"))
        body.append(bar_chart([r["predictor"] for r in f1], [r["subset_unweighted"] for r in f1], "F1 on the coreset, unweighted"))
        body.append("</div>")
    if summary["contrasts"]:
        body.append("<h2>Paired contrasts (a − b, same rows)</h2>" + table(
            ["a", "b", "metric", "difference", "SE", "conservative 95% interval"],
            [[esc(c["a"]), esc(c["b"]), esc(c["metric"]), _value(c["difference"], c["metric"]), _value(c["se"], c["metric"]),
              _interval(c["lower"], c["upper"], c["metric"])] for c in summary["contrasts"]]))
    body.append("<h2>Design</h2>" + table(["stratum", "N_h", "n_h"], [[esc(s["stratum"]), s["population"], s["sample"]]
                                                                        for s in summary["strata"]]))
    return page("HT-Coreset estimates", "".join(body), run)


def render_study_report(summary: dict, run: RunInfo | None = None) -> str:
    body = [
        note(f"Dataset {summary['dataset']} · {summary['draws']} draws per configuration · protocol.json (sha256 "
             f"{summary['protocol_sha256'][:12]}…) was written before any draw."),
        definitions(STUDY_DEFINITIONS),
        f"<p class=note>{esc(SAMPLER_NOTE)} Bias, MAE, RMSE, SD, mean SE and width in percentage points; coverage of "
        "the conservative interval with its Monte-Carlo SE; Wald coverage is estimate ± 1.96 SE, shown to make the "
        "linearised SE's limits visible (it under-covers when sampled strata hold few positive predictions).</p>",
        table(["direction", "targets", "positives", "runs", "τ", "budgets"],
              [[esc(c["direction"]), c["n_targets"], c["n_positives"], c["runs"], fmt(c["tau"]),
                esc(", ".join(f"{k}× = {v:,}" for k, v in c["budgets"].items()))] for c in summary["cases"]]),
    ]
    rows = summary["table"]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["direction"], r["budget_multiplier"]), []).append(r)
    for (direction, multiplier), group in groups.items():
        body.append(f"<section><h2>{esc(direction)} · budget {multiplier:g}× positives</h2>")
        body.append(table(
            ["sampler", "metric", "truth", "bias", "MAE", "RMSE", "SD", "mean SE", "mean width", "coverage", "± MCSE", "Wald coverage"],
            [[esc(r["sampler"]), esc(r["metric"]), _pp(r["truth"]), _pp(r["signed_bias"]), _pp(r["mae"]), _pp(r["rmse"]),
              _pp(r["sd"]), _pp(r["mean_se"]), _pp(r["mean_width95"]), fmt(r["coverage95"]), fmt(r["coverage_mcse"]),
              fmt(r["wald_coverage95"])] for r in group],
        ))
        f1 = [r for r in group if r["metric"] == "f1"]
        # the unweighted sampler is not an estimator: its error is off the scale of the weighted ones, so the
        # axis ends at the weighted samplers' largest RMSE and its bar is drawn broken, with its value
        weighted = [r["rmse"] for r in f1 if not r["sampler"].endswith("_unweighted") and r["rmse"] is not None]
        top = max(weighted, default=None)
        body.append(bar_chart([r["sampler"] for r in f1], [r["rmse"] for r in f1], "F1 RMSE by sampler (pp)",
                              value_fmt=lambda v: f"{100 * v:.2f} pp", axis_fmt=lambda v: f"{100 * v:g}",
                              scale_max=top * 1.15 if top else None))
        body.append("</section>")
    ranking = summary["f1_rmse_ranking"]
    if ranking:
        body.append("<h2>Lowest F1 RMSE among weighted samplers</h2>" + table(
            ["direction", "budget", "order (lowest RMSE first)"],
            [[esc(r["direction"]), f"{r['budget_multiplier']:g}×", esc(" < ".join(r["order"]))] for r in ranking]))
    return page("HT-Coreset sampler study", "".join(body), run)
