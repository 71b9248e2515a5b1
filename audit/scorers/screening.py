"""Spans of an answer that a meaning-preserving variant must not touch.

Why: swapping "Flavor-Aid" to "Flavour-Aid" or "Labour Party" to "Labor Party" changes a name, not
a convention, so such a variant would be *wrong* and a scorer would be right to reject it. The
screen finds protected spans in the original answer; a variant whose edits overlap one is rejected
with the reason recorded. Three sources of protection:

- a protected-names list (brand names, organisations), matched case-insensitively on word
  boundaries;
- quoted text ("...", curly quotes, or '...' not used as an apostrophe): titles such as
  "The Color Purple" and verbatim quotations, which a variant must reproduce exactly;
- Title Case multiword names: two or more consecutive capitalised words, optionally joined by
  "of", "for", "and", "the", "de", ... . Month and weekday names and temperature-scale names are
  not name words (they are what date and unit variants rewrite), and a capitalised function word
  at the start of a sentence ("The", "On") is not part of a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_PROTECTED_NAMES: tuple[str, ...] = (
    "Flavor-Aid",
    "Kool-Aid",
    "World Health Organization",
    "Pan American Health Organization",
    "Centers for Disease Control and Prevention",
    "Pearl Harbor",
    "Labour Party",
    "Labor Day",
    "Department of Defense",
)
"""Examples from audited benchmarks; callers extend it with their benchmark's names."""

MONTHS = "january february march april may june july august september october november december".split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NOT_NAME_WORDS = frozenset(MONTHS + _WEEKDAYS + ["fahrenheit", "celsius", "centigrade"])
_CONNECTORS = frozenset(["of", "for", "and", "the", "de", "du", "la", "le", "von", "van", "der", "del", "&"])
_SENTENCE_START_WORDS = frozenset(
    "the a an on in at by for to of from it its this that these those he she they we i you "
    "there here what when where who why how yes no".split()
)
_WORD = re.compile(r"[^\W\d_](?:[\w'’-]|\.(?=\w))*|&")
_QUOTED = re.compile(r"\"[^\"\n]+\"|“[^”\n]+”|(?<![\w])'[^'\n]+'(?![\w])")


@dataclass(frozen=True)
class ProtectedSpan:
    """A character range of the original answer and why it is protected."""

    start: int
    end: int
    text: str
    reason: str

    def overlaps(self, start: int, end: int) -> bool:
        return start < self.end and self.start < end


def _listed_names(text: str, names: Iterable[str]) -> list[ProtectedSpan]:
    spans = []
    for name in names:
        pattern = re.compile(r"(?<![\w])" + re.escape(name) + r"(?![\w])", re.IGNORECASE)
        for m in pattern.finditer(text):
            spans.append(ProtectedSpan(m.start(), m.end(), m.group(0), "protected name"))
    return spans


def _quoted_titles(text: str) -> list[ProtectedSpan]:
    return [ProtectedSpan(m.start(), m.end(), m.group(0), "quoted text") for m in _QUOTED.finditer(text)]


def _is_sentence_start(text: str, index: int) -> bool:
    before = text[:index].rstrip()
    return not before or before[-1] in '.!?:;"“'


def _title_case_names(text: str) -> list[ProtectedSpan]:
    spans: list[ProtectedSpan] = []
    run: list[re.Match] = []  # capitalised words (and connectors between them) of the current run

    def close() -> None:
        while run and run[-1].group(0).lower() in _CONNECTORS:
            run.pop()
        if run and _is_sentence_start(text, run[0].start()) and run[0].group(0).lower() in _SENTENCE_START_WORDS:
            run.pop(0)
        capitalised = [m for m in run if m.group(0).lower() not in _CONNECTORS]
        if len(capitalised) >= 2:
            spans.append(
                ProtectedSpan(run[0].start(), run[-1].end(), text[run[0].start() : run[-1].end()], "Title Case name")
            )
        run.clear()

    previous_end = 0
    for m in _WORD.finditer(text):
        word = m.group(0)
        gap = text[previous_end : m.start()]
        if run and (gap.strip() or "\n" in gap):  # punctuation or a line break ends a name
            close()
        previous_end = m.end()
        if word[0].isupper() and word.lower().rstrip(".") not in _NOT_NAME_WORDS:
            run.append(m)
        elif run and word.lower() in _CONNECTORS:
            run.append(m)
        else:
            close()
    close()
    return spans


def find_protected_spans(text: str, protected_names: Iterable[str] = DEFAULT_PROTECTED_NAMES) -> list[ProtectedSpan]:
    """Every protected span of ``text``, from the list, quotes and Title Case names."""
    return _listed_names(text, protected_names) + _quoted_titles(text) + _title_case_names(text)
