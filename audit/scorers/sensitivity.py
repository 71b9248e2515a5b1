"""Scorer sensitivity: how much credit a meaning-preserving variant loses, per scorer and transformation.

Why paired differences: the original answer and its variant are scored against the same gold
references, so ``variant - original`` isolates the effect of the convention change from the
difficulty of the question. Inputs can be gold answers (then the original scores full marks and
any loss is the scorer's) or real model outputs (a table of question id + answer).

Differences are summarised per scorer metric and transformation type (and over all types) with a
question-clustered percentile bootstrap, because one question contributes several variants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.scorers.choices import SCORERS
from audit.scorers.drop import score_drop
from audit.scorers.exact import exact_match
from audit.scorers.squad import score_squad
from audit.scorers.truthfulqa import (
    TruthfulQAReferences,
    flatten_rankings,
    prepare_references,
    score_truthfulqa,
)
from audit.scorers.variants import (
    VariantConfig,
    generate_variants,
    require_answer_table,
    transformation_type,
)
from audit.stats.bootstrap import (
    DEFAULT_BOOTSTRAP,
    BootstrapConfig,
    cluster_bootstrap_ratio,
)

PAIR_COLUMNS = (
    "question_id", "transformation", "transformation_type", "original", "variant",
    "scorer", "metric", "original_score", "variant_score", "difference",
)  # fmt: skip
ALL_TYPES = "all"


@dataclass(frozen=True)
class GoldReferences:
    """A question's gold answers (each a tuple of spans) and, for TruthfulQA, incorrect answers."""

    question_id: str
    answers: tuple[tuple[str, ...], ...]
    incorrect_answers: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, question_id: str, answers: Sequence[str | Sequence[str]], incorrect: Sequence[str] = ()
    ) -> GoldReferences:
        """Build from plain strings or span lists; a question without gold answers is an error."""
        golds = tuple((a,) if isinstance(a, str) else tuple(a) for a in answers)
        if not golds:
            raise ValueError(f"question {question_id!r}: no gold answers")
        return cls(str(question_id), golds, tuple(incorrect))

    @property
    def strings(self) -> tuple[str, ...]:
        """Gold answers as single strings for string scorers (multi-span golds joined by ", ")."""
        return tuple(", ".join(spans) for spans in self.answers)


@dataclass(frozen=True)
class SensitivityConfig:
    """Scorers to run, variant generation and the bootstrap (seed recorded in the output)."""

    scorers: tuple[str, ...] = ("drop", "squad", "exact")
    variants: VariantConfig = field(default_factory=VariantConfig)
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.scorers) - set(SCORERS))
        if unknown or not self.scorers:
            raise ValueError(f"unknown or no scorers {unknown}; known: {list(SCORERS)}")


DEFAULT_SENSITIVITY = SensitivityConfig()


@dataclass(frozen=True)
class GoldAnswers:
    """Gold-answer mode input: one answer per question, and the questions left out with why."""

    table: pd.DataFrame  # question_id, answer
    skipped: pd.DataFrame  # question_id, reason


@dataclass(frozen=True)
class SensitivityResult:
    """Every variant row (with rejections), every scored pair, and the summary table."""

    variants: pd.DataFrame
    pairs: pd.DataFrame
    summary: pd.DataFrame


class _Scorer:
    """Scores answers against one question's references, caching TruthfulQA reference prep."""

    def __init__(self, scorers: Sequence[str]) -> None:
        self.scorers = tuple(scorers)
        self._tqa_refs: dict[str, TruthfulQAReferences] = {}

    def _truthfulqa_refs(self, gold: GoldReferences) -> TruthfulQAReferences:
        if gold.question_id not in self._tqa_refs:
            try:
                self._tqa_refs[gold.question_id] = prepare_references(gold.strings, gold.incorrect_answers)
            except ValueError as err:
                raise ValueError(f"question {gold.question_id!r}: {err}") from err
        return self._tqa_refs[gold.question_id]

    def __call__(self, answer: str, gold: GoldReferences) -> dict[tuple[str, str], float]:
        scores: dict[tuple[str, str], float] = {}
        if "drop" in self.scorers:
            drop = score_drop(answer, gold.answers)
            scores[("drop", "em")], scores[("drop", "f1")] = drop.em, drop.f1
        if "squad" in self.scorers:
            squad = score_squad(answer, gold.strings)
            scores[("squad", "em")], scores[("squad", "f1")] = squad.em, squad.f1
        if "exact" in self.scorers:
            scores[("exact", "em")] = exact_match(answer, gold.strings)
        if "truthfulqa" in self.scorers:
            flat = flatten_rankings(score_truthfulqa(answer, self._truthfulqa_refs(gold)))
            scores.update({("truthfulqa", metric): value for metric, value in flat.items()})
        return scores


