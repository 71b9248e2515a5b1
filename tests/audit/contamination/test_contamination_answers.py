"""The worker-answer parse rule and the outcome categories."""
from __future__ import annotations

import pytest

from audit.contamination.answers import Outcome, parse_answer, score_answer

ABCD = ("A", "B", "C", "D")


@pytest.mark.parametrize("reply,letter", [
    ("B", "B"), ("  C\n", "C"), ("(D)", "D"), ("[A]", "A"), ("B.", "B"), ("B)", "B"), ("B: Paris", "B"),
    ("B. Paris is the capital", "B"), ("(C) 42", "C"), ("B - Paris", "B"), ("**B**", "B"), ("`C`", "C"), ('"A"', "A"),
    ("Answer: C", "C"), ("answer: c", "C"), ("The answer is (B).", "B"), ("Final answer - D", "D"), ("Option A", "A"),
    ("The correct answer is B", "B"), ("b", "B"), ("(b)", "B"),
    ("C\nBecause the passage says so.", "C"), ("\n\nA\n", "A"),
])
def test_parsable_replies(reply, letter):
    assert parse_answer(reply, ABCD) == letter


@pytest.mark.parametrize("reply", [
    None, "", "   ", "E", "(E)", "I think B", "B or C", "A good question; the answer is B", "BC", "Answer", "answer:",
    "b.", "none of the above", "Explanation: the passage says 9.\nAnswer: B", "1", "Bb",
])
def test_unparsable_replies(reply):
    assert parse_answer(reply, ABCD) is None


def test_valid_letters_follow_the_item():
    assert parse_answer("E", ("A", "B", "C", "D", "E")) == "E"
    assert parse_answer("C", ("A", "B")) is None


def test_scoring_counts_unparsable_as_wrong():
    assert score_answer("C", ABCD, "C") == Outcome("answered", 1, "C")
    assert score_answer("B.", ABCD, "C") == Outcome("answered", 0, "B")
    assert score_answer("maybe C?", ABCD, "C") == Outcome("unparsable", 0, None)


def test_outcome_invariants():
    with pytest.raises(ValueError, match="unknown outcome status"):
        Outcome("skipped")
    with pytest.raises(ValueError, match="needs a correct value"):
        Outcome("answered")
    with pytest.raises(ValueError, match="cannot have a correct value"):
        Outcome("timeout", correct=0)
