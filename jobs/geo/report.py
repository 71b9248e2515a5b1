"""The geo report: every figure's numbers come from summary.json, nothing is computed here."""
from __future__ import annotations

from jobs.common.pages.html import (
    RunInfo,
    bar_chart,
    definitions,
    esc,
    fmt,
    interval,
    log_share_axis,
    note,
    page,
    pct,
    scatter,
    table,
)

CAVEAT = (
    "These are textual references to countries in captions and metadata, resolved by a fixed lexicon. "
    "They are not image provenance: a caption may name a country the photo was not taken in, and most "
    "captions name none (see coverage). Shares are over resolved records only."
)
DEFINITIONS = [
    ("coverage", "resolved records / usable records: the share of captions that name a country at all."),
    ("share", "a country's resolved records / all resolved records of the corpus (or group)."),
    ("top-3 concentration", "the summed share of the three most frequent countries."),
    ("n (fit)", "countries entering the fits: population ≥ the --min-population floor and ≥ --min-records resolved records."),
    ("d, g", "a country's caption share and GDP share, both renormalized over the countries in the fit."),
    ("r (Pearson)", "linear correlation of log10 d with log10 g over the countries in the fit; interval: percentile "
                    "bootstrap resampling countries."),
    ("ρ (Spearman)", "rank correlation of d with g (the same with or without logs)."),
    ("count-weighted r", "Pearson r with each country weighted by its resolved records."),
    ("R², slope", "ordinary least squares of log10 d on log10 g: share of variance explained, and the elasticity "
                  "(slope 1: visibility proportional to GDP share)."),
    ("weighted R²", "the same fit weighted by each country's resolved records (statsmodels WLS)."),
]
SMALL_FIT = 30  # countries: below this a correlation's bootstrap interval spans much of [-1, 1]


def _fit_warning(n: int, ci: list | None, level: float) -> str:
    width = (ci[1] - ci[0]) if ci and None not in ci else None
    if n >= SMALL_FIT and (width is None or width <= 0.3):
        return ""
    span = f" (the {level:.0%} interval of r is {width:.2f} wide)" if width is not None else ""
    return note(f"Only {n} countries enter this fit{span}: with so few, r, ρ and R² move a lot when a country is added "
                "or removed. Read the intervals, not the point values.", warn=True)


def _association(assoc: dict) -> str:
    gdp = assoc.get("gdp")
    if not gdp:
        return note(assoc.get("error", "no association computed"))
    points = sorted(assoc["points"], key=lambda p: -p["records"])  # the most visible countries get their labels first
    pts = [(p["log_g"], p["log_d"], p["alpha2"]) for p in points]
    level = gdp.get("level", 0.95)
    parts = [_fit_warning(assoc["n_countries"], gdp.get("pearson_r_ci"), level),
             scatter(pts, "Caption share against GDP share (log–log)", log_share_axis("GDP share g"),
                     log_share_axis("caption share d"), (gdp["ols_intercept"], gdp["ols_slope"]), width=600, height=440),
             note("Each point is a country (hover for values; labels that would overlap are left to the tooltip); "
                  "the red line is the OLS fit of log10 d on log10 g.")]
    ci_r, ci_rho = gdp.get("pearson_r_ci"), gdp.get("spearman_rho_ci")
    parts.append(table(
        ["n (fit)", "r (Pearson)", f"{level:.0%} CI", "ρ (Spearman)", f"{level:.0%} CI", "count-weighted r", "R²", "slope",
         "weighted R²"],
        [[assoc["n_countries"], fmt(gdp["pearson_r"]), interval(*(ci_r or (None, None))), fmt(gdp["spearman_rho"]),
          interval(*(ci_rho or (None, None))), fmt(gdp["weighted_pearson_r"]), fmt(gdp["ols_r2"]), fmt(gdp["ols_slope"]),
          fmt(gdp["weighted_r2"])]]))
    rows = [[esc(k), f["unweighted"].get("n"), fmt(f["unweighted"].get("r2")), fmt(f["weighted"].get("r2"))]
            for k, f in assoc["single"].items()]
    parts.append("<h4>Single-indicator fits (log10 d on log10 indicator)</h4>" + table(["indicator", "n", "R²", "weighted R²"], rows))
    rows = [[f"GDP share + {esc(k)}", f["unweighted"].get("n"), fmt(f["unweighted"].get("r2")), fmt(f["weighted"].get("r2"))]
            for k, f in assoc["gdp_plus_one"].items()]
    parts.append("<h4>GDP share plus one indicator</h4>" + table(["model", "n", "R²", "weighted R²"], rows))
    return "".join(parts)


