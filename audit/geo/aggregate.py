"""From merged counts to the numbers a report shows: outcomes, coverage, shares, concentration.

Shares are fractions of *resolved* records (single_country + weighted_majority), as in the
reference study; coverage (resolved / usable records) is reported beside them, never folded in.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from audit.geo.resolve import OUTCOMES
from audit.geo.sources import canonical_names, country_facts
from audit.geo.stage import ALL, GeoPartial

RESOLVED = ("single_country", "weighted_majority")


def group_labels(partial: GeoPartial) -> list[str]:
    """ALL first, then every group in sorted order."""
    return [ALL] + sorted({k[0] for k in partial.cube} - {ALL})


def summarize(partial: GeoPartial, group: str = ALL, top_n: int = 20) -> dict:
    """Every number of one corpus (or one group of it)."""
    outcomes: Counter = Counter()
    countries: Counter = Counter()
    tld: Counter = Counter()
    crosstab: Counter = Counter()
    for (g, outcome, country, tld_code), n in partial.cube.items():
        if g != group:
            continue
        outcomes[outcome] += n
        if tld_code:
            tld[tld_code] += n
        if outcome in RESOLVED:
            countries[country] += n
        caption_label = country if outcome in RESOLVED else outcome
        crosstab[(caption_label, tld_code or "none")] += n
    usable = sum(outcomes.values())
    resolved = sum(countries.values())
    ranked = sorted(countries.items(), key=lambda kv: (-kv[1], kv[0]))
    names = canonical_names()
    shares = [
        {"alpha2": c, "name": names.get(c, c), "records": n, "share": n / resolved}
        for c, n in ranked
    ]
    tail = [s for s in shares[top_n:] if s["records"] >= 2]
    out = {
        "usable_records": usable,
        "outcomes": {o: outcomes.get(o, 0) for o in OUTCOMES},
        "outcome_fractions": {o: (outcomes.get(o, 0) / usable if usable else 0.0) for o in OUTCOMES},
        "resolved_records": resolved,
        "coverage": resolved / usable if usable else 0.0,
        "n_countries": len(countries),
        "n_countries_ge2": sum(1 for n in countries.values() if n >= 2),
        "top": shares[:top_n],
        "top3_concentration": sum(s["share"] for s in shares[:3]),
        "tail": {"countries": len(tail), "records": sum(s["records"] for s in tail), "share": sum(s["share"] for s in tail)},
        "country_counts": dict(ranked),
        "region_shares": _region_shares(countries, resolved, "region"),
        "subregion_shares": _region_shares(countries, resolved, "subregion"),
        "tld": {
            "records_with_cctld": sum(tld.values()),
            "fraction_with_cctld": sum(tld.values()) / usable if usable else 0.0,
            "country_counts": dict(sorted(tld.items(), key=lambda kv: (-kv[1], kv[0]))),
            "agreement": _tld_agreement(crosstab),
            # caption country (or outcome) × ccTLD country, over records that carry a ccTLD
            "crosstab": [
                {"caption": a, "tld": b, "records": n}
                for (a, b), n in sorted(crosstab.items(), key=lambda kv: (-kv[1], kv[0]))
                if b != "none"
            ],
        },
    }
    return out


def summarize_all(partial: GeoPartial, top_n: int = 20) -> dict:
    """The whole corpus plus one block per group (when the scan was grouped)."""
    overall = summarize(partial, ALL, top_n)
    overall["rows_in"] = partial.rows_in
    overall["skipped"] = dict(partial.skipped)
    overall["match_types"] = dict(partial.match_types)
    groups = {g: summarize(partial, g, top_n) for g in group_labels(partial) if g != ALL}
    if groups:
        overall["groups"] = groups
    return overall


def _region_shares(countries: Counter, resolved: int, key: str) -> dict[str, float]:
    facts = country_facts()
    acc: dict[str, int] = defaultdict(int)
    for code, n in countries.items():
        acc[facts.get(code, {}).get(key) or "unknown"] += n
    return {k: v / resolved for k, v in sorted(acc.items(), key=lambda kv: -kv[1])} if resolved else {}


def _tld_agreement(crosstab: Counter) -> dict:
    """Among records resolved from the caption *and* carrying a ccTLD: how often do they agree?"""
    both = sum(n for (a, b), n in crosstab.items() if b != "none" and a not in OUTCOMES)
    same = sum(n for (a, b), n in crosstab.items() if b != "none" and a == b)
    return {"records_with_both": both, "agree": same, "agreement": same / both if both else None}


def table_row(name: str, block: dict) -> dict:
    """One corpus as one row of the paper-style table (block: a summary with its association)."""
    gdp = block["association"].get("gdp", {})
    top = block["top"][0] if block["top"] else {}
    return {
        "corpus": name, "records": block["usable_records"], "resolved": block["resolved_records"], "coverage": block["coverage"],
        "top_country": top.get("alpha2"), "top_share": top.get("share"), "top3_concentration": block["top3_concentration"],
        "n_countries": block["n_countries"], "n_fit": block["association"]["n_countries"],
        "pearson_r": gdp.get("pearson_r"), "spearman_rho": gdp.get("spearman_rho"), "ols_r2": gdp.get("ols_r2"),
        "weighted_r2": gdp.get("weighted_r2"),
    }
