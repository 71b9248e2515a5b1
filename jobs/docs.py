"""``benchaudit docs``: the six-criterion documentation audit over a set of cards, on Ray Data.

Wiring only. The driver finds the documentation files and reads the reviewer sheets (bad scores
fail before any work, naming file, line and field); each Ray Data task parses one document
(``connectors.docs``) and proposes a score with its evidence per criterion (``audit.docs``). The
driver writes the evidence and a pre-filled reviewer sheet, and computes the six-criterion summary
(proposals and each annotator) and the agreement between annotators (Cohen's kappa per criterion
and overall, exact agreement, every disagreement) and between the proposals and each annotator.
"""
from __future__ import annotations

import hashlib
import json
import time

import pandas as pd
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.docs.agreement import agreement, pairwise_agreement
from audit.docs.criteria import (
    CRITERIA,
    RULES,
    assess_document,
    evidence_table,
    proposals_table,
)
from audit.docs.summary import criteria_summary
from connectors.docs import find_documents, read_document, read_reviewer_scores
from connectors.fs import fingerprint
from jobs.config import RunOptions, config_hash
from jobs.manifest import StageTimer, base_manifest
from jobs.rundir import RunDir, write_json, write_text
from jobs.shards import ShardError, run_shards
from jobs.summaries import records

JOB = "docs"
PROPOSER = "benchaudit"  # the proposals' "annotator" name in sheets and agreement tables


