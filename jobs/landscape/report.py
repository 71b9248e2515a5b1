"""The landscape report: every number comes from summary.json, nothing is computed here."""
from __future__ import annotations

from audit.mcqa.items import LETTERS
from jobs.common.pages.html import PROBABILITY, Axis, RunInfo, esc, fmt, interval, note, page, pct, scatter, table

MAX_SHOWN = 200  # candidates listed in the report; all of them are in summary.json and review_candidates.csv
CAVEAT = ("Each item is a point (Ptop1, Hnorm): Ptop1 is the top option's probability, Hnorm the entropy of the other "
          "options' renormalised probabilities over log(K − 1) (0: the rest is on one option, 1: spread evenly). MPD is the "
          "mean pairwise distance between a benchmark's points: higher means more heterogeneous items.")


PTOP1, HNORM = Axis("Ptop1", bounds=PROBABILITY), Axis("Hnorm", bounds=PROBABILITY)  # both in [0, 1]
RECALL, PRECISION = Axis("recall", bounds=PROBABILITY), Axis("precision", bounds=PROBABILITY)


def _scatters(summary: dict) -> str:
    parts = []
    for bench, block in summary["points"].items():
        charts = [scatter([(x, y, "") for x, y in pts], f"{bench} · {model}", PTOP1, HNORM, width=360, height=300)
                  for model, pts in block["models"].items()]
        if len(block["models"]) > 1:
            charts.append(scatter([(x, y, "") for x, y in block["model_averaged"]], f"{bench} · model-averaged", PTOP1,
                                  HNORM, width=360, height=300))
        parts.append(f"<h3>{esc(bench)}</h3><div class=flex>{''.join(charts)}</div>")
    return "<section><h2>Ptop1–Hnorm landscapes (unperturbed)</h2>" + "".join(parts) + "</section>"


def _statistic_cells(row: dict, statistics: list[dict]) -> list[str]:
    """A summary-table row's registered statistics (``summary["statistics"]``), each with its 95% interval in the
    same cell and format (``52.6% [51.7, 53.5]``): the table splits such a cell over two lines where the page is too
    narrow, so the perturbation table, with every statistic, still fits a 1,280 px page."""
    cells = []
    for stat in statistics:
        value_fmt = pct if stat["percent"] else fmt
        value = value_fmt(row.get(stat["name"]))
        bounds = (interval(row.get(f"{stat['name']}_ci_low"), row.get(f"{stat['name']}_ci_high"), value_fmt)
                  if stat["interval"] else "–")
        cells.append(value if bounds == "–" or value == "–" else f"{value} {bounds}")
    return cells


def _groups(summary: dict) -> str:
    rows = summary.get("groups") or []
    if not rows:
        return ""
    body = [[esc(r["group"]), esc(r["model"]), r["subtasks"], r["n_items"], pct(r["accuracy"]), pct(r["lm_eval_acc"]),
             f"{r['lm_eval_subtasks']}" + (f" (not in the logs: {esc(', '.join(r['not_read']))})" if r["not_read"] else "")]
            for r in rows]
    return ("<section><h2>lm-eval groups</h2><p class=note>Subtasks pooled into their lm-eval group, one benchmark of the "
            "tables above: its accuracy is the micro average over its items, as lm-eval's own group figure (from "
            "results.json, where it has one; it differs when results.json counts subtasks whose samples are not in the "
            "logs).</p>" + table(["group", "model", "subtasks", "items", "accuracy", "lm-eval's figure",
                                 "subtasks in lm-eval's figure"], body) + "</section>")


