"""``benchaudit docs``: the six-criterion documentation audit over a set of cards, on Ray Data.

Wiring only. The driver finds the documentation files and reads the reviewer sheets (bad scores
fail before any work, naming file, line and field); each ``DocsTask`` parses one document
(``connectors.docs``) and proposes a score with its evidence per criterion (``audit.docs``). A
document that does not parse (malformed YAML front matter, broken JSON, bad bytes) costs that
document only, like a bad row elsewhere: it is counted by reason, named in the report and the
manifest, and the run succeeds while the skipped share stays within ``--max-skipped``. The
driver writes the evidence and a pre-filled reviewer sheet, and computes the six-criterion summary
(proposals and each annotator) and the agreement between annotators (Cohen's kappa per criterion
and overall, exact agreement, every disagreement) and between the proposals and each annotator.
"""
from __future__ import annotations

import sys
from pathlib import PurePosixPath

import pandas as pd

from audit.docs.agreement import agreement, pairwise_agreement
from audit.docs.cards import DocumentError
from audit.docs.criteria import RULES, assess_document, evidence_table, proposals_table
from audit.docs.summary import ALL_CRITERIA, criteria_summary
from connectors.docs import find_documents, read_document, read_reviewer_scores
from connectors.io.fs import FileRef, fingerprint
from connectors.io.markup import csv_frame
from connectors.io.read_report import ReadReport
from connectors.io.shards import shard_id
from connectors.runs.tables import input_root, relative_source
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.job import JobRun, SkipCheck
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.shards import Shard, ShardOutputs, ShardResult, ShardTask
from jobs.common.runtime.summaries import headline, records
from jobs.docs.config import DocsConfig

JOB = "docs"
PROPOSER = "benchaudit"  # the proposals' "annotator" name in sheets and agreement tables
EVIDENCE_COLUMNS = ("resource", "criterion", "level", "kind", "location", "rule", "text")


class DocsTask(ShardTask):
    """Parse one document and propose its scores with their evidence."""

    def __init__(self, criteria: list[str]):
        self.criteria = criteria

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        try:
            doc = read_document(shard.source)
        except DocumentError as exc:  # this document is bad, not the read: counted by reason, the scan goes on
            report = ReadReport(shard.source)
            report.skip(exc.reason)
            return ShardResult(rows_in=1, skipped=report.skipped_by_reason,
                               partial={"skipped": {"reason": exc.reason, "error": str(exc)}})
        assessments = assess_document(doc, self.criteria)
        proposals = proposals_table(assessments).assign(resource=shard.input)
        evidence = evidence_table(assessments).assign(resource=shard.input)
        return ShardResult(rows_in=1, partial={"kind": doc.kind, "title": doc.title, "proposals": proposals.to_dict("records"),
                                               "evidence": evidence.to_dict("records")})


def read_reviews(paths: list[str], criteria: list[str]) -> pd.DataFrame:
    """All reviewer sheets as one long table; one annotator scoring a resource in two files is an error."""
    frames = [read_reviewer_scores(p, criteria).assign(sheet=p) for p in paths]
    if not frames:
        return pd.DataFrame(columns=["resource", "annotator", "criterion", "score", "sheet"])
    scores = pd.concat(frames, ignore_index=True)
    dup = scores[scores.duplicated(["resource", "annotator", "criterion"], keep=False)]
    if not dup.empty:
        first = dup.iloc[0]
        sheets = sorted(set(dup[(dup.resource == first.resource) & (dup.annotator == first.annotator)]["sheet"]))
        raise ValueError(f"{sheets[-1]}: resource {first.resource!r} by {first.annotator!r} is also scored in {sheets[0]}")
    return scores


def _agreement_block(proposals: pd.DataFrame, reviews: pd.DataFrame) -> dict:
    """Annotator pairs, and the proposals against each annotator, with disagreements and unmatched cells."""
    annotators = sorted(reviews["annotator"].unique())
    audited, reviewed = set(proposals["resource"]), set(reviews["resource"])
    block: dict = {"annotators": annotators, "pairs": [], "disagreements": [], "unmatched": [], "proposals_vs_annotators": [],
                   "reviewed_not_audited": sorted(reviewed - audited), "audited_not_reviewed": sorted(audited - reviewed)}
    if len(annotators) >= 2:
        block["pairs"] = records(pairwise_agreement(reviews))
        for i, a in enumerate(annotators):
            for b in annotators[i + 1:]:
                report = agreement(reviews, a, b)
                block["disagreements"] += records(report.disagreements.assign(annotator_a=a, annotator_b=b))
                block["unmatched"] += records(report.unmatched)
    combined = pd.concat([reviews[["resource", "annotator", "criterion", "score"]],
                          proposals[["resource", "criterion", "score"]].assign(annotator=PROPOSER)], ignore_index=True)
    for a in annotators:
        report = agreement(combined, PROPOSER, a)
        block["proposals_vs_annotators"] += records(report.table.assign(annotator=a))
    return block


def _summary(run_id: str, cfg: DocsConfig, results: list[dict], skipped: list[dict], failed: list[dict],
             proposals: pd.DataFrame, reviews: pd.DataFrame) -> dict:
    ok = sorted(results, key=lambda r: r["resource"])
    tables = {PROPOSER: records(criteria_summary(proposals))} if not proposals.empty else {}
    for annotator, block in reviews.groupby("annotator"):
        tables[annotator] = records(criteria_summary(block[["resource", "criterion", "score"]]))
    agreement_block = _agreement_block(proposals, reviews) if not reviews.empty else None
    return {
        "job": JOB, "run_id": run_id,
        "table": tables.get(PROPOSER, []),
        "headline": _headline(tables, agreement_block, cards_name(cfg.cards)),
        "criteria": [{"name": c, "title": RULES[c].title} for c in cfg.criteria],
        "resources": [{"resource": r["resource"], "file": r["file"], "kind": r["kind"], "title": r["title"],
                       "proposed": {p["criterion"]: p["score"] for p in r["proposals"]},
                       "n_evidence": {p["criterion"]: p["n_evidence"] for p in r["proposals"]}} for r in ok],
        "summary_tables": tables,
        "agreement": agreement_block,
        "evidence": [e for r in ok for e in r["evidence"]],
        "skipped": sorted(skipped, key=lambda d: d["file"]),  # documents that do not parse: counted, not scored
        "failed": [{"file": f["file"], "error": f["error"]} for f in failed],
    }


