"""One eligibility rule for every letter-answer audit: reason codes, the gold index, options as written."""
from __future__ import annotations

import pytest

from audit.mcqa.items import REASONS, McqaItem, format_problem, from_row, mcqa_items, standardise_csqa


def _row(**kw):
    row = {"id": "q1", "benchmark": "mmlu", "question": "Which planet is red?", "passage": None, "instructions": None,
           "options": ["Mars", "Venus", "Earth", "Jupiter"], "gold": ["Mars"]}
    row.update(kw)
    return row


def test_good_rows_become_items_with_the_gold_index():
    items, rejected = mcqa_items([_row(), _row(id="q2", gold=["Earth"]), _row(id="q3", gold=[" Jupiter "])])
    assert rejected == []
    assert [(i.id, i.gold, i.gold_label, i.labels) for i in items] == [
        ("q1", 0, "A", ("A", "B", "C", "D")), ("q2", 2, "C", ("A", "B", "C", "D")), ("q3", 3, "D", ("A", "B", "C", "D"))]
    assert items[0].labels_phrase() == "A, B, C or D"


@pytest.mark.parametrize("changes, reason, detail", [
    ({"options": ["Mars"]}, "too_few_options", "1 option(s)"),
    ({"options": [f"o{i}" for i in range(27)], "gold": ["o1"]}, "too_many_options", "27 options"),
    ({"options": ["Mars", " ", "Earth", "Jupiter"]}, "empty_option", "option B is ' '"),
    ({"options": ["Mars", "Venus", "Mars ", "Jupiter"]}, "duplicate_options", "options A and C both read 'Mars'"),
    ({"gold_index": 4}, "gold_index_out_of_range", "answer index 4 outside the 4 options"),
    ({"gold_index": True}, "gold_index_invalid", "answer index True"),
    ({"gold": []}, "no_gold", ""),
    ({"gold": ["Mars", "Earth"]}, "multiple_gold", "2 gold answers"),
    ({"gold": ["Pluto"]}, "gold_not_in_options", "gold answer 'Pluto'"),
    ({"question": "  "}, "empty_question", ""),
])
def test_bad_items_are_rejected_with_a_reason_code_never_raised(changes, reason, detail):
    items, rejected = mcqa_items([_row(**changes), _row(id="ok")])
    assert [i.id for i in items] == ["ok"]
    assert [(r.id, r.reason, r.detail) for r in rejected] == [("q1", reason, detail)]
    assert reason in REASONS


def test_options_that_differ_in_case_are_two_options():
    """A real ARC-Challenge item offers both "rr" and "Rr" (genotypes): they are different answers."""
    item = from_row(_row(options=["RR", "Rr", "rr", "rR"], gold=["rr"]))
    assert isinstance(item, McqaItem) and item.gold == 2


def test_csqa_drops_e_or_moves_a_correct_e_into_d():
    item = McqaItem("c1", "csqa", "Where?", ("a", "b", "c", "d", "e"), gold=1)
    assert standardise_csqa(item).options == ("a", "b", "c", "d") and standardise_csqa(item).gold == 1
    correct_e = McqaItem("c2", "csqa", "Where?", ("a", "b", "c", "d", "e"), gold=4)
    out = standardise_csqa(correct_e)
    assert out.options == ("a", "b", "c", "e") and out.gold == 3 and out.gold_label == "D"
    four = McqaItem("c3", "csqa", "Where?", ("a", "b", "c", "d"), gold=0)
    assert standardise_csqa(four) is four


def test_the_problem_text_the_routers_read():
    item = from_row(_row(passage="Context.", instructions=None))
    assert format_problem(item) == ("Passage: Context.\n\nQuestion: Which planet is red?\n\n"
                                    "Options:\nA. Mars\nB. Venus\nC. Earth\nD. Jupiter")