def _item_audit(summary: dict) -> str:
    audit = summary.get("item_audit")
    if not audit:
        return ""
    names = audit["ranking_names"]
    head = ("<section><h2>Cross-model item audit</h2><p class=note>Every item's label-error score is the posterior "
            "probability that its gold label is wrong when each model is a noisy annotator right with its own "
            "accuracy (one-coin Dawid–Skene model; the share of right gold labels is estimated from the data). "
            "data/candidates/ holds every item with its statistics; flagged = score above 1/2.</p>")
    body = [[esc(b), v["items"], v["models"], fmt(v["gold_accuracy"]), v["flagged"]] for b, v in audit["benchmarks"].items()]
    parts = [head, table(["benchmark", "items", "models", "estimated share of right gold labels", "flagged"], body)]
    for entry in audit["rankings"]:
        rows = []
        for name, label in names.items():
            rank = entry[name]
            rows.append([esc(label), fmt(rank["average_precision"])] + [
                f"{pct(k['precision'])} · ×{fmt(k['enrichment'], 2)} · p {k['p_value']:.1e}" for k in rank["at_k"]])
        ks = [f"top {k['k']}: precision · enrichment · p" for k in entry["score"]["at_k"]]
        parts.append(f"<h3>{esc(entry['benchmark'])} against expert labels ({entry['matched']:,} of {entry['items']:,} "
                     f"items matched, {entry['score']['expert_bad']:,} expert-flagged)</h3>"
                     + table(["ranking", "average precision", *ks], rows))
        charts = [scatter([(x, y, "") for x, y in entry[name]["curve"]], f"{entry['benchmark']} · {label}", RECALL,
                          PRECISION, width=360, height=300) for name, label in names.items()]
        parts.append(f"<div class=flex>{''.join(charts)}</div>")
    return "".join(parts) + "</section>"


def _statistic_headers(statistics: list[dict]) -> list[str]:
    return [f"{stat['label']} [95% interval]" if stat["interval"] else stat["label"] for stat in statistics]


def _statistics_table(summary: dict) -> str:
    stats, base = summary["statistics"], [r for r in summary["table"] if r["perturbation"] == "none"]
    body = [[esc(r["benchmark"]), esc(r["model"]), r["n_items"], *_statistic_cells(r, stats)] for r in base]
    return ("<section><h2>Statistics per benchmark and model</h2><p class=note>95% intervals: accuracy's Wilson interval; "
            "MPD's from resampling the items (exact MPD) or the pairs (sampled MPD, beyond the exact limit).</p>") + table(
        ["benchmark", "model", "items", *_statistic_headers(stats)], body) + "</section>"


def _perturbation_table(summary: dict) -> str:
    stats = summary["statistics"]
    body = [[esc(r["benchmark"]), esc(r["perturbation"]), esc(r["model"]), r["n_items"], f"{r['n_errors']:,} of {r['n_rows']:,}",
             "–" if r["relative_change"] is None else f"{100 * r['relative_change']:+.1f}%", *_statistic_cells(r, stats),
             fmt(r.get("mean_label_mass"))] for r in summary["table"]]
    return ("<section><h2>Perturbations</h2><p class=note>Relative change is of the accuracy, against the unperturbed "
            "accuracy of the same benchmark and model; under circular evaluation an item counts as correct only when every "
            "rotation is.</p>" + table(["benchmark", "perturbation", "model", "items", "failed prompts", "relative change",
                                        *_statistic_headers(stats), "label mass"], body) + "</section>")


def _correlations(rows: list[dict]) -> str:
    if not rows:
        return ""
    body = [[esc(r["benchmark"]), esc(r["model_a"]), esc(r["model_b"]), r["n_items"], fmt(r["pearson"]), fmt(r["spearman"])]
            for r in rows]
    return "<section><h2>Item-level Hnorm agreement between models</h2>" + table(
        ["benchmark", "model A", "model B", "items", "Pearson", "Spearman"], body) + "</section>"


def _options(options: list[str], gold: int | None) -> str:
    return "<br>".join(f"{'<b>' if i == gold else ''}{LETTERS[i]}. {esc(o)}{'</b>' if i == gold else ''}"
                       for i, o in enumerate(options))


