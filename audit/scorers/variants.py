"""Meaning-preserving answer variants, screened for names, one row per variant.

Why: a scorer is locale-fair only if a correct answer written under another convention still
earns credit. Each generator rewrites one convention and nothing else:

- ``spelling:to_other`` / ``spelling:to_american``: whole-word swaps from a pair inventory
  (``{american: other}``, e.g. the spelling rows of the conventions audit's American/British
  list), case kept; phrase and hyphenated entries match on word boundaries;
- ``date:to_day_month`` / ``date:to_month_day``: "April 21, 2025" <-> "21 April 2025",
  "April 21" <-> "21 April" (also "the 21st of April" -> "April 21");
- ``time:to_24h`` / ``time:to_12h``: "7 pm" -> "19:00", "7:30 a.m." -> "07:30"; 24-hour times are
  rewritten only when unambiguous (hour >= 13, 00:xx, or an explicit "h"/"hrs"), so a bare
  "7:30" is left alone;
- ``unit:to_metric`` / ``unit:to_us``: conversion at the stated precision (see ``units``).

A generator that finds nothing to rewrite produces no row. A variant whose edits touch a
protected span (``screening``) is kept as a row with status ``rejected`` and the reason, so a
reviewer sees every decision; the transformation *type* is the part before the colon.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import pandas as pd

from audit.scorers.choices import TRANSFORMATIONS
from audit.scorers.screening import (
    DEFAULT_PROTECTED_NAMES,
    MONTHS,
    find_protected_spans,
)
from audit.scorers.units import convert_units

VARIANT_COLUMNS = ("question_id", "original", "variant", "transformation", "status", "reason")


@dataclass(frozen=True)
class Edit:
    """Replace ``original[start:end]`` with ``replacement``."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class VariantConfig:
    """Which transformations to apply and what to protect."""

    transformations: tuple[str, ...] = TRANSFORMATIONS
    protected_names: tuple[str, ...] = DEFAULT_PROTECTED_NAMES

    def __post_init__(self) -> None:
        unknown = sorted(set(self.transformations) - set(TRANSFORMATIONS))
        if unknown:
            raise ValueError(f"unknown transformations {unknown}; known: {list(TRANSFORMATIONS)}")


DEFAULT_VARIANTS = VariantConfig()


def transformation_type(transformation: str) -> str:
    """``"spelling:to_other"`` -> ``"spelling"``."""
    return transformation.split(":", 1)[0]


# --- spelling ---------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class SpellingSwap:
    """Both directions of a pair inventory; ambiguous entries are left out of both.

    A form that is the American form of one pair and the other form of another (or the other form
    of several American forms) has no single meaning-preserving swap, so it is not used. Entries
    may be single words (matched as whole tokens) or phrases and hyphenated forms ("license
    plate", "co-operate"), matched case-insensitively on word boundaries; where a phrase and one
    of its words both match, the phrase wins.
    """

    to_other: Mapping[str, str]
    to_american: Mapping[str, str]

    @classmethod
    def from_inventory(cls, american_to_other: Mapping[str, str]) -> SpellingSwap:
        pairs = []
        for american, other in american_to_other.items():
            if not isinstance(american, str) or not isinstance(other, str) or not american.strip() or not other.strip():
                raise ValueError(f"spelling inventory entry {american!r}: {other!r} is not a pair of non-empty strings")
            pairs.append((" ".join(american.lower().split()), " ".join(other.lower().split())))
        american_forms = {a for a, _ in pairs}
        other_counts: dict[str, int] = {}
        for _, o in pairs:
            other_counts[o] = other_counts.get(o, 0) + 1
        keep = [(a, o) for a, o in pairs if a != o and a not in other_counts and o not in american_forms]
        return cls(
            to_other={a: o for a, o in keep},
            to_american={o: a for a, o in keep if other_counts[o] == 1},
        )


