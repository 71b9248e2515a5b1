"""The structural classifier's prompt and answer rule, the seeded item sample, and the shared flag validation."""
from __future__ import annotations

import pandas as pd
import pytest

from audit.landscape.flags import wrong_counts
from audit.landscape.structure import StructurePrompt, load_structure_prompt, parse_structure_label
from audit.landscape.validate import match_reference, validate_wrong_answers, validation_by_threshold
from audit.mcqa.items import McqaItem


@pytest.mark.parametrize(("text", "expected"), [
    ("ok", ("ok", "clear")), (" OK.", ("ok", "clear")), ("bad_question_clarity", ("bad_question_clarity", "clear")),
    ("Bad question clarity\n", ("bad_question_clarity", "clear")), ("bad-options-clarity", ("bad_options_clarity", "clear")),
    ("ok, or maybe bad_options_clarity", ("ok", "contradictory")),
    ("bad_question_clarity and bad_options_clarity", ("ok", "contradictory")),
    ("okay", ("ok", "unparsed")), ("book", ("ok", "unparsed")), ("", ("ok", "unparsed")), (None, ("ok", "unparsed")),
])
def test_one_named_label_is_the_verdict_and_anything_else_is_ok(text, expected):
    assert parse_structure_label(text) == expected


def test_shipped_prompt_names_every_label_and_renders_the_item():
    prompt = load_structure_prompt()
    item = McqaItem("q1", "b", "Which is red?", ("fire", "water", "ice"), 0, passage="Colours.")
    built = prompt.build(item)
    for label in ("ok", "bad_question_clarity", "bad_options_clarity"):
        assert label in prompt.system
    assert built.user.startswith("Colours.\n\nQuestion: Which is red?\nA. fire\nB. water\nC. ice") and built.answer_prefix == "Label:"
    with pytest.raises(ValueError, match=r"x\.json: structure prompt fields missing \['max_new_tokens'\]"):
        StructurePrompt.from_json('{"name": "s", "version": 1, "system": "", "user": "{question}{options}", "passage": "", '
                                  '"option": "", "option_separator": "", "answer_prefix": ""}', source="x.json")


def test_validate_wrong_answers_is_counts_match_and_threshold_table_in_one():
    correct = pd.DataFrame({"source_id": ["a", "a", "b", "b", "c", "c"], "model": ["m1", "m2"] * 3,
                            "correct": [0.0, 0.0, 1.0, 0.0, 1.0, 1.0]})
    items = pd.DataFrame({"source_id": ["a", "b", "c"], "question": ["Qa", "Qb", "Qc"], "options": [["x", "y"]] * 3})
    reference = pd.DataFrame({"question": ["qa", "QB ", "Qc"], "options": [["x", "y"]] * 3, "expert_bad": [True, False, False]})
    found = validate_wrong_answers(correct, items, reference)
    expected = validation_by_threshold(wrong_counts(correct), match_reference(items, reference), [1, 2])
    pd.testing.assert_frame_equal(found.table, expected)
    assert found.table["n_flagged"].tolist() == [2, 1] and found.table["precision"].tolist() == [0.5, 1.0]
