"""Prompt files: parsing, hashes, overrides, rendering, and the text routers and workers receive."""
from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from audit.contamination.prompts import SLOTS, PromptError, PromptSet, aggregate_reports, parse_prompt, shipped_prompt
from audit.mcqa.items import format_problem, from_row
from connectors.contamination.prompts import read_prompt_set

ITEM = from_row({
    "id": "q1", "benchmark": "toy", "question": "Which {value} is largest?", "passage": "Numbers: 3, 9, 4.",
    "instructions": None, "options": ["3", "9", "4"], "gold": ["9"],
})

ROUTER = """name: my_router
version: 2
role: router
---
Relay this: {problem}
"""


def test_shipped_prompts_parse_with_versions_and_file_hashes():
    prompts = PromptSet.shipped()
    manifest = prompts.manifest()
    assert list(manifest) == list(SLOTS)
    for slot in SLOTS:
        text = resources.files("audit.contamination.data").joinpath(f"{slot}.txt").read_text("utf-8")
        assert manifest[slot]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
        assert manifest[slot]["name"] == slot and manifest[slot]["version"] == "1"
    assert len({m["sha256"] for m in manifest.values()}) == 4
    assert "Do not answer" in prompts.forward_full.template and "Do not answer" in prompts.noisy_rewrite.template
    assert "irrelevant" in prompts.noisy_rewrite.template and "Delete part" in prompts.noisy_rewrite.template


def test_router_prompt_holds_the_full_problem_once_and_leaves_item_braces_alone():
    prompt = PromptSet.shipped().forward_full.render(problem=format_problem(ITEM))
    problem = "Passage: Numbers: 3, 9, 4.\n\nQuestion: Which {value} is largest?\n\nOptions:\nA. 3\nB. 9\nC. 4"
    assert format_problem(ITEM) == problem
    assert prompt.count(problem) == 1
    assert "{value}" in prompt  # not read as a placeholder


def test_aggregation_numbers_reports_and_worker_prompt_names_the_letters():
    prompts = PromptSet.shipped()
    joined = aggregate_reports(prompts.aggregate, ["first text\n", "  second text"])
    assert "--- Report 1 of 2 ---\nfirst text\n\n--- Report 2 of 2 ---\nsecond text" in joined
    assert joined.startswith("The same multiple-choice problem was described by 2 independent relay(s).")
    worker = prompts.worker.render(input=joined, letters=ITEM.labels_phrase())
    assert worker.startswith(joined) and "exactly one letter (A, B or C)" in worker
    with pytest.raises(PromptError, match="nothing to aggregate"):
        aggregate_reports(prompts.aggregate, [])


def test_override_replaces_one_slot_and_changes_its_hash(tmp_path):
    path = tmp_path / "router.txt"
    path.write_text(ROUTER, encoding="utf-8")
    prompts = read_prompt_set({"noisy_rewrite": str(path)})
    assert prompts.noisy_rewrite.name == "my_router" and prompts.noisy_rewrite.version == "2"
    assert prompts.noisy_rewrite.sha256 == hashlib.sha256(ROUTER.encode()).hexdigest()
    assert prompts.noisy_rewrite.source == str(path)
    assert prompts.forward_full == shipped_prompt("forward_full")
    assert prompts.noisy_rewrite.render(problem="P") == "Relay this: P"
    with pytest.raises(PromptError, match="cannot fill slot 'worker'"):
        read_prompt_set({"worker": str(path)})
    with pytest.raises(PromptError, match="cannot read prompt file"):
        read_prompt_set({"worker": str(tmp_path / "absent.txt")})
    with pytest.raises(PromptError, match="unknown prompt slot"):
        PromptSet.shipped().override(judge=prompts.noisy_rewrite)


@pytest.mark.parametrize("text,message", [
    ("name: x\nversion: 1\nrole: router\nRelay {problem}\n", "no '---' line"),
    ("name: x\nrole: router\n---\nRelay {problem}\n", "lacks 'version'"),
    ("name: x\nversion: 1\nrole: judge\n---\nRelay {problem}\n", "role 'judge'"),
    ("name: x\nversion: 1\nrole: router\n---\nRelay {problme}\n", r"unknown placeholder\(s\) \['problme'\]"),
    ("name: x\nversion: 1\nrole: worker\n---\nAnswer with {letters}\n", r"lacks required placeholder\(s\) \['input'\]"),
    ("name: x\nversion: 1\nrole: aggregate\n---\n{reports}\n", "needs a 'report' header"),
    ("name: x\nversion: 1\nrole: aggregate\nreport: Report\n---\n{reports}\n",
     r"header 'report' lacks required placeholder\(s\) \['index'\]"),
    ("name: x\nversion: 1\nrole: router\nthis line\n---\n{problem}\n", "header line 4"),
    ("name: x\nversion: 1\nrole: router\n---\n\n", "empty template"),
])
def test_bad_prompt_files_name_the_file_and_the_problem(text, message):
    with pytest.raises(PromptError, match=message) as info:
        parse_prompt(text, "prompts/bad.txt")
    assert str(info.value).startswith("prompts/bad.txt: ")


def test_render_requires_every_placeholder():
    with pytest.raises(PromptError, match=r"no value for placeholder \{letters\}"):
        PromptSet.shipped().worker.render(input="x")
