"""Clock times: 12-hour with am/pm (American) vs 24-hour (other).

"7 pm", "7:30 p.m.", "11 AM" are 12-hour. A time counts as 24-hour only when that is certain:
hour 13-23 ("19:00"), hour 00 ("00:15"), or an explicit hour marker ("19.00 h", "07:30 hrs",
"19h30"). A bare "7:30" or "12:45" could be either and is kept as ``neutral``. "19.00" without a
marker is a price or a decimal, not a time. The am/pm marker must end the word, so "5 amps",
"Tim" or "time" never match.
"""
from __future__ import annotations

import re

import pyarrow as pa

from audit.conventions.signals import Hit, candidates

PREFILTER = r"\d\s?(?:[AaPp]\.?\s?[Mm]|[:.h]\d\d)"

_TIME = re.compile(
    r"(?<![\d:.,])(?:"
    r"(?P<h12>1[0-2]|0?[1-9])(?::(?P<m12>[0-5]\d))?\s?(?P<ampm>[AaPp](?:\.\s?[Mm]\.?|[Mm]))(?![A-Za-z])"
    r"|(?P<h24>[01]?\d|2[0-3])(?P<sep>[:.h])(?P<m24>[0-5]\d)(?::[0-5]\d)?"
    r"(?P<marker>\s?(?:hrs|hours|h)\b\.?)?(?![\d:]|\.\d)"
    r")"
)


def _decide(match: re.Match[str]) -> tuple[str, str] | None:
    if match.group("ampm"):
        return "american", "12-hour"
    hour, sep = match.group("h24"), match.group("sep")
    explicit = bool(match.group("marker")) or sep == "h"
    if explicit or (sep == ":" and (int(hour) >= 13 or hour == "00")):
        return "other", "24-hour"
    if sep == ":":
        return "neutral", "hh:mm"
    return None


def find_times(texts: pa.StringArray) -> list[Hit]:
    """Clock-time signals in each string of ``texts``."""
    hits: list[Hit] = []
    for unit, string in candidates(texts, PREFILTER):
        for match in _TIME.finditer(string):
            decided = _decide(match)
            if decided:
                hits.append(Hit(unit, match.start(), match.end(), "time", *decided))
    return hits