def _flags(summary: dict) -> str:
    flags = summary["flags"]
    rows = [[esc(r["benchmark"]), esc(r["source_id"]), f"{r['n_wrong']} / {r['n_models']}", esc(r["question"]),
             _options(r["options"], r["gold"]), esc(r.get("structure_label")), esc(r.get("review_label")),
             esc(r.get("review_subtype"))] for r in flags["candidates"][:MAX_SHOWN]]
    if flags["from"] == "lm_eval_logs":
        return _log_flags(summary)
    source = "noise injection (distractors replaced by unrelated city names)" if flags["from"] == "noise" else \
        "the unperturbed answers (the run has no noise perturbation)"
    thresholds = "; ".join(f"{esc(b)}: at least {t['min_wrong']} of {t['models']}" for b, t in flags["threshold"].items())
    shown = f" The first {MAX_SHOWN:,} are shown." if flags["n_candidates"] > MAX_SHOWN else ""
    head = (f"<section><h2>Review candidates ({flags['n_candidates']:,})</h2><p class=note>Items that models answer "
            f"wrongly under {esc(source)} ({thresholds or 'no answers'}); the gold option is in bold. "
            f"review_candidates.csv holds every one with columns for the reviewer's label.{shown}</p>")
    return head + (table(["benchmark", "item", "wrong / models", "question", "options", "classifier", "review label",
                          "subtype"], rows) if rows else "<p><em>No candidates.</em></p>") + "</section>"


def _log_flags(summary: dict) -> str:
    """Candidates of a --from-lm-eval run: the logged answers on the published prompt, no perturbation."""
    flags = summary["flags"]
    rows = [[esc(r["benchmark"]), esc(r["source_id"]), fmt(r["score"]), f"{r['n_wrong']} / {r['n_models']}",
             f"{LETTERS[r['agreed_option']]} ({fmt(r['agreed_mass'])})", esc(r["question"]), _options(r["options"], r["gold"]),
             esc(r.get("review_label"))] for r in flags["candidates"][:MAX_SHOWN]]
    rule = (f"at least {flags['min_wrong']} models miss it" if flags["min_wrong"] else
            "the label-error score is above 1/2")
    head = (f"<section><h2>Review candidates ({flags['n_candidates']:,})</h2><p class=note>From the models' logged answers "
            f"on the published prompt (lm-eval logs hold no perturbed prompt, so there is no noise injection): items where "
            f"{esc(rule)}, most likely defective first; the gold option is in bold. review_candidates.csv holds every one, and "
            "the 100 highest scores of each benchmark besides, with columns for the reviewer's label.</p>")
    return head + (table(["benchmark", "item", "score", "wrong / models", "models' option (mass)", "question", "options",
                          "review label"], rows) if rows else "<p><em>No candidates.</em></p>") + "</section>"


def _validation(rows: list[dict], matches: dict[str, dict[str, int]]) -> str:
    if not rows:
        return ""
    matched = "; ".join(f"{esc(b)}: {m['matched']:,} of {m['items']:,} items matched" for b, m in sorted(matches.items()))
    body = [[esc(r["benchmark"]), r["min_wrong"], r["n_matched"], r["n_expert_bad"], r["n_flagged"], r["true_positives"],
             fmt(r["precision"]), fmt(r["recall"]), fmt(r["enrichment"], 2), f"{r['p_value']:.2e}" if r["p_value"] is not None
             else "–"] for r in rows]
    return ("<section><h2>Validation against expert labels (MMLU-Redux)</h2><p class=note>Over items matched to the "
            "reference by normalised exact text. Enrichment = precision / base rate of expert-flagged items; p = P(X ≥ true "
            "positives) under random flagging (hypergeometric). "
            f"{matched}.</p>"
            + table(["benchmark", "m", "matched", "expert-flagged", "flagged", "true positives", "precision", "recall",
                     "enrichment", "p"], body) + "</section>")


