"""Item checks, CommonsenseQA standardisation and template-built prompts."""
from __future__ import annotations

import json

import pytest

from audit.landscape.items import McqaItem, mcqa_items, standardise_csqa
from audit.landscape.prompts import McqaTemplate, load_template, prompt_rows


def _row(**kw):
    row = {"id": "q1", "benchmark": "mmlu", "question": "Which planet is red?", "passage": None, "instructions": None,
           "options": ["Mars", "Venus", "Earth", "Jupiter"], "gold": ["Mars"]}
    row.update(kw)
    return row


def test_good_rows_become_items_with_the_gold_index():
    items, rejected = mcqa_items([_row(), _row(id="q2", gold=["Earth"])])
    assert rejected == []
    assert [(i.id, i.gold, i.gold_label, i.labels) for i in items] == [
        ("q1", 0, "A", ("A", "B", "C", "D")), ("q2", 2, "C", ("A", "B", "C", "D"))]


@pytest.mark.parametrize("changes, reason", [
    ({"gold_index": 4}, "answer index 4 outside the 4 options"),
    ({"gold": ["Pluto"]}, "gold answer 'Pluto' is not one of the options"),
    ({"gold": []}, "no gold answer"),
    ({"gold": ["Mars", "Earth"]}, "2 gold answers; MCQA needs exactly one"),
    ({"options": ["Mars", "Venus", "mars ", "Jupiter"]}, "duplicate options A and C ('mars')"),
    ({"options": ["Mars", " ", "Earth", "Jupiter"]}, "option B is empty"),
    ({"options": ["Mars"]}, "fewer than two options (1)"),
    ({"question": "  "}, "empty question"),
])
def test_bad_items_are_rejected_with_their_reason_never_raised(changes, reason):
    items, rejected = mcqa_items([_row(**changes), _row(id="ok")])
    assert [i.id for i in items] == ["ok"]
    assert [(r.id, r.reason) for r in rejected] == [("q1", reason)]


def test_csqa_drops_e_or_moves_a_correct_e_into_d():
    item = McqaItem("c1", "csqa", "Where?", ("a", "b", "c", "d", "e"), gold=1)
    assert standardise_csqa(item).options == ("a", "b", "c", "d") and standardise_csqa(item).gold == 1
    correct_e = McqaItem("c2", "csqa", "Where?", ("a", "b", "c", "d", "e"), gold=4)
    out = standardise_csqa(correct_e)
    assert out.options == ("a", "b", "c", "e") and out.gold == 3 and out.gold_label == "D"
    four = McqaItem("c3", "csqa", "Where?", ("a", "b", "c", "d"), gold=0)
    assert standardise_csqa(four) is four


def test_shipped_template_asks_for_the_letter_only_and_labels_any_option_count():
    template = load_template()
    item = McqaItem("q", "b", "Pick one.", tuple(f"opt{i}" for i in range(6)), gold=5, passage="Some context.")
    prompt = template.build(item)
    assert "letter" in prompt.system and "only" in prompt.system
    assert prompt.user.startswith("Some context.\n\nQuestion: Pick one.\nA. opt0\nB. opt1")
    assert "F. opt5" in prompt.user and "(A, B, C, D, E or F)" in prompt.user
    assert prompt.answer_prefix == "Answer:"
    row = prompt_rows([item], template)[0]
    assert row["labels"] == ["A", "B", "C", "D", "E", "F"] and row["gold"] == 5 and row["k"] == 6


def test_template_override_is_validated_and_its_hash_changes_with_its_text():
    shipped = load_template()
    data = json.loads(json.dumps(shipped.__dict__))
    data["answer_prefix"] = "The answer is"
    other = McqaTemplate.from_json(json.dumps(data), source="mine.json")
    assert other.sha256 != shipped.sha256 and len(shipped.sha256) == 64
    assert McqaTemplate.from_json(json.dumps(shipped.__dict__)).sha256 == shipped.sha256
    del data["option"]
    with pytest.raises(ValueError, match=r"mine.json: template fields missing \['option'\]"):
        McqaTemplate.from_json(json.dumps(data), source="mine.json")
    with pytest.raises(ValueError, match="unknown prompt template 'nope'"):
        load_template("nope")