class DocsConfig(BaseModel):
    """Everything that decides a docs run's results."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cards: list[str] = Field(min_length=1)
    reviews: list[str] = Field(default_factory=list)
    criteria: list[str] = Field(default_factory=lambda: list(CRITERIA))

    @model_validator(mode="after")
    def _known(self) -> DocsConfig:
        unknown = sorted(set(self.criteria) - set(CRITERIA))
        if unknown or not self.criteria:
            raise ValueError(f"unknown or no criteria {unknown}; known: {list(CRITERIA)}")
        return self


# ---- worker side -----------------------------------------------------------------------------

def run_shard(shard: dict, criteria: list[str], partial_dir: str, on_error: str) -> dict:
    """Parse one document and propose its scores; the shard file marks it done for --resume."""
    started = time.monotonic()
    try:
        doc = read_document(shard["url"])
        assessments = assess_document(doc, criteria)
        proposals = proposals_table(assessments).assign(resource=shard["resource"])
        evidence = evidence_table(assessments).assign(resource=shard["resource"])
        result = {"status": "ok", "error": None, "kind": doc.kind, "title": doc.title,
                  "proposals": proposals.to_dict("records"), "evidence": evidence.to_dict("records")}
    except Exception as exc:  # noqa: BLE001 — every failure is reported with the document's file
        message = f"{type(exc).__name__}: {exc}"
        if on_error != "skip":
            raise ShardError(message if shard["url"] in message else f"{shard['url']}: {message}") from exc
        result = {"status": "failed", "error": message, "kind": None, "title": None, "proposals": [], "evidence": []}
    result.update({"shard_id": shard["shard_id"], "resource": shard["resource"], "file": shard["url"], "rows_in": 1,
                   "seconds": round(time.monotonic() - started, 3)})
    write_json(f"{partial_dir}/shards/{shard['shard_id']}.json", result)
    return result


def _map_shards(batch: pa.Table, *, criteria: list[str], partial_dir: str, on_error: str) -> pa.Table:
    results = [run_shard(json.loads(s), criteria, partial_dir, on_error) for s in batch.column("shard").to_pylist()]
    return pa.table({"result": [json.dumps(r) for r in results]})


# ---- driver side -----------------------------------------------------------------------------

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


def _summary(run_id: str, cfg: DocsConfig, results: list[dict], proposals: pd.DataFrame, reviews: pd.DataFrame) -> dict:
    ok = sorted((r for r in results if r["status"] == "ok"), key=lambda r: r["resource"])
    tables = {PROPOSER: records(criteria_summary(proposals))} if not proposals.empty else {}
    for annotator, block in reviews.groupby("annotator"):
        tables[annotator] = records(criteria_summary(block[["resource", "criterion", "score"]]))
    return {
        "job": JOB, "run_id": run_id,
        "criteria": [{"name": c, "title": RULES[c].title} for c in cfg.criteria],
        "resources": [{"resource": r["resource"], "file": r["file"], "kind": r["kind"], "title": r["title"],
                       "proposed": {p["criterion"]: p["score"] for p in r["proposals"]},
                       "n_evidence": {p["criterion"]: p["n_evidence"] for p in r["proposals"]}} for r in ok],
        "summary_tables": tables,
        "agreement": _agreement_block(proposals, reviews) if not reviews.empty else None,
        "evidence": [e for r in ok for e in r["evidence"]],
        "failed": [{"file": r["file"], "error": r["error"]} for r in results if r["status"] == "failed"],
    }


def reviewer_sheet(proposals: pd.DataFrame, criteria: list[str]) -> pd.DataFrame:
    """The proposals in the reviewer-sheet layout, for a reviewer to copy, correct and load back."""
    sheet = proposals.pivot(index="resource", columns="criterion", values="score").reindex(columns=criteria).reset_index()
    sheet.insert(1, "annotator", PROPOSER)
    return sheet.assign(notes="")


def run(cfg: DocsConfig, opts: RunOptions) -> str:
    """Run the documentation audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        documents = find_documents(cfg.cards)
        reviews = read_reviews(cfg.reviews, cfg.criteria)
    refs = [ref for _, ref in documents]
    payload = {"config": cfg.model_dump(), "cards": fingerprint(refs), "on_error": opts.on_error}
    chash = config_hash(payload)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    shards = [{"resource": name, "url": ref.url,
               "shard_id": hashlib.sha256(f"{ref.url}\t{ref.size}\t{ref.stamp}\t{cfg.criteria}".encode()).hexdigest()[:16]}
              for name, ref in documents]
    scan = run_shards(
        JOB, run_dir, opts, timer, [(s["shard_id"], {"shard": json.dumps(s)}) for s in shards],
        len(shards), _map_shards,
        lambda: {"criteria": cfg.criteria, "partial_dir": run_dir.partial, "on_error": opts.on_error},
    )
    results = scan.results

    with timer("aggregate"):
        ok = [r for r in results if r["status"] == "ok"]
        proposals = pd.DataFrame([p for r in ok for p in r["proposals"]], columns=["resource", "criterion", "score", "n_evidence"])
        summary = _summary(run_dir.run_id, cfg, results, proposals, reviews)

    with timer("report"):
        from jobs.report_docs import (
            render_docs_report,  # presentation only: kept out of the workers
        )

        write_json(run_dir.path("summary.json"), summary)
        write_text(run_dir.path("evidence.csv"), pd.DataFrame(summary["evidence"], columns=[
            "resource", "criterion", "level", "kind", "location", "rule", "text"]).to_csv(index=False))
        if not proposals.empty:
            write_text(run_dir.path("proposed_scores.csv"), reviewer_sheet(proposals, cfg.criteria).to_csv(index=False))
        write_text(run_dir.path("report.html"), render_docs_report(summary))

    manifest = base_manifest(JOB, run_dir.run_id, cfg, opts, chash, None, timer, scan.ray_info)  # no random choice
    manifest.update({
        "inputs": {"fingerprint": fingerprint(refs), "documents": {name: ref.url for name, ref in documents},
                   "reviewer_sheets": cfg.reviews},
        "rows": {"in": len(shards), "out": len(ok), "skipped_by_reason": {"unreadable_document": len(summary["failed"])}
                 if summary["failed"] else {}, "reviewer_scores": len(reviews)},
        "shards": {"total": len(shards), "resumed": scan.resumed, "run": scan.run, "failed": summary["failed"]},
        "timings": {**timer.seconds, "wall_s": timer.wall(), "progress": scan.progress.samples},
        "outputs": {"evidence": "evidence.csv", "proposed_scores": "proposed_scores.csv (reviewer-sheet layout)"},
    })
    write_json(run_dir.path("manifest.json"), manifest)
    return run_dir.commit()