def _tld(tld: dict) -> str:
    parts = ["<h3>Second signal: URL country-code domain</h3>"]
    agree = tld["agreement"]
    if not tld["records_with_cctld"]:
        return parts[0] + note("No record carries a country-code TLD (no URL column mapped, or generic domains only).")
    rate = f"{pct(agree['agreement'])} agree" if agree["agreement"] is not None else "none has both"
    parts.append(f"<p>{tld['records_with_cctld']:,} records ({pct(tld['fraction_with_cctld'], 2)}) carry a country-code TLD. "
                 f"Of the {agree['records_with_both']:,} with both a caption country and a ccTLD, {rate}. "
                 "Reported apart, never merged into the caption shares.</p>")
    parts.append(table(["caption country / outcome", "TLD country", "records"],
                       [[esc(c["caption"]), esc(c["tld"]), c["records"]] for c in tld["crosstab"]], what="pairs"))
    return "".join(parts)


def _corpus_section(name: str, b: dict) -> str:
    top = b["top"]
    parts = [f"<section><h2>{esc(name)}</h2>", table(
        ["rows read", "usable", "resolved", "coverage", "countries", "countries ≥ 2 records", "top-3 concentration"],
        [[b["rows_in"], b["usable_records"], b["resolved_records"], pct(b["coverage"], 2), b["n_countries"], b["n_countries_ge2"],
          pct(b["top3_concentration"])]])]
    parts.append("<h3>Outcomes</h3>" + table(["outcome", "records", "fraction"],
                                             [[esc(o), n, pct(b["outcome_fractions"][o], 2)] for o, n in b["outcomes"].items()]))
    if b.get("skipped"):
        parts.append("<h3>Skipped rows</h3>" + table(["reason", "rows"], [[esc(k), v] for k, v in b["skipped"].items()]))
    if b.get("failed_shards"):
        parts.append("<h3>Unreadable shards (skipped)</h3>"
                     + table(["file", "error"], [[esc(f["file"]), esc(f["error"])] for f in b["failed_shards"]]))
    regions = b["region_shares"]
    parts.append('<div class="flex">'
                 + bar_chart([f"{t['name']} ({t['alpha2']})" for t in top], [t["share"] for t in top],
                             f"Top {len(top)} countries, share of resolved records", width=520)
                 + bar_chart(list(regions), list(regions.values()), "Region shares", width=420) + "</div>")
    parts.append(table(["rank", "country", "records", "share"],
                       [[i + 1, f"{esc(t['name'])} ({esc(t['alpha2'])})", t["records"], pct(t["share"], 2)]
                        for i, t in enumerate(top)], what="countries"))
    tail = b["tail"]
    parts.append(f"<p>Tail beyond the top {len(top)} (countries with ≥ 2 records): {tail['countries']:,} countries, "
                 f"{tail['records']:,} records, {pct(tail['share'], 2)} of resolved records.</p>")
    parts.append("<h3>Association with GDP share</h3>" + _association(b["association"]) + _tld(b["tld"]))
    groups = b.get("groups")
    if groups:
        parts.append("<h3>By group</h3>" + table(
            ["group", "usable", "resolved", "coverage", "top country", "top share", "top-3"],
            [[esc(g), s["usable_records"], s["resolved_records"], pct(s["coverage"], 2),
              esc(s["top"][0]["alpha2"]) if s["top"] else "–", pct(s["top"][0]["share"]) if s["top"] else "–",
              pct(s["top3_concentration"])] for g, s in groups.items()], what="groups"))
    parts.append("</section>")
    return "".join(parts)


def render_geo_report(summary: dict, run: RunInfo | None = None) -> str:
    rows = [[esc(r["corpus"]), r["records"], r["resolved"], pct(r["coverage"], 2), esc(r["top_country"] or "–"),
             pct(r["top_share"]), pct(r["top3_concentration"]), r["n_countries"], r["n_fit"], fmt(r["pearson_r"]),
             fmt(r["spearman_rho"]), fmt(r["ols_r2"])] for r in summary["table"]]
    lex = summary["lexicon"]
    body = [note(f"Lexicon {lex['profile']} (sha256 {lex['sha256'][:12]}…). {CAVEAT}"),
            table(["corpus", "usable records", "resolved", "coverage", "top country", "top share", "top-3", "countries",
                   "n (fit)", "r", "ρ", "R²"], rows),
            definitions(DEFINITIONS)]
    body += [_corpus_section(name, block) for name, block in summary["corpora"].items()]
    return page("Geographic visibility of caption corpora", "".join(body), run)
