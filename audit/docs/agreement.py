"""Reviewer scores from CSV and inter-annotator agreement (Cohen's kappa, exact agreement).

Why kappa per criterion *and* pooled: a criterion such as "locale assumptions" can be easy to
agree on while "target-user context" is not; the pooled value (all resource x criterion cells)
summarises the protocol. Scores are nominal here (unweighted kappa), as in the reference study.

Reviewer sheet (CSV, one row per resource and annotator)::

    resource,annotator,source_user_context,target_user_context,annotator_visibility,
    locale_assumptions,evaluation_normalization,source_geographic_metadata[,notes]

Each criterion cell is 0, 1 or 2. Anything else is an error naming the file, line and field:
an unreadable score must not be silently treated as absent.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.docs.criteria import CRITERIA, ordered_criteria
from audit.stats.agreement import cohen_kappa

SCORE_COLUMNS = ("resource", "annotator", "criterion", "score")
OVERALL = "overall"


def parse_reviewer_scores(text: str, source: str, criteria: Sequence[str] = CRITERIA) -> pd.DataFrame:
    """Long table ``(resource, annotator, criterion, score)`` from a reviewer sheet's CSV text."""
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("resource", "annotator", *criteria) if c not in header]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; header is {header}")
    reader.fieldnames = header
    rows: list = []
    seen: dict = {}
    for record in reader:
        line = reader.line_num
        resource, annotator = (record.get("resource") or "").strip(), (record.get("annotator") or "").strip()
        if not resource or not annotator:
            raise ValueError(f"{source}: line {line}: fields 'resource' and 'annotator' must not be empty")
        if (resource, annotator) in seen:
            raise ValueError(
                f"{source}: line {line}: duplicate scores for resource {resource!r} by {annotator!r} "
                f"(first on line {seen[(resource, annotator)]})"
            )
        seen[(resource, annotator)] = line
        for criterion in criteria:
            value = (record.get(criterion) or "").strip()
            if value not in ("0", "1", "2"):
                raise ValueError(f"{source}: line {line}: field {criterion!r} must be 0, 1 or 2, got {value!r}")
            rows.append((resource, annotator, criterion, int(value)))
    if not rows:
        raise ValueError(f"{source}: no reviewer scores")
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


@dataclass(frozen=True)
class AgreementReport:
    """Agreement of two annotators: per criterion plus an ``overall`` row, and what differed.

    ``unmatched`` lists (resource, criterion) cells scored by only one of the two; they are not
    part of kappa but are reported, never dropped silently.
    """

    annotator_a: str
    annotator_b: str
    table: pd.DataFrame  # criterion, n, exact_agreement, kappa
    disagreements: pd.DataFrame  # resource, criterion, score_a, score_b
    unmatched: pd.DataFrame  # resource, criterion, annotator


def agreement(scores: pd.DataFrame, annotator_a: str, annotator_b: str) -> AgreementReport:
    """Cohen's kappa and exact agreement between two annotators of a long score table."""
    by = {name: scores[scores["annotator"] == name] for name in (annotator_a, annotator_b)}
    for name, block in by.items():
        if block.empty:
            raise ValueError(f"annotator {name!r} has no scores; annotators are {sorted(scores['annotator'].unique())}")
    keys = ["resource", "criterion"]
    merged = by[annotator_a][keys + ["score"]].merge(
        by[annotator_b][keys + ["score"]], on=keys, how="outer", suffixes=("_a", "_b"), indicator=True
    )
    paired = merged[merged["_merge"] == "both"]
    lone = merged[merged["_merge"] != "both"]
    unmatched = pd.DataFrame(
        {
            "resource": lone["resource"],
            "criterion": lone["criterion"],
            "annotator": np.where(lone["_merge"] == "left_only", annotator_a, annotator_b),
        }
    ).reset_index(drop=True)
    rows = []
    groups = [(c, paired[paired["criterion"] == c]) for c in ordered_criteria(paired["criterion"])]
    for criterion, block in groups + [(OVERALL, paired)]:
        if block.empty:
            continue
        rows.append(
            {
                "criterion": criterion,
                "n": len(block),
                "exact_agreement": float((block["score_a"] == block["score_b"]).mean()),
                "kappa": cohen_kappa(block["score_a"].tolist(), block["score_b"].tolist()),
            }
        )
    differing = paired[paired["score_a"] != paired["score_b"]]
    disagreements = differing[["resource", "criterion", "score_a", "score_b"]].astype({"score_a": int, "score_b": int})
    return AgreementReport(
        annotator_a,
        annotator_b,
        pd.DataFrame(rows, columns=["criterion", "n", "exact_agreement", "kappa"]),
        disagreements.sort_values(keys).reset_index(drop=True),
        unmatched,
    )


def pairwise_agreement(scores: pd.DataFrame) -> pd.DataFrame:
    """Agreement tables of every annotator pair, stacked with ``annotator_a``/``annotator_b`` columns."""
    annotators = sorted(scores["annotator"].unique())
    if len(annotators) < 2:
        raise ValueError(f"agreement needs at least two annotators, found {annotators}")
    tables = []
    for a, b in itertools.combinations(annotators, 2):
        table = agreement(scores, a, b).table
        tables.append(table.assign(annotator_a=a, annotator_b=b))
    return pd.concat(tables, ignore_index=True)[
        ["annotator_a", "annotator_b", "criterion", "n", "exact_agreement", "kappa"]
    ]
