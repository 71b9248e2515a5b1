"""Numeric and written dates: month-first (American) vs day-first (other).

Numeric dates are decided only when a field exceeds 12: 12/25/2021 is American, 25/12/2021 is
other, 12/05/2021 is ``ambiguous`` (counted apart, never guessed) and ISO 2021-12-25 is
``neutral``. ``.`` and ``-`` separators need a 4-digit year, so version numbers (1.2.10) and
ranges (3-4-10) are not dates.

Written dates: "April 21", "April 21, 2025" (American) vs "21 April", "21 April 2025",
"the 21st of April" (other). Month names must be capitalised, so the verb "march" and the modal
"may" never match; capitalised "March"/"May" without a year or ordinal must not be followed by a
lower-case word ("March 20 miles north", "May 5 people come") to count.
"""
from __future__ import annotations

import re

import pyarrow as pa

from audit.conventions.signals import Hit, candidates

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.)"
)
_VERB_MONTHS = {"March", "May"}
_ORDINAL = r"(?:st|nd|rd|th)"

PREFILTER = r"\d[/.\-]\d{1,2}[/.\-]\d\d|" + _MONTH.replace(r"\.", r"\.?")

_NUMERIC = re.compile(
    r"(?<![\d/.\-])(?P<a>\d{1,4})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<c>\d{4}|\d{2})(?![\d/]|[.\-]\d)"
)
_WRITTEN = re.compile(
    rf"(?<![\w,.])(?P<dmy>(?:the\s+)?(?P<d1>\d{{1,2}})(?P<o1>{_ORDINAL})?\s+(?:of\s+)?(?P<m1>{_MONTH})"
    rf"(?:,?\s+(?P<y1>\d{{4}}))?(?!\w))"
    rf"|\b(?P<mdy>(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})(?P<o2>{_ORDINAL})?(?![\w:]|[.,]\d)"
    rf"(?:,?\s+(?P<y2>\d{{4}})(?!\d))?)"
)
_LOWER_WORD_AFTER = re.compile(r"\s+[a-z]")


def _numeric(match: re.Match[str]) -> tuple[str, str] | None:
    """(variety, detail) of a numeric date, or None when it cannot be a date."""
    a, b, c = match.group("a"), match.group("b"), match.group("c")
    sep = match.group("sep")
    if len(a) == 4:  # ISO order, year first
        return ("neutral", "YYYY-MM-DD") if 1 <= int(b) <= 12 and len(c) == 2 and 1 <= int(c) <= 31 else None
    if len(a) == 3 or (sep != "/" and len(c) != 4):
        return None
    first, second = int(a), int(b)
    if not (1 <= first <= 31 and 1 <= second <= 31):
        return None
    if first > 12 and second <= 12:
        return "other", f"DD{sep}MM{sep}YYYY"
    if second > 12 and first <= 12:
        return "american", f"MM{sep}DD{sep}YYYY"
    if first <= 12 and second <= 12:
        return "ambiguous", f"NN{sep}NN{sep}YYYY"
    return None


def _written(match: re.Match[str], string: str) -> tuple[str, str] | None:
    if match.group("dmy"):
        day = int(match.group("d1"))
        return ("other", "day month") if 1 <= day <= 31 else None
    day = int(match.group("d2"))
    if not 1 <= day <= 31:
        return None
    month = match.group("m2")
    bare = not match.group("y2") and not match.group("o2")
    if month in _VERB_MONTHS and bare and _LOWER_WORD_AFTER.match(string, match.end()):
        return None
    return "american", "month day"


def find_dates(texts: pa.StringArray) -> list[Hit]:
    """Numeric and written date signals in each string of ``texts``."""
    hits: list[Hit] = []
    for unit, string in candidates(texts, PREFILTER):
        for match in _NUMERIC.finditer(string):
            decided = _numeric(match)
            if decided:
                hits.append(Hit(unit, match.start(), match.end(), "numeric_date", *decided))
        for match in _WRITTEN.finditer(string):
            decided = _written(match, string)
            if decided:
                hits.append(Hit(unit, match.start(), match.end(), "written_date", *decided))
    return hits
