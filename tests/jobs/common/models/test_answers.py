"""The model jobs' shared accounting of unusable answers: reasons counted without their particulars (digits
inside words kept), transient against permanent, the budget that stops a stage, and its error text."""
from __future__ import annotations

import io

import pandas as pd
import pytest

from jobs.common.models.answers import SkipBudget, Skips, Unusable, reason_code
from jobs.common.runtime.progress import AnswerProgress
from jobs.landscape.summary import LOW_LABEL_MASS, label_mass_warnings


@pytest.mark.parametrize(("reason", "code"), [
    ("bench.csv: row 5, field 'answer': answer index 7 outside the 4 options", "answer index N outside the N options"),
    ("data.jsonl: not utf-8; pass encoding=", "not utf-8; pass encoding="),  # a digit inside a word stays
    ("prompt is 812 tokens; hf:/m/Qwen2.5-7B takes at most 512", "prompt is N tokens; hf:/m/Qwen2.5-7B takes at most N"),
    ("label(s) [' A', ' C'] not among the top-20 log-probs the endpoint returned; use label_method='echo' for exact values",
     "label(s) […] not among the top-20 log-probs the endpoint returned; use label_method='…' for exact values"),
    ("duplicate_options: options A and B both read 'x'", "options X and X both read '…'"),
    ("too_few_options: 1 option(s)", "N option"),  # a trailing parenthesis is a particular too
    ("openai:http://127.0.0.1:8000/v1#m: POST http://127.0.0.1:8000/v1/completions failed after 0 retries: timed out after 3.5 s",
     "timed out after N s"),
    ("gpt-4o said 10/10 at 3.", "gpt-4o said N/N at N."),
    ("openai:http://h:8000/v1#m: POST http://h:8000/v1/completions failed after 1 retries: HTTP 500: proxy refused: "
     "Request headers: Authorization: Bearer [redacted]", "HTTP 500"),  # an endpoint's body is particulars
])
def test_a_reason_code_drops_particulars_and_keeps_digits_inside_words(reason, code):
    assert reason_code(reason) == code


def one(message: str, code: str = "error", transient: bool = False) -> Unusable:
    return Unusable(message, code, transient)


def test_transience_is_the_flag_set_where_the_answer_failed_never_its_wording():
    skips = Skips.of([one("POST u failed after 4 retries: HTTP 503: busy", "http_503", True),
                      one("the model timed out in its own words", "unparsable", False), None])
    assert skips.transient == 1 and skips.codes == {"http_503": 1, "unparsable": 1}
    assert skips.to_json()["by_code"] == {"http_503": 1, "unparsable": 1}


def test_skips_name_the_top_reasons_the_first_in_full_and_the_fix():
    skips = Skips.of([one(f"prompt is {n} tokens; hf:/m takes at most 8", "prompt_too_long") for n in (40, 41, 42)]
                     + [one("NaN log-probs", "nan_logprobs"), None])
    assert skips.total == 4 and skips.by_reason == {"prompt is N tokens; hf:/m takes at most N": 3, "NaN log-probs": 1}
    text = skips.top()
    assert text.startswith("3 × prompt is N tokens; hf:/m takes at most N (first: prompt is 40 tokens; hf:/m takes at most 8)"
                           " · 1 × NaN log-probs; fix: prompts (with the tokens to generate) longer than the model's context")
    assert """--model-settings '{"max_length": N}'""" in text and "resuming cannot help" in text
    label = Skips.of([one("label(s) [' A'] not among the top-5 log-probs the endpoint returned; use label_method='echo' for "
                          "exact values", "label_not_in_top_logprobs")])
    assert """fix: the endpoint's top log-probs do not hold every option label: score each label itself with \
--model-settings '{"label_method": "echo"}'""" in label.top()
    many = Skips.of([one(f"reason{c}") for c in "abcde"])
    assert many.top().endswith("· 2 more reason(s) in manifest.json")


def test_resume_helps_only_when_the_permanent_failures_alone_fit_the_limit():
    timeouts = [one("POST u failed after 1 retries: timed out after 2 s", "timeout", True)] * 5
    nan = one("NaN log-probs", "nan_logprobs")
    assert Skips.of(timeouts).resumable(allowed=0)
    assert Skips.of(timeouts + [nan]).resumable(allowed=1)
    assert not Skips.of(timeouts + [nan] * 2).resumable(allowed=1)
    assert not Skips.of([nan] * 3).resumable(allowed=10)  # nothing a rerun would change


def test_the_budget_is_floor_of_the_share_of_planned_answers_and_a_model_left_out_is_taken_back():
    budget = SkipBudget(0.01, 601)
    assert budget.allowed == 6
    budget.skips.merge(Skips.of([one("NaN")] * 6))
    assert not budget.exceeded()
    left_out = Skips.of([one("NaN")])
    budget.skips.merge(left_out)
    assert budget.exceeded()
    budget.skips.merge(left_out, -1)
    assert not budget.exceeded() and budget.skips.by_reason == {"NaN": 6}
    assert SkipBudget(0.0, 10).allowed == 0 and SkipBudget(1.0, 10).allowed == 10 and SkipBudget(0.07, 100).allowed == 7


def test_answer_progress_lines_say_cache_hits_against_calls_and_end_done():
    stream = io.StringIO()
    progress = AnswerProgress("landscape", "model m", 10, stream=stream, interval_s=0.0, tty=False)
    progress.update(4, cache_hits=4, unusable=0)
    progress.update(6, cache_hits=1, unusable=2)
    progress.emit()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[landscape] model m: 4/10 answers (40.0%) · cache hits 4 · calls 0 · unusable 0 · ")
    assert lines[1].startswith("[landscape] model m: 10/10 answers (100.0%) · cache hits 5 · calls 5 · unusable 2 · ")
    assert lines[1].endswith("ETA done") and len(lines) == 2  # the closing emit adds nothing new
    assert [s["answers"] for s in progress.samples] == [4, 10] and progress.samples[-1]["calls"] == 5
    tty = io.StringIO()
    bar = AnswerProgress("contamination", "router calls of m", 2, stream=tty, interval_s=0.0, tty=True)
    bar.update(1, 0, 0)
    bar.emit()
    assert tty.getvalue().startswith("\r[contamination] router calls of m: |") and tty.getvalue().endswith("\n")


def test_low_label_mass_is_warned_per_benchmark_and_model_on_the_unperturbed_prompts():
    table = pd.DataFrame([
        {"benchmark": "arc", "perturbation": "none", "model": "base", "mean_label_mass": 0.21},
        {"benchmark": "arc", "perturbation": "none", "model": "chat", "mean_label_mass": 0.93},
        {"benchmark": "arc", "perturbation": "noise", "model": "chat", "mean_label_mass": 0.31},  # a perturbation may lower it
        {"benchmark": "arc", "perturbation": "none", "model": "lm-eval", "mean_label_mass": float("nan")},  # no label mass
    ])
    (warning,) = label_mass_warnings(table)
    assert warning["model"] == "base" and warning["mean_label_mass"] == 0.21 and warning["threshold"] == LOW_LABEL_MASS == 0.5
    assert warning["message"].startswith("base on arc: mean label mass 0.210 < 0.5: most of its next-token probability is "
                                         "not on the option letters")
    assert label_mass_warnings(table.drop(columns="mean_label_mass")) == []
