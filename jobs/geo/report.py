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
    ("evidence tier", "how a country's records were found, strongest first: two names that agree (corroborated); a country, "
                      "region, state code or address; a small town after 'in/at/near'; a large city; a bare small town; "
                      "a village; a place by another of its names; a demonym only. Each country row gives its records per tier."),
    ("corrected share", "with --calibration: the country's estimated share of the captions that name a country, corrected "
                        "for what the resolver misses and misplaces (matrix misclassification correction by region, "
                        "docs/geo.md), with its bootstrap interval over the calibration sample and the corpus counts."),
]
TIER_HEADERS = {"corroborated": "corroborated", "country_region_address": "country, region or address",
                "town_after_locative": "town after 'in/at'", "large_city": "large city", "bare_town": "bare town",
                "village": "village (< 1,000 people)", "alternate_name": "a place's other name",
                "demonym": "demonym"}
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


def _calibration_overview(cal: dict) -> str:
    """The resolver measured on the labelled sample: one row per region (of the true or resolved country)."""
    rows = [[esc(r["region"]), r["true_captions"], r["resolved_captions"], pct(r["recall"]), pct(r["precision"])]
            for r in cal["by_region"]]
    return (f"<h2>Calibration: the resolver on {cal['captions']:,} labelled captions</h2>"
            f"<p>Sample <code>{esc(cal['path'])}</code> (sha256 {esc(cal['sha256'][:12])}…): {cal['with_country']:,} captions "
            f"name a country; the resolver agrees with the label on {pct(cal['agreement'])} of all captions. "
            "Recall: captions of the region placed in the right country; precision: captions placed in the region whose "
            "country is right; the <em>none</em> row is the captions that name no country.</p>"
            + table(["region", "sample captions (true)", "placed there by the resolver", "recall", "precision"], rows,
                    what="regions")
            + note(f"Estimator: {cal['estimator']}. Assumes the sample's captions of each region are like the corpus's "
                   "(docs/geo.md, 'Shares corrected for the resolver's errors')."))


def _ci(bounds: list | None, digits: int) -> str:
    """A corrected share's interval in percent, "–" when it has none."""
    low, high = bounds or (None, None)
    return interval(low, high, lambda v: pct(v, digits))


def _corrected_regions(cal: dict, level: float) -> str:
    if "error" in cal:
        return "<h3>Shares corrected for the resolver's errors</h3>" + note(f"No corrected shares: {cal['error']}.", warn=True)
    rows = [[esc(r["region"]) + ("" if r["calibrated"] else " (uncalibrated)"), pct(r["observed_share"], 2),
             pct(r["corrected_share"], 2), _ci(r["ci"], 2)]
            for r in cal["regions"]]
    parts = ["<h3>Shares corrected for the resolver's errors</h3>",
             "<p>Share of all usable captions by the region of the country they name (<em>none</em>: no country), as "
             "resolved and as corrected with the calibration sample. The corrected shares of the countries are in the "
             "country table's <em>corrected share</em> column (of captions that name a country).</p>",
             table(["region", "resolved share", "corrected share", f"{level:.0%} interval"], rows, what="regions")]
    if cal["uncalibrated"]:
        parts.append(note("No caption of " + ", ".join(cal["uncalibrated"]) + " is in the calibration "
                          "sample: those regions are taken as resolved without error, not corrected.", warn=True))
    return "".join(parts)


def _country_rows(b: dict, tiers: dict, corrected: dict | None) -> tuple[list[str], list[list]]:
    """The top countries: records, share, records per evidence tier, and the corrected share when calibrated."""
    headers = ["rank", "country", "records", "share"] + [TIER_HEADERS.get(t, t) for t in tiers["tiers"]]
    if corrected:
        headers += ["corrected share", "interval"]
    rows = []
    for i, t in enumerate(b["top"]):
        by_tier = tiers["by_country"].get(t["alpha2"], {})
        row = [i + 1, f"{esc(t['name'])} ({esc(t['alpha2'])})", t["records"], pct(t["share"], 2)]
        row += [by_tier.get(tier, 0) for tier in tiers["tiers"]]
        if corrected:
            c = corrected.get(t["alpha2"], {})
            row += [pct(c.get("share"), 2), _ci(c.get("ci"), 1)]
        rows.append(row)
    return headers, rows


def _corpus_section(name: str, b: dict, summary: dict | None = None) -> str:
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
    summary = summary or {}
    evidence = summary.get("evidence") or {"tiers": [], "corpora": {}}
    cal = (summary.get("calibration") or {}).get("corpora", {}).get(name)
    tiers = {"tiers": evidence["tiers"], "by_country": evidence["corpora"].get(name, {})}
    headers, rows = _country_rows(b, tiers, cal.get("countries") if cal else None)
    parts.append("<h3>Countries, and how each share was found</h3>" + table(headers, rows, what="countries"))
    if cal:
        parts.append(_corrected_regions(cal, summary["calibration"]["level"]))
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
    shares = summary.get("shares")
    body = [note(f"Lexicon {lex['profile']} (sha256 {lex['sha256'][:12]}…). {CAVEAT}")]
    if shares:
        body.append(note(shares["note"], warn=not shares["corrected"]))
    body += [
            table(["corpus", "usable records", "resolved", "coverage", "top country", "top share", "top-3", "countries",
                   "n (fit)", "r", "ρ", "R²"], rows),
            definitions(DEFINITIONS)]
    if summary.get("calibration"):
        body.append(_calibration_overview(summary["calibration"]))
    body += [_corpus_section(name, block, summary) for name, block in summary["corpora"].items()]
    return page("Geographic visibility of caption corpora", "".join(body), run)