def _match_case(template: str, word: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[0].isupper():
        return word[0].upper() + word[1:]
    return word


@dataclass(frozen=True)
class _Lexicon:
    """One direction of a swap, split into token lookups and one phrase regex."""

    words: Mapping[str, str]
    phrases: Mapping[str, str]
    pattern: re.Pattern | None

    @classmethod
    def of(cls, mapping: Mapping[str, str]) -> _Lexicon:
        words = {k: v for k, v in mapping.items() if _WORD.fullmatch(k)}
        phrases = {k: v for k, v in mapping.items() if k not in words}
        alternation = "|".join(r"\s+".join(map(re.escape, p.split())) for p in sorted(phrases, key=len, reverse=True))
        pattern = re.compile(rf"(?<![\w-])(?:{alternation})(?![\w-])", re.IGNORECASE) if phrases else None
        return cls(words, phrases, pattern)

    def edits(self, text: str) -> list[Edit]:
        edits: list[Edit] = []
        if self.pattern is not None:
            for m in self.pattern.finditer(text):
                target = self.phrases[" ".join(m.group(0).lower().split())]
                edits.append(Edit(m.start(), m.end(), _match_case(m.group(0), target)))
        for m in _WORD.finditer(text):
            word = self.words.get(m.group(0).lower())
            if word is not None and not any(e.start < m.end() and m.start() < e.end for e in edits):
                edits.append(Edit(m.start(), m.end(), _match_case(m.group(0), word)))
        return edits


# --- written dates ----------------------------------------------------------------------------

_MONTH_NAMES = {m: m.capitalize() for m in MONTHS}
_MONTH_ABBREVIATIONS = {m[:3]: m.capitalize() for m in MONTHS} | {"sept": "September"}
_MONTH = (
    r"(?P<month>" + "|".join(sorted(list(_MONTH_NAMES) + list(_MONTH_ABBREVIATIONS), key=len, reverse=True)) + r")\.?"
)
_ORDINAL = r"(?:st|nd|rd|th)?"
_MONTH_DAY = re.compile(
    r"\b" + _MONTH + r" (?P<day>\d{1,2})" + _ORDINAL + r"(?:,? (?P<year>\d{4}))?(?![\w:])", re.IGNORECASE
)
_DAY_MONTH = re.compile(
    r"\b(?:the )?(?P<day>\d{1,2})" + _ORDINAL + r" (?:of )?" + _MONTH + r"(?:,? (?P<year>\d{4}))?(?!\w)", re.IGNORECASE
)


def _month(m: re.Match) -> str | None:
    """Canonical month name; only capitalised forms count ("march 5 miles" is a verb)."""
    raw = m.group("month")
    if not raw[0].isupper():
        return None
    if raw.lower() in _MONTH_NAMES:
        return _MONTH_NAMES[raw.lower()]
    return _MONTH_ABBREVIATIONS[raw.lower()]


def _date_edits(text: str, to_day_month: bool) -> list[Edit]:
    edits = []
    for m in (_MONTH_DAY if to_day_month else _DAY_MONTH).finditer(text):
        month, day, year = _month(m), int(m.group("day")), m.group("year")
        if month is None or not 1 <= day <= 31:
            continue
        if to_day_month:
            replacement = f"{day} {month}" + (f" {year}" if year else "")
        else:
            replacement = f"{month} {day}" + (f", {year}" if year else "")
        edits.append(Edit(m.start(), m.end(), replacement))
    return edits


# --- 12 h / 24 h ------------------------------------------------------------------------------

_TIME_12H = re.compile(
    r"(?<![\w:.])(?P<hour>\d{1,2})(?::(?P<minute>[0-5]\d))?\s?(?P<half>[ap])\.?\s?m(?P<dot>\.)?(?![\w])", re.IGNORECASE
)
_TIME_24H = re.compile(
    r"(?<![\w:.])(?P<hour>\d{1,2})(?P<sep>[:.h])(?P<minute>[0-5]\d)(?P<suffix>\s?(?:hrs|hours|h)\b)?(?![:\d])"
    r"(?!\s?[ap]\.?\s?m\b)",
    re.IGNORECASE,
)


def _to_24h_edits(text: str) -> list[Edit]:
    edits = []
    for m in _TIME_12H.finditer(text):
        hour, minute = int(m.group("hour")), int(m.group("minute") or 0)
        if not 1 <= hour <= 12:
            continue
        hour = hour % 12 + (12 if m.group("half").lower() == "p" else 0)
        replacement = f"{hour:02d}:{minute:02d}"
        end = m.end()
        if m.group("dot") and (end == len(text) or re.match(r"\s+[A-Z]", text[end:])):
            replacement += "."  # "a.m." also ended the sentence
        edits.append(Edit(m.start(), end, replacement))
    return edits


def _to_12h_edits(text: str) -> list[Edit]:
    edits = []
    for m in _TIME_24H.finditer(text):
        hour, minute, suffix = int(m.group("hour")), int(m.group("minute")), m.group("suffix")
        explicit = bool(suffix) or m.group("sep").lower() == "h"
        if hour > 23 or (m.group("sep") == "." and not suffix) or not (hour >= 13 or hour == 0 or explicit):
            continue  # "7:30" is neutral; "19.00" without "h" may be a decimal
        half = "pm" if hour >= 12 else "am"
        twelve = hour % 12 or 12
        replacement = f"{twelve} {half}" if minute == 0 else f"{twelve}:{minute:02d} {half}"
        edits.append(Edit(m.start(), m.end(), replacement))
    return edits


# --- driver -----------------------------------------------------------------------------------


def _apply(text: str, edits: Sequence[Edit]) -> str:
    out, cursor = [], 0
    for edit in sorted(edits, key=lambda e: e.start):
        out.append(text[cursor : edit.start])
        out.append(edit.replacement)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)


