"""Flags against expert labels: match by normalised exact text, then precision, recall, enrichment.

Matching is exact after normalisation (Unicode NFKC, case folding, whitespace collapsed), on
the question and, where one question text occurs more than once in the reference, on the
options too; an item that still matches several reference rows is left unmatched and counted.

Among the N matched items, B are expert-flagged and the audit flags n, of which x are expert-
flagged. Precision = x/n, recall = x/B, and enrichment = precision / (B/N): how many times more
often a reviewer inspecting the flags finds a real problem than one inspecting items at random.
Under random flagging x is hypergeometric(N, B, n), so P(X >= x) is the exact one-sided p-value
(the same as Fisher's exact test, alternative "greater", on the 2 x 2 table).
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from audit.landscape.flags import flag_candidates, wrong_counts


def normalize_text(text: str | None) -> str:
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def _options_key(options: Sequence[str]) -> tuple[str, ...]:
    return tuple(normalize_text(o) for o in options)


def match_reference(items: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """For each item (``source_id, question, options``), the matching reference row or none.

    ``reference`` has ``question, options, expert_bad``; the result has ``source_id, ref_index,
    match`` (``question``, ``question+options``, ``ambiguous`` or ``none``) and ``expert_bad``.
    """
    by_question: dict[str, list[int]] = {}
    for index, question in zip(reference.index, reference["question"]):
        by_question.setdefault(normalize_text(question), []).append(index)
    rows = []
    for source_id, question, options in zip(items["source_id"], items["question"], items["options"]):
        hits = by_question.get(normalize_text(question), [])
        how = "question"
        if len(hits) > 1:
            key = _options_key(options)
            hits = [i for i in hits if _options_key(reference.at[i, "options"]) == key]
            how = "question+options" if len(hits) == 1 else "ambiguous"
        if not hits:
            how = "none" if how == "question" else how
        ref = hits[0] if len(hits) == 1 else None
        rows.append({"source_id": source_id, "ref_index": ref, "match": how,
                     "expert_bad": bool(reference.at[ref, "expert_bad"]) if ref is not None else None})
    return pd.DataFrame(rows, columns=["source_id", "ref_index", "match", "expert_bad"])


@dataclass(frozen=True)
class Validation:
    """The validation row of one flag set (fractions; the report prints percentages)."""

    n_matched: int
    n_expert_bad: int
    n_flagged: int
    true_positives: int
    precision: float
    recall: float
    base_rate: float
    enrichment: float
    p_value: float

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def validate_flags(flagged: Sequence[bool], expert_bad: Sequence[bool]) -> Validation:
    """Precision, recall, enrichment and the hypergeometric p-value of flags on matched items."""
    f = np.asarray(flagged, dtype=bool)
    b = np.asarray(expert_bad, dtype=bool)
    if f.shape != b.shape:
        raise ValueError(f"{f.size} flags for {b.size} expert labels")
    n, bad, k = int(f.size), int(b.sum()), int(f.sum())
    x = int((f & b).sum())
    precision = x / k if k else float("nan")
    recall = x / bad if bad else float("nan")
    base = bad / n if n else float("nan")
    enrichment = precision / base if k and bad else float("nan")
    from scipy.stats import hypergeom  # here, not at the top: a landscape run starts without scipy.stats (~1 s)

    p_value = float(hypergeom.sf(x - 1, n, bad, k)) if n else float("nan")
    return Validation(n, bad, k, x, precision, recall, base, enrichment, p_value)


def validation_by_threshold(counts: pd.DataFrame, matches: pd.DataFrame, thresholds: Sequence[int]) -> pd.DataFrame:
    """One validation row per m (flag = at least m models wrong), over matched items only.

    ``counts`` comes from :func:`audit.landscape.flags.wrong_counts`, ``matches`` from
    :func:`match_reference`; an item is validated when it is matched and was answered.
    """
    matched = matches[matches["expert_bad"].notna()][["source_id", "expert_bad"]]
    joined = counts.merge(matched, on="source_id", how="inner")
    rows = []
    for m in thresholds:
        flags = flag_candidates(joined, m)
        rows.append({"min_wrong": m, **validate_flags(flags["flagged"], flags["expert_bad"].astype(bool)).as_dict()})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class FlagValidation:
    """Flags from per-model correctness checked against expert labels: per-item wrong counts,
    the reference match of every item, and one validation row per threshold m."""

    counts: pd.DataFrame
    matches: pd.DataFrame
    table: pd.DataFrame


def validate_wrong_answers(correct: pd.DataFrame, items: pd.DataFrame, reference: pd.DataFrame,
                           thresholds: Sequence[int] | None = None) -> FlagValidation:
    """The one path from "which models got which item wrong" to precision, recall and enrichment.

    ``correct`` has one row per item x model (``source_id, model, correct``): a perturbation
    run's answers under noise injection, or published answers (the 14 HELM models on
    MMLU-Redux) -- both go through here, so the figures compare. ``items`` (``source_id,
    question, options``) holds the original text matched against ``reference``. Thresholds
    default to every m from 1 to the number of models.
    """
    counts = wrong_counts(correct)
    matches = match_reference(items, reference)
    if thresholds is None:
        thresholds = range(1, max(int(correct["model"].nunique()), 1) + 1)
    return FlagValidation(counts, matches, validation_by_threshold(counts, matches, thresholds))
