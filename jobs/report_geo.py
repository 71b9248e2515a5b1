"""The geo report: every figure's numbers come from summary.json, nothing is computed here."""
from __future__ import annotations

from jobs.html import bar_chart, esc, fmt, page, pct, scatter, table

CAVEAT = (
    "These are textual references to countries in captions and metadata, resolved by a fixed lexicon. "
    "They are not image provenance: a caption may name a country the photo was not taken in, and most "
    "captions name none (see coverage). Shares are over resolved records only."
)


def _corpus_section(name: str, b: dict) -> str:
    top = b["top"]
    assoc = b["association"]
    gdp = assoc.get("gdp")
    parts = [f"<section><h2>{esc(name)}</h2>"]
    parts.append(table(
        ["rows read", "usable", "resolved", "coverage", "countries", "countries ≥ 2 records", "top-3 concentration"],
        [[b["rows_in"], b["usable_records"], b["resolved_records"], pct(b["coverage"], 2), b["n_countries"], b["n_countries_ge2"],
          pct(b["top3_concentration"])]],
    ))
    parts.append("<h3>Outcomes</h3>")
    parts.append(table(["outcome", "records", "fraction"], [[o, n, pct(b["outcome_fractions"][o], 2)] for o, n in b["outcomes"].items()]))
    if b.get("skipped"):
        parts.append("<h3>Skipped rows</h3>" + table(["reason", "rows"], [[esc(k), v] for k, v in b["skipped"].items()]))
    failed = b.get("failed_shards", []) + b.get("unreadable_files", [])
    if failed:
        parts.append("<h3>Unreadable shards (skipped)</h3>" + table(["file", "error"], [[esc(f["file"]), esc(f["error"])] for f in failed]))
    parts.append('<div class="flex">')
    parts.append(bar_chart([f"{t['name']} ({t['alpha2']})" for t in top], [t["share"] for t in top], f"Top {len(top)} countries, share of resolved records"))
    regions = b["region_shares"]
    parts.append(bar_chart(list(regions), list(regions.values()), "Region shares"))
    parts.append("</div>")
    parts.append(table(["rank", "country", "records", "share"], [[i + 1, f"{esc(t['name'])} ({esc(t['alpha2'])})", t["records"], pct(t["share"], 2)] for i, t in enumerate(top)]))
    parts.append(f"<p>Tail beyond the top {len(top)} (countries with ≥ 2 records): {b['tail']['countries']} countries, "
                 f"{b['tail']['records']:,} records, {pct(b['tail']['share'], 2)} of resolved records.</p>")
    parts.append("<h3>Association with GDP share</h3>")
    if gdp:
        pts = [(p["log_g"], p["log_d"], p["alpha2"]) for p in assoc["points"]]
        parts.append(scatter(pts, "log10 country share vs log10 GDP share", "log10 GDP share g", "log10 caption share d",
                             (gdp["ols_intercept"], gdp["ols_slope"])))
        ci_r, ci_rho = gdp.get("pearson_r_ci95"), gdp.get("spearman_rho_ci95")
        parts.append(table(
            ["n countries", "Pearson r", "95% CI", "Spearman ρ", "95% CI", "count-weighted r", "OLS R²", "slope", "weighted R²"],
            [[assoc["n_countries"], gdp["pearson_r"], f"[{ci_r[0]:.3f}, {ci_r[1]:.3f}]" if ci_r else "–", gdp["spearman_rho"],
              f"[{ci_rho[0]:.3f}, {ci_rho[1]:.3f}]" if ci_rho else "–", gdp["weighted_pearson_r"], gdp["ols_r2"], gdp["ols_slope"], gdp["weighted_r2"]]],
        ))
        rows = [[k, f["unweighted"].get("n"), f["unweighted"].get("r2"), f["weighted"].get("r2")] for k, f in assoc["single"].items()]
        parts.append("<h4>Single-indicator fits (log10 d on log10 indicator)</h4>" + table(["indicator", "n", "R²", "count-weighted R²"], rows))
        rows = [[f"GDP share + {k}", f["unweighted"].get("n"), f["unweighted"].get("r2"), f["weighted"].get("r2")] for k, f in assoc["gdp_plus_one"].items()]
        parts.append("<h4>GDP share plus one indicator</h4>" + table(["model", "n", "R²", "count-weighted R²"], rows))
    else:
        parts.append(f"<p class=note>{esc(assoc.get('error', 'no association computed'))}</p>")
    tld = b["tld"]
    parts.append("<h3>Second signal: URL country-code domain</h3>")
    agree = tld["agreement"]
    if tld["records_with_cctld"]:
        rate = f"{pct(agree['agreement'])} agree" if agree["agreement"] is not None else "none has both"
        parts.append(f"<p>{tld['records_with_cctld']:,} records ({pct(tld['fraction_with_cctld'], 2)}) carry a country-code TLD. "
                     f"Of the {agree['records_with_both']:,} with both a caption country and a ccTLD, {rate}. "
                     "Reported apart, never merged into the caption shares.</p>")
        parts.append(table(["caption country / outcome", "TLD country", "records"],
                           [[esc(c["caption"]), esc(c["tld"]), c["records"]] for c in tld["crosstab"][:25]]))
    else:
        parts.append("<p class=note>No record carries a country-code TLD (no URL column mapped, or generic domains only).</p>")
    groups = b.get("groups")
    if groups:
        parts.append("<h3>By group</h3>")
        parts.append(table(["group", "usable", "resolved", "coverage", "top country", "top share", "top-3"],
                           [[esc(g), s["usable_records"], s["resolved_records"], pct(s["coverage"], 2),
                             esc(s["top"][0]["alpha2"]) if s["top"] else "–", pct(s["top"][0]["share"]) if s["top"] else "–",
                             pct(s["top3_concentration"])] for g, s in groups.items()]))
    parts.append("</section>")
    return "".join(parts)


def render_geo_report(summary: dict) -> str:
    rows = [[esc(r["corpus"]), r["records"], r["resolved"], pct(r["coverage"], 2), esc(r["top_country"]), pct(r["top_share"]),
             pct(r["top3_concentration"]), r["n_countries"], r["n_fit"], fmt(r["pearson_r"]), fmt(r["spearman_rho"]), fmt(r["ols_r2"])]
            for r in summary["table"]]
    body = [f"<p class=note>Run {esc(summary['run_id'])} · lexicon {esc(summary['lexicon']['profile'])} "
            f"(sha256 {esc(summary['lexicon']['sha256'][:12])}…)</p>",
            f"<p class=note>{esc(CAVEAT)}</p>",
            table(["corpus", "usable records", "resolved", "coverage", "top country", "top share", "top-3", "countries",
                   "n (fit)", "r (log GDP share)", "ρ", "R²"], rows)]
    body += [_corpus_section(name, block) for name, block in summary["corpora"].items()]
    return page("Geographic visibility of caption corpora", "".join(body))
