"""The conventions report: every number comes from summary.json, nothing is computed here."""
from __future__ import annotations

from jobs.common.pages.html import RunInfo, definitions, esc, interval_chart, note, page, pct, stacked_bar_chart, table

AMERICAN, OTHER = ("American", "#4a78a8"), ("other (British/Commonwealth)", "#e08a3c")
CAVEAT = (
    "Signals are spellings, written and numeric dates, times and units that point to American or to other "
    "(British/Commonwealth) usage, found by fixed rules and a fixed inventory. Coverage is the share of items with at "
    "least one such signal; the American share is over signals, so it describes the covered items only. Ambiguous "
    "dates (12/05/2021) and neutral forms (ISO dates, a bare 7:30) are counted apart and enter no share."
)


DEFINITIONS = [
    ("coverage", "items with at least one American or other signal / all items."),
    ("American share", "American signals / (American + other signals), over covered items only: read it next to coverage."),
    ("skew", "2 × American share − 1: +1 all American, −1 all other, 0 balanced."),
    ("excl. spelling", "the American share without the spelling category (dates, times, units and, when on, lexical pairs)."),
    ("ambiguous, neutral", "signals that decide nothing (12/05/2021; ISO dates, a bare 7:30): counted, in no share."),
    ("[95% CI]", "percentile bootstrap over items; a replicate in which a share has no signal is left out of that "
                 "share's interval (the count is given per benchmark)."),
]


def _ci(value: float | None, ci: list, digits: int = 1) -> str:
    if value is None:
        return "–"
    if ci[0] is None:
        return pct(value, digits)
    return f"{pct(value, digits)} [{100 * ci[0]:.{digits}f}, {100 * ci[1]:.{digits}f}]"


def _skew(value: float | None, ci: list) -> str:
    if value is None:
        return "–"
    bounds = f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci[0] is not None else ""
    return f"{value:+.3f}{bounds}"


def _main_table(summary: dict) -> str:
    rows = []
    for name, b in summary["benchmarks"].items():
        s = b["signals"]
        rows.append([esc(name), b["n_items"], _ci(b["coverage"], b["coverage_ci"]), _ci(b["american_share"], b["american_share_ci"]),
                     _skew(b["skew"], b["skew_ci"]), _ci(b["american_share_excl_spelling"], b["american_share_excl_spelling_ci"]),
                     f"{s['american']:,} / {s['other']:,}", s["ambiguous"], s["neutral"]])
    return table(["benchmark", "items", "coverage [95% CI]", "American share [95% CI]", "skew = 2·share − 1",
                  "American share excl. spelling", "signals A / O", "ambiguous", "neutral"], rows)


def _benchmark_section(name: str, b: dict) -> str:
    cats = {c: v for c, v in b["by_category"].items() if v["american"] or v["other"]}
    parts = [f"<section><h2>{esc(name)}</h2>"]
    parts.append(f"<p class=note>{b['n_items']:,} items from {len(b['files'])} file(s): "
                 f"{esc(', '.join(b['files'][:5]))}{' …' if len(b['files']) > 5 else ''}</p>")
    parts.append(stacked_bar_chart(list(cats), [(AMERICAN[0], AMERICAN[1], [v["american"] for v in cats.values()]),
                                                (OTHER[0], OTHER[1], [v["other"] for v in cats.values()])],
                                   "American vs other signals per category"))
    parts.append("<h3>Per category</h3>" + table(
        ["category", "American", "other", "American share"],
        [[esc(c), v["american"], v["other"], pct(v["share"])] for c, v in b["by_category"].items()]))
    parts.append("<h3>Per field</h3><p class=note>Every signal, including gold answers that repeat an option "
                 "(those count once in the totals above).</p>" + table(
        ["field", "American", "other", "American share"],
        [[esc(f), v["american"], v["other"], pct(v["share"])] for f, v in b["by_field"].items()]))
    parts.append("<h3>Item labels</h3>" + table(
        ["label", "items", "share of items"], [[esc(k), n, pct(b["label_shares"][k])] for k, n in b["labels"].items()]))
    boot = b["bootstrap"]
    undefined = {k.replace("_", " "): v for k, v in boot["undefined_replicates"].items() if v}
    left_out = ("; replicates in which a share had no signal, left out of its interval: "
                + ", ".join(f"{k} {v:,}" for k, v in undefined.items())) if undefined else ""
    parts.append(note(f"Intervals: percentile bootstrap over items, {boot['replicates']:,} replicates, seed {boot['seed']}, "
                      f"level {boot['level']}{left_out}."))
    rows = [[esc(key), esc(e["item_id"]), esc(e["field"]), e["element"], esc(e["text"]), esc(e["detail"])]
            for key, found in b["examples"].items() for e in found]
    if rows:
        parts.append("<h3>Examples (first signals of each category and variety)</h3>"
                     + table(["category / variety", "item", "field", "element", "matched text", "detail"], rows,
                             full_table="data/signals/", what="examples"))
    parts.append("</section>")
    return "".join(parts)


def _share_intervals(summary: dict) -> str:
    b = summary["benchmarks"]
    charts = []
    for key, ci_key, title in (("coverage", "coverage_ci", "Coverage"), ("american_share", "american_share_ci", "American share")):
        charts.append(interval_chart(list(b), [v[key] for v in b.values()], [v[ci_key][0] for v in b.values()],
                                     [v[ci_key][1] for v in b.values()], f"{title} with its 95% interval", value_fmt=pct,
                                     width=520, reference=0.5 if key == "american_share" else None))
    return '<div class="flex">' + "".join(charts) + "</div>"


def render_conventions_report(summary: dict, run: RunInfo | None = None) -> str:
    det, boot = summary["detector"], summary["bootstrap"]
    names = list(summary["benchmarks"])
    body = [note(f"Fields {', '.join(det['fields'])} · lexical pairs {'on' if det['include_lexical'] else 'off'} · inventory "
                 f"{det['inventory_pairs']:,} pairs (sha256 {det['inventory_sha256'][:12]}…) · bootstrap "
                 f"{boot['replicates']:,} replicates, seed {boot['seed']}"),
            note(CAVEAT), _main_table(summary), definitions(DEFINITIONS), _share_intervals(summary),
            stacked_bar_chart(names, [(AMERICAN[0], AMERICAN[1], [summary["benchmarks"][n]["signals"]["american"] for n in names]),
                                      (OTHER[0], OTHER[1], [summary["benchmarks"][n]["signals"]["other"] for n in names])],
                              "American vs other signals per benchmark")]
    if summary["failed_shards"]:
        body.append("<h3>Unreadable shards (skipped)</h3>" + table(
            ["benchmark", "file", "error"], [[esc(f["benchmark"]), esc(f["file"]), esc(f["error"])] for f in summary["failed_shards"]]))
    body += [_benchmark_section(name, block) for name, block in summary["benchmarks"].items()]
    return page("Locale conventions in benchmarks", "".join(body), run)
