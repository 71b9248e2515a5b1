"""The worker-answer parse rule and the outcome categories of one (question, model, setting) cell.

Categories (``STATUSES``), one per cell:
- ``answered``: the worker returned a parsable letter; ``correct`` is 1 when it is the gold letter.
- ``unparsable``: the worker replied, but not with one valid letter (see ``parse_answer``). Scored
  as wrong, because a benchmark gives no credit for an answer it cannot read; counted apart so a
  report can tell a model that answers badly from one that does not answer in the format.
- ``empty_router``: a router output the cell needs was empty, so the worker would have been asked
  about fewer than r descriptions; the worker is not called and the cell is not scored.
- ``failed`` / ``timeout``: a router or worker call raised or ran out of time; not scored.
- ``no_options``: the item cannot be asked as multiple choice (in outcome tables built elsewhere;
  the sampler never draws such items). Not scored.
Only ``SCORED`` cells enter the statistics; every category is counted and reported.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

STATUSES = ("answered", "unparsable", "empty_router", "failed", "timeout", "no_options")
SCORED = frozenset({"answered", "unparsable"})
CALL_ERRORS = ("failed", "timeout")

# A lead-in a model often writes before the letter: "Answer:", "The answer is", "Option", "Final answer -".
_LEAD_IN = re.compile(r"^(?:(?:the\s+)?(?:final\s+|correct\s+)?(?:answer|option|choice)(?:\s+is)?\s*[:\-–]?\s*)", re.IGNORECASE)
_WRAPPERS = "*_`\"'"
# The letter, optionally in brackets, then the end or a separator before option text ("B. Paris", "(B) Paris").
_LETTER = re.compile(r"^[\(\[]?([A-Za-z])[\)\]]?(?:$|[\.\):]\s*|\s*[\-–]\s+)")


def parse_answer(text: str | None, valid: tuple[str, ...]) -> str | None:
    """The option letter a worker reply names, or None when it is unparsable.

    The rule, applied to the first non-blank line of the reply:
    1. strip surrounding whitespace, Markdown emphasis (``*``, ``_``, backticks) and quotes;
    2. drop one lead-in such as ``Answer:``, ``The answer is``, ``Option`` (any case);
    3. the rest must be a letter, optionally in brackets, that is either the whole rest or followed by
       ``.``, ``)``, ``:`` or a dash, and so may be followed by the option text (``B. Paris``);
    4. the letter must be one of ``valid`` (upper case; a lower-case letter counts only when it is
       all that is left after steps 1-2, since ``a`` in running text is usually the article).
    Anything else -- no reply, prose around the letter (``I think B``), two letters (``B or C``), a
    letter outside the options -- is unparsable. The rule never guesses between candidates.
    """
    if text is None:
        return None
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    core = line.strip().strip(_WRAPPERS).strip()
    core = _LEAD_IN.sub("", core, count=1).strip().strip(_WRAPPERS).strip()
    match = _LETTER.match(core)
    if not match:
        return None
    letter = match.group(1)
    whole = match.end() == len(core) and len(core.strip("()[]")) == 1
    if letter.islower():
        if not whole:
            return None
        letter = letter.upper()
    return letter if letter in valid else None


@dataclass(frozen=True)
class Outcome:
    """One cell's category, correctness (None unless scored) and parsed letter."""

    status: str
    correct: int | None = None
    letter: str | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown outcome status {self.status!r}; expected one of {STATUSES}")
        if (self.correct is None) == (self.status in SCORED):
            raise ValueError(f"status {self.status!r} {'needs' if self.status in SCORED else 'cannot have'} a correct value")


def score_answer(text: str | None, valid: tuple[str, ...], gold: str) -> Outcome:
    """Parse a worker reply and score it against the gold letter (unparsable counts as wrong)."""
    letter = parse_answer(text, valid)
    if letter is None:
        return Outcome("unparsable", correct=0)
    return Outcome("answered", correct=int(letter == gold), letter=letter)


def unscored(status: str) -> Outcome:
    """The outcome of a cell that was not answered (``empty_router``, ``failed``, ``timeout``, ``no_options``)."""
    return Outcome(status)
