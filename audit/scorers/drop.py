"""DROP's official exact match and F1, reimplemented from the algorithm description.

Why a reimplementation: the official scorer (``allennlp_rc/eval/drop_eval.py``) ships on PyPI
only inside the heavy ``allennlp-models``. The audit asks whether *this* scorer gives credit to
meaning-preserving answer variants, so every quirk matters and is kept on purpose:

- tokens are split on spaces **and hyphens** ("78-yard" == "78 yard");
- punctuation is removed from a token only when the token does not parse as a float, and numbers
  are canonicalised with ``str(float(x))`` ("78" == "78.0", but "1,000" becomes "1000.0" only
  after the comma is stripped);
- articles are removed per token, then empty tokens are dropped;
- an answer is a bag of spans; F1 aligns gold and predicted spans one-to-one by optimal
  assignment (``scipy.optimize.linear_sum_assignment``) and a pair scores 0 unless it shares a
  number with the gold span whenever the gold span contains one (the "number-match gate");
- F1 is averaged over ``max(len(gold), len(pred))`` slots and rounded to 2 decimals;
- a question's score is the maximum over its gold answer and its validated answers.

Scores are fractions in [0, 1].
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

Answer = str | Sequence[str]
"""A DROP answer: one string or a sequence of spans (a multi-span answer)."""

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_TOKEN_SPLIT = re.compile(" |-")


@dataclass(frozen=True)
class DropScore:
    """EM and F1 of one prediction (fractions; F1 rounded to 2 decimals as the official scorer)."""

    em: float
    f1: float


@dataclass(frozen=True)
class DropQuestion:
    """One DROP question with every acceptable gold answer as a tuple of spans.

    ``golds[0]`` is the original annotation; the rest are the validated answers. Each gold is a
    tuple of strings (one element for number, date and single-span answers).
    """

    query_id: str
    passage_id: str
    question: str
    golds: tuple[tuple[str, ...], ...]
    gold_types: tuple[str, ...]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _normalize_token(token: str) -> str:
    token = token.lower()
    if not _is_number(token):
        token = "".join(ch for ch in token if ch not in _PUNCTUATION)
    if _is_number(token):
        token = str(float(token))
    token = _ARTICLES.sub(" ", token)
    return " ".join(token.split())


def normalize_answer(text: str) -> str:
    """Normalise one span as the official scorer does ("S.K. Singh" -> "sk singh")."""
    parts = [_normalize_token(token) for token in _TOKEN_SPLIT.split(text)]
    return " ".join(part for part in parts if part.strip()).strip()


def _answer_to_bags(answer: Answer) -> tuple[list[str], list[frozenset[str]]]:
    spans = [answer] if isinstance(answer, str) else list(answer)
    normalized = [normalize_answer(span) for span in spans]
    return normalized, [frozenset(span.split()) for span in normalized]


def _bag_f1(predicted: frozenset[str], gold: frozenset[str]) -> float:
    overlap = len(gold & predicted)
    precision = 1.0 if not predicted else overlap / len(predicted)
    recall = 1.0 if not gold else overlap / len(gold)
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _numbers_match(gold: frozenset[str], predicted: frozenset[str]) -> bool:
    """The gate: a gold bag with numbers needs at least one of them in the prediction."""
    gold_numbers = {word for word in gold if _is_number(word)}
    if not gold_numbers:
        return True
    return bool(gold_numbers & {word for word in predicted if _is_number(word)})


def _aligned_f1(predicted: list[frozenset[str]], gold: list[frozenset[str]]) -> float:
    scores = np.zeros((len(gold), len(predicted)))
    for gi, gold_bag in enumerate(gold):
        for pi, pred_bag in enumerate(predicted):
            if _numbers_match(gold_bag, pred_bag):
                scores[gi, pi] = _bag_f1(pred_bag, gold_bag)
    rows, cols = linear_sum_assignment(-scores)
    slots = np.zeros(max(len(gold), len(predicted)))
    for row, col in zip(rows, cols, strict=True):
        slots[row] = max(slots[row], scores[row, col])
    return float(np.mean(slots))


def drop_metrics(predicted: Answer, gold: Answer) -> DropScore:
    """EM and F1 of a prediction against one gold answer (the official ``get_metrics``).

    EM needs the same set of normalised spans *and* the same number of spans, so ``["td"]``
    against ``["td", "td"]`` is EM 0 but F1 0.5.
    """
    pred_spans, pred_bags = _answer_to_bags(predicted)
    gold_spans, gold_bags = _answer_to_bags(gold)
    same = set(pred_spans) == set(gold_spans) and len(pred_spans) == len(gold_spans)
    f1 = round(_aligned_f1(pred_bags, gold_bags), 2)
    return DropScore(em=1.0 if same else 0.0, f1=f1)


def score_drop(predicted: Answer | None, golds: Sequence[Sequence[str]]) -> DropScore:
    """Max EM and max F1 over a question's gold answers; a missing prediction scores 0/0.

    A gold whose first string is blank is skipped (the official scorer does the same: an
    unannotated validation slot must not count as a match for an empty prediction).
    """
    if predicted is None:
        return DropScore(0.0, 0.0)
    best_em, best_f1 = 0.0, 0.0
    for gold in golds:
        if not gold or not gold[0].strip():
            continue
        score = drop_metrics(predicted, tuple(gold))
        best_em, best_f1 = max(best_em, score.em), max(best_f1, score.f1)
    return DropScore(best_em, best_f1)


def answer_json_to_strings(answer: Mapping, where: str) -> tuple[tuple[str, ...], str]:
    """Gold strings and type of one DROP answer object, in the official priority order.

    A non-empty ``number`` wins, then non-empty ``spans``, then ``date`` rendered as
    "{day} {month} {year}". ``where`` names the file and question for error messages.
    """
    if not isinstance(answer, Mapping):
        raise ValueError(f"{where}: answer must be an object with number/date/spans, got {type(answer).__name__}")
    number = answer.get("number", "")
    if number not in ("", None):
        return (str(number),), "number"
    spans = answer.get("spans") or []
    if not isinstance(spans, list) or not all(isinstance(s, str) for s in spans):
        raise ValueError(f"{where}: field 'spans' must be a list of strings, got {spans!r}")
    if spans:
        return tuple(spans), "span" if len(spans) == 1 else "spans"
    if "date" in answer:
        date = answer["date"]
        if not isinstance(date, Mapping):
            raise ValueError(f"{where}: field 'date' must be an object with day/month/year, got {date!r}")
        text = f"{date.get('day', '')} {date.get('month', '')} {date.get('year', '')}"
        return (text,), "date"
    raise ValueError(f"{where}: answer has none of 'number', 'spans', 'date'")


def parse_drop_dataset(data: Mapping, source: str) -> list[DropQuestion]:
    """Questions of a dataset in the official DROP JSON layout.

    Layout: ``{passage_id: {"passage": str, "qa_pairs": [{"question", "query_id", "answer",
    "validated_answers"?}]}}``. ``source`` (a file name) is used in error messages.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{source}: top level must be an object keyed by passage id")
    questions: list[DropQuestion] = []
    for passage_id, passage in data.items():
        qa_pairs = passage.get("qa_pairs") if isinstance(passage, Mapping) else None
        if not isinstance(qa_pairs, list):
            raise ValueError(f"{source}: passage {passage_id!r}: field 'qa_pairs' must be a list")
        for index, qa in enumerate(qa_pairs):
            where = f"{source}: passage {passage_id!r}, qa_pairs[{index}]"
            for field in ("query_id", "question", "answer"):
                if field not in qa:
                    raise ValueError(f"{where}: missing field {field!r}")
            where = f"{where} (query_id {qa['query_id']!r})"
            candidates = [qa["answer"], *(qa.get("validated_answers") or [])]
            parsed = [answer_json_to_strings(a, f"{where}, answer {i}") for i, a in enumerate(candidates)]
            questions.append(
                DropQuestion(
                    query_id=str(qa["query_id"]),
                    passage_id=str(passage_id),
                    question=str(qa["question"]),
                    golds=tuple(strings for strings, _ in parsed),
                    gold_types=tuple(kind for _, kind in parsed),
                )
            )
    return questions


def evaluate_drop(questions: Sequence[DropQuestion], predictions: Mapping[str, Answer]) -> DropScore:
    """Global EM/F1: the mean over questions of the per-question (max over golds) scores.

    Questions without a prediction score 0/0, as in the official evaluation; predictions for
    ids that are not among the questions are an error rather than silently ignored.
    """
    known = {q.query_id for q in questions}
    unknown = sorted(set(predictions) - known)
    if unknown:
        raise ValueError(f"predictions for unknown query ids: {unknown[:5]} ({len(unknown)} in all)")
    if not questions:
        raise ValueError("no questions to evaluate")
    scores = [score_drop(predictions.get(q.query_id), q.golds) for q in questions]
    return DropScore(
        em=float(np.mean([s.em for s in scores])),
        f1=float(np.mean([s.f1 for s in scores])),
    )