def cards_name(cards: list[str]) -> str:
    """What the audit read, as the index and run history name it: the --cards folders' (or files') names."""
    return ",".join(dict.fromkeys(PurePosixPath(c.rstrip("/")).name or c for c in cards))


def _headline(tables: dict[str, list[dict]], agreement_block: dict | None, cards: str) -> list[dict]:
    """Mean score per criterion for the proposals (named by the cards they are about, not by who proposed
    them) and each annotator; pooled kappa per annotator pair."""
    rows = [headline(cards if who == PROPOSER else who, f"{r['criterion']}.mean_score", r["mean_score"])
            for who, table in tables.items() for r in table]
    for r in (agreement_block or {}).get("pairs", []):
        if r["criterion"] == ALL_CRITERIA:
            rows.append(headline(f"{r['annotator_a']}~{r['annotator_b']}", "kappa", r["kappa"]))
    return rows


def _warn_skipped(summary: dict, total: int, opts: RunOptions) -> None:
    """A run that left cards out (within --max-skipped) says so on the terminal, not only in its report."""
    left = [*summary["skipped"], *summary["failed"]]
    if left and opts.log_level != "error":
        first = left[0]
        print(f"{JOB}: warning: {len(left)} of {total} card(s) skipped (within --max-skipped {opts.max_skipped:g}); first: "
              f"{first['error'] if first['file'] in first['error'] else first['file'] + ': ' + first['error']}",
              file=sys.stderr, flush=True)


def reviewer_sheet(proposals: pd.DataFrame, criteria: list[str]) -> pd.DataFrame:
    """The proposals in the reviewer-sheet layout, for a reviewer to copy, correct and load back."""
    sheet = proposals.pivot(index="resource", columns="criterion", values="score").reindex(columns=criteria).reset_index()
    sheet.insert(1, "annotator", PROPOSER)
    return sheet.assign(notes="")


def plan_shards(documents: list[tuple[str, FileRef]], cfg: DocsConfig) -> list[Shard]:
    """One shard per document (the first ``--limit``), its id from its content and the criteria assessed."""
    shards = [Shard(shard_id(name, ref.checksum, ref.url, cfg.criteria), name, ref.url, expected_rows=1)
              for name, ref in documents]
    return shards[: cfg.limit] if cfg.limit else shards


def run(cfg: DocsConfig, opts: RunOptions) -> str:
    """Run the documentation audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        documents = find_documents(cfg.cards)
        reviews = read_reviews(cfg.reviews, cfg.criteria)
        shards = plan_shards(documents, cfg)
    refs = [ref for _, ref in documents]
    payload = {"config": cfg.model_dump(), "cards": fingerprint(refs), "on_error": opts.on_error}
    with JobRun(JOB, cfg, opts, payload, seed=None, timer=timer, use_ray="scan") as job:  # no random choice
        scan = job.scan(shards, DocsTask(cfg.criteria))
        with job.timer("aggregate"):
            roots = [input_root(c) for c in cfg.cards]  # files named relative to the --cards given, not this machine
            read = [{"resource": r["input"], "file": relative_source(r["file"], roots), **r["partial"]} for r in scan.ok]
            ok = [r for r in read if "skipped" not in r]
            skipped = [{"resource": r["resource"], "file": r["file"], **r["skipped"]} for r in read if "skipped" in r]
            proposals = pd.DataFrame([p for r in ok for p in r["proposals"]], columns=["resource", "criterion", "score", "n_evidence"])
            summary = _summary(job.run_id, cfg, ok, skipped, scan.failed, proposals, reviews)
        with job.timer("write"):
            job.write_table("evidence", pd.DataFrame(summary["evidence"], columns=list(EVIDENCE_COLUMNS)).astype(
                {"level": "int64"}))
            job.write_table("proposals", proposals)
            if not proposals.empty:
                job.write_text("proposed_scores.csv", csv_frame(reviewer_sheet(proposals, cfg.criteria)).to_csv(index=False))
        from jobs.docs.report import render_docs_report  # presentation only: kept out of the workers

        by_reason = {**scan.skipped(), **({"unreadable_document": len(scan.failed)} if scan.failed else {})}
        final = job.finish(  # raises when the skips pass --max-skipped: only a run that goes on warns
            summary, render_docs_report, files=() if proposals.empty else ("proposed_scores.csv",),
            skips=SkipCheck(len(shards), len(ok), len(skipped), 0, scan.failed,
                            first_skip=summary["skipped"][0]["error"] if skipped else None),
            inputs={"fingerprint": fingerprint(refs), "documents": {name: ref.url for name, ref in documents},
                    "reviewer_sheets": cfg.reviews},
            rows={"in": len(shards), "out": len(ok), "unread": 0, "reviewer_scores": len(reviews),
                  "skipped_by_reason": by_reason},
            skipped_documents=summary["skipped"],
            sheets={"proposed_scores": "proposed_scores.csv (reviewer-sheet layout, for --reviews)"},
        )
        _warn_skipped(summary, len(shards), opts)
        return final
