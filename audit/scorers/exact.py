"""Plain normalised exact match: the weakest normalisation a benchmark scorer commonly applies.

Why: many harness tasks compare strings after case folding and whitespace clean-up only. The
audit contrasts it with DROP and SQuAD to show how much credit a valid variant (another spelling,
date order, unit) loses when nothing else is forgiven. Punctuation at the ends of the answer is
dropped by default (a trailing full stop should not decide correctness); inner punctuation is
kept, so "7:30" and "7.30" differ.
"""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ExactMatchConfig:
    """What the comparison forgives. Defaults: Unicode NFKC, case folding, whitespace, outer punctuation."""

    casefold: bool = True
    strip_outer_punctuation: bool = True


DEFAULT_EXACT = ExactMatchConfig()


def normalize_exact(text: str, config: ExactMatchConfig = DEFAULT_EXACT) -> str:
    """The string compared by :func:`exact_match`."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    if config.casefold:
        text = text.casefold()
    if config.strip_outer_punctuation:
        text = text.strip(string.punctuation + " ")
    return text


def exact_match(predicted: str, golds: Sequence[str], config: ExactMatchConfig = DEFAULT_EXACT) -> float:
    """1.0 if the normalised prediction equals any normalised gold answer, else 0.0."""
    if not golds:
        raise ValueError("exact_match needs at least one gold answer")
    pred = normalize_exact(predicted, config)
    return float(any(pred == normalize_exact(g, config) for g in golds))