def _unit_edits(text: str, direction: str) -> list[Edit]:
    return [Edit(c.start, c.end, c.replacement) for c in convert_units(text) if c.direction == direction]


def _generators(inventory: Mapping[str, str]) -> dict[str, Callable[[str], list[Edit]]]:
    swap = SpellingSwap.from_inventory(inventory)
    return {
        "spelling:to_other": _Lexicon.of(swap.to_other).edits,
        "spelling:to_american": _Lexicon.of(swap.to_american).edits,
        "date:to_day_month": partial(_date_edits, to_day_month=True),
        "date:to_month_day": partial(_date_edits, to_day_month=False),
        "time:to_24h": _to_24h_edits,
        "time:to_12h": _to_12h_edits,
        "unit:to_metric": partial(_unit_edits, direction="to_metric"),
        "unit:to_us": partial(_unit_edits, direction="to_us"),
    }


def _variants_of(
    question_id: str, text: str, generators: Mapping[str, Callable[[str], list[Edit]]], config: VariantConfig
) -> list[dict[str, str]]:
    """Variant rows of one answer (no rows when no transformation applies)."""
    rows = []
    protected = None
    for name in config.transformations:
        edits = [e for e in generators[name](text) if text[e.start : e.end] != e.replacement]
        if not edits:
            continue
        if protected is None:
            protected = find_protected_spans(text, config.protected_names)
        hits = {(p.reason, p.text) for p in protected for e in edits if p.overlaps(e.start, e.end)}
        reason = "; ".join(f"alters {why} {span!r}" for why, span in sorted(hits))
        rows.append(
            {
                "question_id": question_id,
                "original": text,
                "variant": _apply(text, edits),
                "transformation": name,
                "status": "rejected" if hits else "accepted",
                "reason": reason,
            }
        )
    return rows


def require_answer_table(answers: pd.DataFrame, source: str) -> None:
    """Check an answers table has ``question_id`` and string ``answer``; errors name source and row."""
    missing = [c for c in ("question_id", "answer") if c not in answers.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; have {list(answers.columns)}")
    for row, (qid, answer) in enumerate(zip(answers["question_id"], answers["answer"], strict=True), start=1):
        if not isinstance(answer, str):
            raise ValueError(
                f"{source}: data row {row} (question_id {qid!r}): field 'answer' must be a string, got {answer!r}"
            )
        if pd.isna(qid) or str(qid) == "":
            raise ValueError(f"{source}: data row {row}: field 'question_id' is empty")


def generate_variants(
    answers: pd.DataFrame,
    inventory: Mapping[str, str],
    config: VariantConfig = DEFAULT_VARIANTS,
    source: str = "answers",
) -> pd.DataFrame:
    """Variant rows ``(question_id, original, variant, transformation, status, reason)``.

    ``answers`` has ``question_id`` and ``answer`` columns (gold answers or model outputs);
    ``inventory`` maps American spellings to the other variety. Rows follow the input order,
    then the order of ``config.transformations``.
    """
    require_answer_table(answers, source)
    generators = _generators(inventory)
    rows: list[dict[str, str]] = []
    for qid, answer in zip(answers["question_id"], answers["answer"], strict=True):
        rows.extend(_variants_of(str(qid), answer, generators, config))
    return pd.DataFrame(rows, columns=list(VARIANT_COLUMNS))
