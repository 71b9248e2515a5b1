"""SQuAD exact match and token F1, as in the official SQuAD v2.0 evaluation script.

Why: SQuAD-style scoring (lowercase, strip punctuation and English articles, bag-of-tokens F1
with multiplicity) is the most common extractive-QA scorer; unlike DROP it has no hyphen split
or number canonicalisation, so "78.0" and "78" differ. Empty answers follow v2.0 (two empty
answers match); otherwise v1.1 and v2.0 agree. Scores are fractions in [0, 1] (the script
reports them x100); a question's score is the max over its gold answers.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


@dataclass(frozen=True)
class SquadScore:
    """EM and F1 of one prediction, fractions in [0, 1]."""

    em: float
    f1: float


def normalize_squad(text: str) -> str:
    """Lowercase, drop punctuation, drop articles, collapse whitespace (the official order)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def squad_f1(predicted: str, gold: str) -> float:
    """Token F1 with multiplicity (a Counter intersection), 1 when both are empty."""
    pred_tokens = normalize_squad(predicted).split()
    gold_tokens = normalize_squad(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    overlap = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred_tokens), overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def score_squad(predicted: str, golds: Sequence[str]) -> SquadScore:
    """Max EM and max F1 over the gold answers; no gold answers is an error, not a zero."""
    if not golds:
        raise ValueError("score_squad needs at least one gold answer")
    pred = normalize_squad(predicted)
    em = max(float(pred == normalize_squad(g)) for g in golds)
    return SquadScore(em=em, f1=max(squad_f1(predicted, g) for g in golds))
