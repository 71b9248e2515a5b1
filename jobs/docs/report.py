"""The documentation-audit report: every number comes from summary.json, nothing is computed here."""
from __future__ import annotations

from jobs.common.pages.html import RunInfo, definitions, esc, fmt, note, page, pct, table

SCORE = {0: "0 absent", 1: "1 mentioned", 2: "2 operationalized"}
CAVEAT = (
    "Scores: 0 absent, 1 mentioned, 2 operationalized (specific enough to act on or check: a named locale or "
    "population, counts, demographics, explicit normalisation steps, a per-item field). Proposed scores come from "
    "fixed rules over the passages and metadata fields listed as evidence; a reviewer confirms or overrules them."
)


DEFINITIONS = [
    ("score", "0 absent, 1 mentioned, 2 operationalized, per criterion and resource."),
    ("mean score (0–2)", "the mean of the scores over resources."),
    ("mentioned, operationalized", "share of resources scored ≥ 1, and scored 2."),
    ("exact agreement", "share of (resource, criterion) cells two annotators scored the same."),
    ("κ (Cohen's kappa, unweighted)", "agreement beyond chance: 1 perfect, 0 what the score frequencies give by chance; "
                                      "undefined (–) when both annotators use one score only."),
]


def _summary_table(rows: list[dict]) -> str:
    return table(["criterion", "resources", "mean score (0–2)", "mentioned", "operationalized"],
                 [[esc(r["title"]), r["n_resources"], fmt(r["mean_score"], 2), pct(r["share_mentioned"]),
                   pct(r["share_operationalized"])] for r in rows])


def _agreement(block: dict, titles: dict[str, str]) -> str:
    parts = ["<h2>Agreement</h2>"]
    for key, what in (("reviewed_not_audited", "Resources in the reviewer sheets that are not among the documents"),
                      ("audited_not_reviewed", "Documents no reviewer scored")):
        if block[key]:
            parts.append(f"<p class=note>{what} (check the names): {esc(', '.join(block[key]))}</p>")
    if block["pairs"]:
        parts.append("<h3>Between annotators (Cohen's κ, unweighted)</h3>" + table(
            ["annotator A", "annotator B", "criterion", "cells", "exact agreement", "κ"],
            [[esc(r["annotator_a"]), esc(r["annotator_b"]), esc(titles.get(r["criterion"], r["criterion"])), r["n"],
              pct(r["exact_agreement"]), fmt(r["kappa"])] for r in block["pairs"]]))
    if block["disagreements"]:
        parts.append("<h3>Disagreements</h3>" + table(
            ["resource", "criterion", "annotator A", "score", "annotator B", "score"],
            [[esc(d["resource"]), esc(titles.get(d["criterion"], d["criterion"])), esc(d["annotator_a"]), d["score_a"],
              esc(d["annotator_b"]), d["score_b"]] for d in block["disagreements"]]))
    if block["unmatched"]:
        parts.append("<h3>Cells scored by only one annotator (not in κ)</h3>" + table(
            ["resource", "criterion", "annotator"], [[esc(u["resource"]), esc(u["criterion"]), esc(u["annotator"])]
                                                     for u in block["unmatched"]]))
    if block["proposals_vs_annotators"]:
        parts.append("<h3>Proposed scores against each annotator</h3>" + table(
            ["annotator", "criterion", "cells", "exact agreement", "κ"],
            [[esc(r["annotator"]), esc(titles.get(r["criterion"], r["criterion"])), r["n"], pct(r["exact_agreement"]),
              fmt(r["kappa"])] for r in block["proposals_vs_annotators"]]))
    return "".join(parts)


def render_docs_report(summary: dict, run: RunInfo | None = None) -> str:
    titles = {c["name"]: c["title"] for c in summary["criteria"]}
    names = [c["name"] for c in summary["criteria"]]
    skipped = f" ({len(summary['skipped'])} more skipped: they do not parse; listed below)" if summary.get("skipped") else ""
    body = [note(f"{len(summary['resources'])} resources{skipped}. {CAVEAT}"), definitions(DEFINITIONS)]
    for who, rows in summary["summary_tables"].items():
        label = "proposed scores" if who == "benchaudit" else f"annotator {who}"
        body.append(f"<h2>Six-criterion summary: {esc(label)}</h2>" + _summary_table(rows))
    body.append("<h2>Proposed scores per resource</h2>" + table(
        ["resource", "format", "title", *[titles[n] for n in names]],
        [[esc(r["resource"]), esc(r["kind"]), esc(r["title"]),
          *[f"{r['proposed'][n]} ({r['n_evidence'][n]} evidence)" for n in names]] for r in summary["resources"]]))
    if summary["agreement"]:
        body.append(_agreement(summary["agreement"], titles))
    if summary.get("skipped"):
        body.append("<h2>Documents that do not parse (skipped, counted in the manifest by reason)</h2>" + table(
            ["resource", "file", "reason", "error"],
            [[esc(d["resource"]), esc(d["file"]), esc(d["reason"]), esc(d["error"])] for d in summary["skipped"]]))
    if summary["failed"]:
        body.append("<h2>Unreadable documents (skipped)</h2>" + table(
            ["file", "error"], [[esc(f["file"]), esc(f["error"])] for f in summary["failed"]]))
    body.append("<h2>Evidence</h2>" + table(
        ["resource", "criterion", "level", "where", "rule", "text"],
        [[esc(e["resource"]), esc(titles.get(e["criterion"], e["criterion"])), esc(SCORE[e["level"]]), esc(e["location"]),
          esc(e["rule"]), esc(e["text"])] for e in summary["evidence"]], full_table="data/evidence/", what="evidence rows"))
    return page("Documentation audit: user-centric criteria", "".join(body), run)
