"""Six-criterion summary across audited resources: mean score, share mentioned, share operationalized.

Why these three numbers: the mean (0-2) ranks criteria, but "mentioned" (score >= 1) and
"operationalized" (score = 2) separate documentation that names a concern from documentation a
user could act on -- the reference audit's headline is that no resource operationalizes its
target users. Shares are fractions here; :func:`summary_markdown` prints percentages.
"""

from __future__ import annotations

import pandas as pd

from audit.docs.criteria import RULES, ordered_criteria

SUMMARY_COLUMNS = ("criterion", "title", "n_resources", "mean_score", "share_mentioned", "share_operationalized")
ALL_CRITERIA = "all"


def criteria_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Summary rows per criterion (in the canonical order) and an ``all`` row over every cell.

    ``scores`` has one row per (resource, criterion) with ``score`` in {0, 1, 2} -- proposals, one
    annotator's scores or adjudicated ones. Duplicates or other scores are errors, since a
    resource counted twice would bias every share.
    """
    missing = [c for c in ("resource", "criterion", "score") if c not in scores.columns]
    if missing:
        raise ValueError(f"score table lacks column(s) {missing}")
    if scores.empty:
        raise ValueError("no scores to summarise")
    counts = scores.groupby(["resource", "criterion"]).size()
    if (counts > 1).any():
        (resource, criterion), n = next(iter(counts[counts > 1].items()))
        raise ValueError(
            f"resource {resource!r} has {n} scores for {criterion!r}; pick one annotator or adjudicate first"
        )
    bad = scores[~scores["score"].isin([0, 1, 2])]
    if not bad.empty:
        raise ValueError(f"score must be 0, 1 or 2; got {bad.iloc[0]['score']!r} for {bad.iloc[0]['resource']!r}")
    rows = []
    groups = [(c, scores[scores["criterion"] == c]) for c in ordered_criteria(scores["criterion"])]
    for criterion, block in groups + [(ALL_CRITERIA, scores)]:
        rule = RULES.get(criterion)
        rows.append(
            {
                "criterion": criterion,
                "title": rule.title if rule else ("All criteria" if criterion == ALL_CRITERIA else criterion),
                "n_resources": block["resource"].nunique(),
                "mean_score": float(block["score"].mean()),
                "share_mentioned": float((block["score"] >= 1).mean()),
                "share_operationalized": float((block["score"] == 2).mean()),
            }
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def summary_markdown(summary: pd.DataFrame) -> str:
    """The summary as a Markdown table for a report (percentages with one decimal)."""
    lines = [
        "| Criterion | Resources | Mean score (0-2) | Mentioned | Operationalized |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in summary.itertuples(index=False):
        lines.append(
            f"| {row.title} | {row.n_resources} | {row.mean_score:.2f} | "
            f"{100 * row.share_mentioned:.1f}% | {100 * row.share_operationalized:.1f}% |"
        )
    return "\n".join(lines) + "\n"
