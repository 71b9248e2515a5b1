"""The call plan: exact call counts per design, keys, nesting, and the worker step from router results."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from audit.contamination.answers import Outcome
from audit.contamination.outcomes import check_outcomes, outcome_record
from audit.contamination.plan import (
    Call,
    CallResult,
    ModelRoles,
    PlanConfig,
    blocked,
    call_key,
    call_result,
    plan_calls,
    router_prompt,
    worker_call,
    worker_outcome,
)
from audit.contamination.prompts import PromptSet
from audit.mcqa.items import McqaItem, format_problem
from audit.mcqa.prompt import Decoding, Prompt

PROMPTS = PromptSet.shipped()


def items(n: int) -> list[McqaItem]:
    return [McqaItem(f"q{i}", "toy", f"What is {i} + 1?", (str(i), str(i + 1), str(i + 2)), gold=1) for i in range(n)]


@pytest.mark.parametrize("m", [1, 4, 9])
def test_nested_design_makes_m_noisy_router_calls_per_question_and_model(m):
    n, models = 6, [ModelRoles("w1"), ModelRoles("w2")]
    plan = plan_calls(items(n), models, PROMPTS, PlanConfig(m=m))
    assert plan.counts() == {"router_calls": 2 * n * (1 + m), "clean_router_calls": 2 * n, "noisy_router_calls": 2 * n * m,
                             "worker_calls": 2 * n * (1 + m)}
    per_cell = {(c.model, c.question_id) for c in plan.router_calls if c.condition == "noisy_rewrite"}
    assert len(per_cell) == 2 * n
    for model, qid in per_cell:
        assert sum(c.model == model and c.question_id == qid and c.condition == "noisy_rewrite" for c in plan.router_calls) == m


@pytest.mark.parametrize("m", [1, 4, 9])
def test_independent_design_makes_m_m_plus_1_over_2(m):
    n = 5
    plan = plan_calls(items(n), [ModelRoles("w1")], PROMPTS, PlanConfig(m=m, design="independent"))
    assert plan.counts()["noisy_router_calls"] == n * m * (m + 1) // 2
    assert plan.counts()["worker_calls"] == n * (1 + m)
    keys = [k for t in plan.worker_tasks for k in t.router_keys if t.condition == "noisy_rewrite"]
    assert len(keys) == len(set(keys))  # no router output is shared between settings


def test_nested_settings_use_the_first_r_slots_and_a_larger_m_reuses_them():
    small = plan_calls(items(3), [ModelRoles("w")], PROMPTS, PlanConfig(m=4))
    large = plan_calls(items(3), [ModelRoles("w")], PROMPTS, PlanConfig(m=9))
    for qid in ("q0", "q1", "q2"):
        tasks = {t.r: t.router_keys for t in large.worker_tasks if t.question_id == qid and t.condition == "noisy_rewrite"}
        assert [len(tasks[r]) for r in range(1, 10)] == list(range(1, 10))
        for r in range(1, 9):
            assert tasks[r + 1][:r] == tasks[r]
    assert {c.key for c in small.router_calls} <= {c.key for c in large.router_calls}
    seeds = [c.decoding.seed for c in large.router_calls if c.condition == "noisy_rewrite"]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2**31 for s in seeds)
    clean = [c for c in large.router_calls if c.condition == "forward_full"]
    assert all(c.decoding == PlanConfig().clean_router and c.slot == () for c in clean)


def test_a_shared_router_model_is_called_once_for_all_workers():
    models = [ModelRoles("w1", router="r"), ModelRoles("w2", router="r"), ModelRoles("w3")]
    plan = plan_calls(items(4), models, PROMPTS, PlanConfig(m=3))
    by_router = {m: sum(c.model == m for c in plan.router_calls) for m in ("r", "w3")}
    assert by_router == {"r": 4 * (1 + 3), "w3": 4 * (1 + 3)}
    assert plan.counts()["worker_calls"] == 3 * 4 * (1 + 3)
    with pytest.raises(ValueError, match="listed once"):
        plan_calls(items(1), [ModelRoles("w"), ModelRoles("w")], PROMPTS)


def test_keys_are_a_function_of_model_prompt_and_decoding():
    plan = plan_calls(items(2), [ModelRoles("w")], PROMPTS, PlanConfig(m=2))
    again = plan_calls(items(2), [ModelRoles("w")], PROMPTS, PlanConfig(m=2))
    assert plan == again
    for call in plan.router_calls:
        assert call.key == call_key(call.model, call.prompt, call.decoding)
        assert "What is" in call.prompt.user
    p = Prompt(user="p")
    assert call_key("w", p, Decoding()) != call_key("w", p, Decoding(seed=1))
    assert call_key("w", p, Decoding()) != call_key("v", p, Decoding())
    assert call_key("w", p, Decoding()) != call_key("w", Prompt(user="p", system="s"), Decoding())
    other_prompts = PROMPTS.override(noisy_rewrite=replace(PROMPTS.noisy_rewrite, template="Rewrite: {problem}"))
    changed = plan_calls(items(2), [ModelRoles("w")], other_prompts, PlanConfig(m=2))
    assert {c.key for c in changed.router_calls if c.condition == "noisy_rewrite"}.isdisjoint(
        {c.key for c in plan.router_calls if c.condition == "noisy_rewrite"})


def test_worker_call_aggregates_router_outputs_in_slot_order():
    plan = plan_calls(items(1), [ModelRoles("w")], PROMPTS, PlanConfig(m=3))
    task = next(t for t in plan.worker_tasks if t.r == 3 and t.condition == "noisy_rewrite")
    results = {key: CallResult(text=f"output of slot {j}") for j, key in enumerate(task.router_keys)}
    call = worker_call(task, items(1)[0], results, PROMPTS)
    assert isinstance(call, Call) and call.role == "worker" and call.model == "w" and call.decoding == PlanConfig().worker
    positions = [call.prompt.user.index(f"--- Report {j + 1} of 3 ---\noutput of slot {j}") for j in range(3)]
    assert positions == sorted(positions)
    assert "What is 0 + 1?" not in call.prompt.user  # the worker never sees the original
    assert "(A, B or C)" in call.prompt.user
    assert call.key == call_key("w", call.prompt, PlanConfig().worker)


@pytest.mark.parametrize("results,status", [
    ([CallResult("a"), CallResult("  \n"), CallResult("c")], "empty_router"),
    ([CallResult("a"), CallResult(None)], "empty_router"),
    ([CallResult("a"), CallResult(error="timeout"), CallResult("")], "timeout"),
    ([CallResult(error="failed")], "failed"),
    ([CallResult("a"), CallResult("b")], None),
])
def test_blocked_cells(results, status):
    assert blocked(results) == status


def test_a_blocked_cell_makes_no_worker_call_and_records_its_category():
    plan = plan_calls(items(1), [ModelRoles("w")], PROMPTS, PlanConfig(m=2))
    task = next(t for t in plan.worker_tasks if t.r == 2)
    outcome = worker_call(task, items(1)[0], {task.router_keys[0]: CallResult("x"), task.router_keys[1]: CallResult("")}, PROMPTS)
    assert outcome == Outcome("empty_router")
    row = outcome_record(task, outcome)
    assert row == {"question_id": "q0", "model": "w", "condition": "noisy_rewrite", "r": 2, "correct": None,
                   "status": "empty_router", "answer": None}
    with pytest.raises(ValueError, match="'failed' or 'timeout'"):
        CallResult(error="crashed")


def test_worker_outcomes_by_category():
    item = items(1)[0]  # gold "1" is option B
    assert worker_outcome(item, CallResult("B")) == Outcome("answered", 1, "B")
    assert worker_outcome(item, CallResult("A")) == Outcome("answered", 0, "A")
    assert worker_outcome(item, CallResult("probably B")) == Outcome("unparsable", 0)
    assert worker_outcome(item, CallResult(error="timeout")) == Outcome("timeout")
    plan = plan_calls([item], [ModelRoles("w")], PROMPTS, PlanConfig(m=1))
    rows = [outcome_record(t, worker_outcome(item, CallResult("B")), "B") for t in plan.worker_tasks]
    table = check_outcomes(pd.DataFrame(rows))
    assert table[["condition", "r", "correct", "status"]].values.tolist() == [["forward_full", 1, 1, "answered"],
                                                                             ["noisy_rewrite", 1, 1, "answered"]]


def test_backend_errors_become_categories():
    assert call_result("B") == CallResult(text="B")
    assert call_result(None, "openai:http://x#m: request timed out after 60 s", "timeout") == CallResult(error="timeout")
    assert call_result(None, "openai:http://x#m: HTTP 500 after 3 retries", "http_500") == CallResult(error="failed")
    # the category is the backend's reason code, never the message's wording
    assert call_result(None, "the model timed out its own patience", "nan_logprobs") == CallResult(error="failed")


def test_router_prompts_differ_only_in_the_instruction():
    item = items(1)[0]
    clean, noisy = router_prompt(item, "forward_full", PROMPTS), router_prompt(item, "noisy_rewrite", PROMPTS)
    assert format_problem(item) in clean.user and format_problem(item) in noisy.user and clean != noisy
    with pytest.raises(ValueError, match="no router prompt for condition 'worker'"):
        router_prompt(item, "worker", PROMPTS)
