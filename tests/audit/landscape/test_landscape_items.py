"""Template-built prompts (the items themselves: tests/audit/mcqa)."""
from __future__ import annotations

import json

import pytest

from audit.landscape.prompts import McqaTemplate, load_template, prompt_rows
from audit.mcqa.items import McqaItem


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