def _warnings(summary: dict) -> str:
    """What makes the figures below less than they seem, before them: too few answers, a model not answering."""
    lines = [w["message"] for w in summary.get("warnings", [])]
    failed = summary.get("failed_answers") or {}
    if failed.get("total"):
        top = "; ".join(f"{n:,} × {reason}" for reason, n in list(failed["by_reason"].items())[:3])
        lines.insert(0, f"{failed['total']:,} of {failed['answers']:,} model answers failed and are left out of every "
                        f"figure ({top}); every reason is listed under what was left out.")
    return "".join(note(line, warn=True) for line in lines)


def _problems(summary: dict) -> str:
    parts = []
    failed = summary.get("failed_answers") or {}
    if failed.get("total"):
        parts.append(f"<h3>Answers that failed ({failed['total']:,} of {failed['answers']:,}; each row's error is in "
                     "data/scores/)</h3>" + table(["reason", "answers", "example"],
                                                  [[esc(k), v, esc(failed["examples"].get(k, ""))]
                                                   for k, v in failed["by_reason"].items()]))
    if summary["failed_models"]:
        parts.append("<h3>Models left out</h3>" + table(["model", "error"], [[esc(f["model"]), esc(f["error"])]
                                                                            for f in summary["failed_models"]]))
    unreadable = summary.get("unreadable_tasks") or []
    if unreadable:
        parts.append(f"<h3>Tasks that could not be read ({len(unreadable):,}; each in manifest.json)</h3>" + table(
            ["model", "task", "reason"], [[esc(u["model"]), esc(u["task"]), esc(u["reason"])] for u in unreadable]))
    rejected = summary["rejected"]
    if rejected["total"]:
        parts.append(f"<h3>Items left out ({rejected['total']:,}; every one is in data/rejected/)</h3>" + table(
            ["reason", "items"], [[esc(k), v] for k, v in rejected["by_reason"].items()]))
    return "<section><h2>What was left out</h2>" + "".join(parts) + "</section>" if parts else ""


def _item_rules(rules: dict[str, dict[str, int]]) -> str:
    """Where each benchmark's items came from (lm-eval logs): a task family's document fields, or the generic rule
    (the prompt as the question, the continuations as the options)."""
    if not rules:
        return ""
    said = "; ".join(f"{esc(b)}: " + ", ".join(f"{n:,} by {esc(r)}" for r, n in sorted(c.items())) for b, c in sorted(rules.items()))
    return (f"<p class=note>Items (question, option texts, gold) from each record's document by its task family's fields; "
            f"'generic' = the prompt as the question and the scored continuations as the options. {said}.</p>")


def render_landscape_report(summary: dict, run: RunInfo | None = None) -> str:
    body = [f"<p class=note>Run {esc(summary['run_id'])} · probabilities: {esc(summary['probability_note'])}</p>",
            _item_rules(summary["overview"].get("item_rules", {})),
            f"<p class=note>{esc(CAVEAT)}</p>", _warnings(summary), _statistics_table(summary), _scatters(summary),
            _groups(summary), _perturbation_table(summary), _correlations(summary["hnorm_correlations"]), _flags(summary),
            _item_audit(summary), _validation(summary["validation"], summary["overview"].get("reference_matches", {})),
            _problems(summary)]
    return page("MCQA probability landscapes", "".join(body), run)


def write_landscape_outputs(job, summary: dict, candidates, sheet: str, quiet: bool) -> None:
    """What every landscape run writes last, model or lm-eval logs alike: the candidates table, the review
    sheet, summary.json and report.html; then its warnings on the terminal (unless ``quiet``)."""
    import sys

    with job.timer("report"):
        job.write_table("candidates", candidates)
        job.write_text("review_candidates.csv", sheet)
        job.write_summary(summary)
        job.write_text("report.html", render_landscape_report(summary, job.report_info("review_candidates.csv")))
    if not quiet:
        for warning in summary["warnings"]:
            print(f"landscape: warning: {warning['message']}", file=sys.stderr, flush=True)