def gold_answers_table(golds: Mapping[str, GoldReferences]) -> GoldAnswers:
    """First gold answer of each question as the "original"; multi-span golds are skipped.

    A multi-span gold has no single string that the scorers accept as a full-credit original,
    so those questions are listed in ``skipped`` instead of being scored unfairly.
    """
    kept, skipped = [], []
    for qid, gold in golds.items():
        if len(gold.answers[0]) == 1:
            kept.append({"question_id": qid, "answer": gold.answers[0][0]})
        else:
            skipped.append({"question_id": qid, "reason": f"multi-span gold answer ({len(gold.answers[0])} spans)"})
    return GoldAnswers(
        pd.DataFrame(kept, columns=["question_id", "answer"]), pd.DataFrame(skipped, columns=["question_id", "reason"])
    )


def check_question_ids(table: pd.DataFrame, golds: Mapping[str, GoldReferences], source: str) -> None:
    """Every ``question_id`` of ``table`` must be a known question; the error names source and row."""
    for row, qid in enumerate(table["question_id"], start=1):
        if str(qid) not in golds:
            raise ValueError(
                f"{source}: data row {row}: unknown question_id {qid!r} (not among {len(golds)} questions)"
            )


def score_pairs(
    variants: pd.DataFrame, golds: Mapping[str, GoldReferences], scorers: Sequence[str], source: str = "variants"
) -> pd.DataFrame:
    """One row per accepted variant x scorer metric with original, variant and difference."""
    check_question_ids(variants, golds, source)
    accepted = variants[variants["status"] == "accepted"]
    scorer = _Scorer(scorers)
    original_cache: dict[tuple[str, str], dict[tuple[str, str], float]] = {}
    rows = []
    for qid, original, variant, name in zip(
        accepted["question_id"], accepted["original"], accepted["variant"], accepted["transformation"], strict=True
    ):
        gold = golds[str(qid)]
        key = (str(qid), original)
        if key not in original_cache:
            original_cache[key] = scorer(original, gold)
        before, after = original_cache[key], scorer(variant, gold)
        for (scorer_name, metric), value in before.items():
            rows.append(
                (str(qid), name, transformation_type(name), original, variant, scorer_name, metric,
                 value, after[(scorer_name, metric)], after[(scorer_name, metric)] - value)
            )  # fmt: skip
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def summarize_sensitivity(pairs: pd.DataFrame, config: BootstrapConfig = DEFAULT_BOOTSTRAP) -> pd.DataFrame:
    """Mean original, variant and difference per (scorer, metric, transformation type, and "all").

    ``share_changed`` is the fraction of pairs whose score moved; for 0/1 metrics (EM, acc) it is
    the share of decisions flipped. The interval is for the mean difference, resampling questions;
    all groups share one set of draws (one vectorised pass). ``n_undefined`` counts replicates
    that drew no question of the group (left out of the percentiles).
    """
    columns = [
        "scorer", "metric", "transformation_type", "n_pairs", "n_questions", "mean_original", "mean_variant",
        "mean_difference", "ci_low", "ci_high", "share_changed", "n_replicates", "n_undefined", "seed",
    ]  # fmt: skip
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    pairs = pairs.reset_index(drop=True)  # group indices below are then row positions
    groups = []
    for (scorer, metric), block in pairs.groupby(["scorer", "metric"], sort=True):
        groups.append((scorer, metric, ALL_TYPES, block.index))
        for kind, sub in block.groupby("transformation_type", sort=True):
            groups.append((scorer, metric, kind, sub.index))
    masks = np.zeros((len(pairs), len(groups)))
    for j, (_, _, _, index) in enumerate(groups):
        masks[index.to_numpy(), j] = 1.0
    differences = pairs["difference"].to_numpy(dtype=float)[:, None] * masks
    intervals = cluster_bootstrap_ratio(differences, masks, pairs["question_id"].to_numpy(), config)
    rows = []
    for (scorer, metric, kind, index), interval in zip(groups, intervals, strict=True):
        block = pairs.loc[index]
        rows.append(
            [scorer, metric, kind, len(block), block["question_id"].nunique(), block["original_score"].mean(),
             block["variant_score"].mean(), interval.estimate, interval.low, interval.high,
             float((block["difference"] != 0).mean()), config.n_replicates, interval.n_undefined, config.seed]
        )  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def run_sensitivity(
    answers: pd.DataFrame,
    golds: Mapping[str, GoldReferences],
    inventory: Mapping[str, str],
    config: SensitivityConfig = DEFAULT_SENSITIVITY,
    source: str = "answers",
) -> SensitivityResult:
    """Generate and screen variants of ``answers``, score the pairs, summarise.

    ``answers`` (``question_id``, ``answer``) may be gold answers (see :func:`gold_answers_table`)
    or model outputs; an id not in ``golds`` raises before any scoring, naming ``source`` and row.
    """
    require_answer_table(answers, source)
    check_question_ids(answers, golds, source)
    variants = generate_variants(answers, inventory, config.variants, source)
    pairs = score_pairs(variants, golds, config.scorers, source=f"{source} (variants)")
    return SensitivityResult(variants, pairs, summarize_sensitivity(pairs, config.bootstrap))
