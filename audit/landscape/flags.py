"""Review candidates: items that at least m of M models still get wrong, and the reviewer's label.

Under noise injection the distractors are unrelated city names, so a competent model should
not miss; an item most models still miss is more likely broken than hard. The same counting
takes any per-model correctness table (a perturbation run's results, or published answers such
as the 14 HELM models' on MMLU-Redux), so flags from either are validated by one code path.

Reviewers label candidates with a two-level taxonomy: ``perturbation_induced`` (the flag is an
artefact of the perturbation) or ``actionable`` (the item itself needs fixing), with subtypes;
the actionable subtypes are MMLU-Redux's error types, so labels and expert data line up.
"""
from __future__ import annotations

import pandas as pd

REVIEW_TAXONOMY: dict[str, tuple[str, ...]] = {
    "perturbation_induced": ("noise_plausible", "option_dependent", "format_artefact", "other"),
    "actionable": ("wrong_groundtruth", "no_correct_answer", "multiple_correct_answers", "bad_question_clarity",
                   "bad_options_clarity", "expert", "other"),
}
REVIEW_COLUMNS = ("source_id", "review_label", "review_subtype", "review_note")


def wrong_counts(correct: pd.DataFrame, item: str = "source_id", model: str = "model") -> pd.DataFrame:
    """Per item: how many models answered (``n_models``) and how many were wrong (``n_wrong``).

    ``correct`` has one row per item x model with ``correct`` in {0, 1}; NaN (not scored) rows
    do not count as an answer. Several rows per item x model (e.g. rotations) must be combined
    by the caller first.
    """
    answered = correct[correct["correct"].notna()]
    dup = answered.duplicated([item, model])
    if dup.any():
        first = answered[dup].iloc[0]
        raise ValueError(f"item {first[item]!r}, model {first[model]!r}: more than one answer; combine rotations first")
    grouped = answered.groupby(item, sort=True)
    out = pd.DataFrame({"n_models": grouped[model].nunique(), "n_wrong": grouped["correct"].apply(lambda c: int((c == 0).sum()))})
    return out.reset_index()


def flag_candidates(counts: pd.DataFrame, min_wrong: int) -> pd.DataFrame:
    """``counts`` with ``flagged`` = at least ``min_wrong`` models wrong (m of M)."""
    if min_wrong < 1:
        raise ValueError(f"min_wrong must be at least 1, got {min_wrong}")
    out = counts.copy()
    out["flagged"] = out["n_wrong"] >= min_wrong
    return out


def check_review_labels(labels: pd.DataFrame, source: str = "review labels") -> pd.DataFrame:
    """Validate reviewer labels against the taxonomy; an unknown label names its row.

    An optional ``benchmark`` column is kept: item ids are unique within a benchmark only, so a
    run over several benchmarks needs it to tell two ``q1`` apart.
    """
    missing = [c for c in REVIEW_COLUMNS[:2] if c not in labels.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; expected {list(REVIEW_COLUMNS)}")
    out = labels.copy()
    for column in REVIEW_COLUMNS[2:]:
        if column not in out.columns:
            out[column] = None
    for row, (label, subtype) in enumerate(zip(out["review_label"], out["review_subtype"])):
        if label not in REVIEW_TAXONOMY:
            raise ValueError(f"{source}: row {row}, field 'review_label': {label!r} is not one of {sorted(REVIEW_TAXONOMY)}")
        if subtype is not None and not pd.isna(subtype) and subtype not in REVIEW_TAXONOMY[label]:
            raise ValueError(f"{source}: row {row}, field 'review_subtype': {subtype!r} is not a subtype of "
                             f"{label!r} ({list(REVIEW_TAXONOMY[label])})")
    keys = ["benchmark", "source_id"] if "benchmark" in out.columns else ["source_id"]
    dup = out.duplicated(keys)
    if dup.any():
        raise ValueError(f"{source}: row {int(dup.to_numpy().argmax())}: duplicate source_id {out['source_id'][dup].iloc[0]!r}")
    return out[keys[:-1] + list(REVIEW_COLUMNS)]


def attach_review_labels(candidates: pd.DataFrame, labels: pd.DataFrame | None = None) -> pd.DataFrame:
    """Candidates with the reviewer's fields (empty until reviewed); labels of items that are not
    candidates are an error, since a reviewer cannot have seen them in this run."""
    out = candidates.copy()
    if labels is None:
        for column in REVIEW_COLUMNS[1:]:
            out[column] = None
        return out
    labels = check_review_labels(labels)
    unknown = set(labels["source_id"]) - set(out.loc[out["flagged"], "source_id"])
    if unknown:
        raise ValueError(f"review labels for {len(unknown)} item(s) that are not candidates, e.g. {sorted(unknown)[:3]}")
    return out.merge(labels, on="source_id", how="left")
