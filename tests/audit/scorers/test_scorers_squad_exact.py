"""SQuAD EM/F1 and plain normalised exact match, hand-computed."""

import pytest

from audit.scorers.exact import ExactMatchConfig, exact_match, normalize_exact
from audit.scorers.squad import SquadScore, normalize_squad, score_squad, squad_f1


def test_squad_normalization_and_scores():
    assert normalize_squad("The  Eiffel-Tower!") == "eiffeltower"  # no hyphen split, unlike DROP
    assert score_squad("the Eiffel Tower", ["Eiffel Tower", "Paris"]) == SquadScore(1.0, 1.0)
    # "78.0" vs "78": punctuation removal gives "780" -- SQuAD has no number canonicalisation
    assert score_squad("78.0", ["78"]) == SquadScore(0.0, 0.0)
    # overlap counts multiplicity: "red red blue" vs "red blue green" share one "red" and "blue"
    assert squad_f1("red red blue", "red blue green") == pytest.approx(2 / 3)
    assert squad_f1("red red", "red red blue") == pytest.approx(0.8)  # P 2/2, R 2/3
    assert squad_f1("favourite colour red", "favorite color red") == pytest.approx(1 / 3)
    assert squad_f1("", "") == 1.0 and squad_f1("", "x") == 0.0


def test_squad_takes_max_over_golds_and_needs_one():
    score = score_squad("grey wolf", ["gray wolf", "grey wolf pack"])
    assert score.em == 0.0 and score.f1 == pytest.approx(0.8)  # P 1, R 2/3
    with pytest.raises(ValueError):
        score_squad("x", [])


def test_exact_match_forgives_case_space_outer_punctuation_only():
    assert exact_match("  Paris. ", ["paris"]) == 1.0
    assert exact_match("PARIS", ["Paris"]) == 1.0
    assert exact_match("7:30", ["7.30"]) == 0.0
    assert exact_match("colour", ["color"]) == 0.0
    assert exact_match("Ｐａｒｉｓ", ["Paris"]) == 1.0  # NFKC folds full-width letters
    strict = ExactMatchConfig(casefold=False, strip_outer_punctuation=False)
    assert exact_match("Paris.", ["Paris"], strict) == 0.0
    assert normalize_exact("The  cat", strict) == "The cat"
