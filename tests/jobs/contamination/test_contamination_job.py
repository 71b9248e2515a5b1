"""The contamination job end to end on the session's local Ray: the tiny transformers model (hf) and the
openai backend against the loopback server; call counts per design, zero-call reruns, bad input by category."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from jobs.common.cli.config import RunOptions
from jobs.contamination.config import ContaminationConfig
from jobs.contamination.run import run
from tests.builders import cell_text
from tests.servers.completions_server import CompletionsServer
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.ray
WORDS = ("red", "blue", "green", "water", "fire", "earth", "king", "queen")
REPLICATES = 500
FAST = {"backoff_s": 0.0, "max_backoff_s": 0.0}
# The tiny model has random weights: its worker answers are mostly unparsable, which fails a run under the
# default --max-skipped (tests/jobs/contamination/test_contamination_failures.py); these tests check calls
# and the cache, so they accept every unusable answer.
ACCEPT_ALL = 1.0


def write_benchmark(path: Path, questions: list[str], extra: list[dict] = ()) -> str:
    """A JSONL benchmark mapped by hand: id, question, options (a list), gold (text)."""
    rows = [{"id": f"q{i}", "question": q, "options": [WORDS[(i + j) % 8] for j in range(4)], "gold": WORDS[(i + 1) % 8]}
            for i, q in enumerate(questions)]
    path.write_text("\n".join(json.dumps(r) for r in [*rows, *extra]) + "\n")
    return str(path)


def config(bench: str, models: list[str], **kw) -> ContaminationConfig:
    return ContaminationConfig(input=[bench], question_column="question", id_column="id", options_column=["options"],
                               gold_column=["gold"], worker_model=models, router_max_tokens=6, worker_max_tokens=3,
                               bootstrap=REPLICATES, **kw)


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


def statistics(summary: dict) -> dict:
    """Everything computed from the outcomes (not the run id or call accounting)."""
    return {k: summary[k] for k in ("overview", "headline", "table", "per_r", "per_model", "cells", "trend", "categories", "missing",
                                    "status_totals")}


def noisy_calls_per_question(run_dir: str) -> dict[tuple[str, str], int]:
    calls = pq.read_table(Path(run_dir) / "data" / "calls").to_pandas()
    noisy = calls[(calls.role == "router") & (calls.condition == "noisy_rewrite")]
    return noisy.groupby(["question_id", "model"]).size().to_dict()


def test_hf_tiny_model_end_to_end_and_a_rerun_served_by_the_cache(ray_local, tmp_path):
    bench = write_benchmark(tmp_path / "b.jsonl", [f"Which {w} is the first colour?" for w in WORDS[:4]])
    cfg = config(bench, [f"hf:{shared_tiny_lm()}"], sample=3, max_routers=2, actors=1, batch_size=4)
    opts = RunOptions(out=str(tmp_path / "runs"), max_skipped=ACCEPT_ALL)
    first = run(cfg, opts)
    summary, manifest = load(first)
    calls = manifest["calls"]
    assert calls["router"] | {"clean_calls": 3, "noisy_calls": 3 * 2} == calls["router"]
    assert calls["router"]["cache_hits"] == 0 and calls["total"]["completion_tokens"] > 0
    assert calls["worker"]["cells"] == 3 * (1 + 2) == summary["overview"]["models"] * 3 * 3
    assert set(noisy_calls_per_question(first).values()) == {2}
    assert sum(summary["status_totals"].values()) == 9 and summary["overview"]["n_questions"] == 3
    assert manifest["sample"]["n"] == 3 and len(manifest["sample"]["ids"]) == 3
    assert set(manifest["prompts"]) == {"forward_full", "noisy_rewrite", "aggregate", "worker"}
    outcomes = pq.read_table(Path(first) / "data" / "outcomes").to_pandas()
    assert len(outcomes) == 9 and set(outcomes.status) <= {"answered", "unparsable", "empty_router"}

    again = run(cfg, opts)
    summary2, manifest2 = load(again)
    assert manifest2["calls"]["total"]["computed"] == 0
    assert manifest2["calls"]["total"]["cache_hits"] == manifest2["calls"]["total"]["calls"] == calls["total"]["calls"]
    assert statistics(summary2) == statistics(summary)
    assert pq.read_table(Path(again) / "data" / "outcomes").equals(pq.read_table(Path(first) / "data" / "outcomes"))


class Faults:
    """Scripted faults on the real loopback server, chosen by markers in the prompt text: the router
    calls of SLOWQ answer after ``delay_s`` (the client times out), the noisy routers of EMPTYQ return
    nothing, the routers of NOLETTERQ echo the marker and the worker then replies without a letter."""

    def __init__(self, server: CompletionsServer, delay_s: float):
        self.real, self.delay_s = server.complete, delay_s
        server.complete = self
        server.httpd.handle_error = lambda request, address: None  # a timed-out client hung up: the broken pipe is expected

    def __call__(self, prompt: str, body: dict):
        router = "relay between a problem and a solver" in prompt
        if router and "SLOWQ" in prompt:
            time.sleep(self.delay_s)
        if router and "EMPTYQ" in prompt and "Rewrite the problem" in prompt:
            return {"text": "", "logprobs": None, "finish_reason": "stop"}, 10, 0
        if router and "NOLETTERQ" in prompt:
            return {"text": "A question about NOLETTERQ with options A to D.", "logprobs": None, "finish_reason": "stop"}, 10, 9
        if not router and "NOLETTERQ" in prompt:
            return {"text": "I cannot tell from this.", "logprobs": None, "finish_reason": "stop"}, 10, 5
        return self.real(prompt, body)


@pytest.fixture(scope="module")
def server():
    with CompletionsServer(str(shared_tiny_lm()), model_name="tiny") as srv:
        Faults(srv, delay_s=6.0)
        yield srv


def requests(server: CompletionsServer) -> int:
    return sum(server.requests.values())


def test_openai_call_counts_per_design_and_zero_call_reruns(ray_local, server, tmp_path):
    n, m = 2, 3
    bench = write_benchmark(tmp_path / "b.jsonl", ["Which city is the capital?", "What is the largest ocean?", "Which king?"])
    spec = f"openai:{server.base_url}#tiny"
    opts = RunOptions(out=str(tmp_path / "runs"), max_skipped=ACCEPT_ALL)
    settings = {"openai": FAST}

    before = requests(server)
    nested = run(config(bench, [spec], sample=n, max_routers=m, model_settings=settings), opts)
    summary, manifest = load(nested)
    calls = manifest["calls"]
    assert calls["router"]["noisy_calls"] == n * m and calls["router"]["clean_calls"] == n  # M per question, not M(M+1)/2
    assert set(noisy_calls_per_question(nested).values()) == {m} and len(noisy_calls_per_question(nested)) == n
    assert requests(server) - before == calls["total"]["computed"] == calls["router"]["calls"] + calls["worker"]["calls"]
    assert calls["worker"]["cells"] == n * (1 + m)
    assert calls["total"]["prompt_tokens"] > 0 and calls["total"]["completion_tokens"] > 0

    before = requests(server)
    rerun = run(config(bench, [spec], sample=n, max_routers=m, model_settings=settings), opts)
    summary2, manifest2 = load(rerun)
    assert requests(server) == before  # the loopback server saw no request
    assert manifest2["calls"]["total"]["computed"] == 0 and statistics(summary2) == statistics(summary)

    before = requests(server)
    independent = run(config(bench, [spec], sample=n, max_routers=m, independent=True, model_settings=settings), opts)
    calls = load(independent)[1]["calls"]
    assert calls["router"]["noisy_calls"] == n * m * (m + 1) // 2 and calls["router"]["clean_calls"] == n
    assert set(noisy_calls_per_question(independent).values()) == {m * (m + 1) // 2}
    # the clean relays come from the cache (same request as in the nested run); every independent slot is new
    assert calls["router"]["computed"] == n * m * (m + 1) // 2
    assert requests(server) - before == calls["total"]["computed"]

    before = requests(server)
    larger = run(config(bench, [spec], sample=n, max_routers=m + 1, model_settings=settings), opts)
    calls = load(larger)[1]["calls"]
    assert calls["router"]["computed"] == n  # one new nested slot per question; slots 0..M-1 reused
    assert calls["worker"]["computed"] <= n  # only the new r = M + 1 cells can ask the worker something new
    assert requests(server) - before == calls["total"]["computed"]


def test_an_added_model_repeats_no_call(ray_local, server, tmp_path):
    bench = write_benchmark(tmp_path / "b.jsonl", ["Which planet is red?", "Which animal is the first?"])
    first, opts = f"openai:{server.base_url}#tiny", RunOptions(out=str(tmp_path / "runs"), max_skipped=ACCEPT_ALL)
    run(config(bench, [first], sample=2, max_routers=2, model_settings={"openai": FAST}), opts)
    with CompletionsServer(str(shared_tiny_lm()), model_name="tiny2") as other:
        second = f"openai:{other.base_url}#tiny2"
        before = requests(server)
        both = run(config(bench, [first, second], router_model=[first], sample=2, max_routers=2,
                          model_settings={"openai": FAST}), opts)
        calls = load(both)[1]["calls"]
        assert requests(server) == before  # the first model's routers and worker calls all come from the cache
        assert requests(other) == calls["per_model"][second]["computed"] == calls["per_model"][second]["calls"]
        assert calls["per_model"][second]["calls"] <= 2 * (1 + 2) and calls["per_model"][first]["computed"] == 0


def test_bad_input_lands_in_its_category_and_the_run_completes(ray_local, server, tmp_path):
    m = 2
    bench = write_benchmark(tmp_path / "b.jsonl", ["SLOWQ which river?", "EMPTYQ which queen?", "NOLETTERQ which fire?",
                                                   "Which water is blue?"],
                            extra=[{"id": "no-opts", "question": "What is the colour?", "options": [], "gold": "red"}])
    cfg = config(bench, [f"openai:{server.base_url}#tiny"], sample=4, max_routers=m,
                 model_settings={"openai": {"timeout_s": 3.0, "max_retries": 0, "concurrency": 4, **FAST}})
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), max_skipped=ACCEPT_ALL))
    summary, manifest = load(out)
    outcomes = pq.read_table(Path(out) / "data" / "outcomes").to_pandas()
    status = {q: set(g.status) for q, g in outcomes.groupby("question_id")}
    assert status["q0"] == {"timeout"}  # SLOWQ: every router call timed out, so no cell asked the worker
    empty = outcomes[outcomes.question_id == "q1"].set_index(["condition", "r"]).status
    assert empty["forward_full", 1] in ("answered", "unparsable")  # EMPTYQ's clean relay delivered
    assert set(empty["noisy_rewrite"]) == {"empty_router"}  # its noisy routers did not: no worker call
    assert status["q2"] == {"unparsable"}  # NOLETTERQ: the worker replied without a letter
    assert summary["sample"]["skipped"]["too_few_options"]["count"] == 1 and summary["sample"]["population"] == 5
    totals = summary["status_totals"]
    assert totals["timeout"] == 1 + m and totals["empty_router"] == m and totals["unparsable"] >= 1 + m
    assert summary["overview"]["unscored_cells"] == 1 + 2 * m
    calls = manifest["calls"]
    assert calls["router"]["timeout"] == 1 + m and calls["router"]["empty_outputs"] == m
    assert calls["worker"]["blocked_cells"] == {"empty_router": m, "timeout": 1 + m}
    # the same answers by reason: what --max-skipped counts (a timeout is transient, the rest permanent)
    router = calls["router"]["unusable"]
    assert router["by_reason"] == {"timed out after N s": 1 + m, "empty router output": m} and router["transient"] == 1 + m
    assert calls["worker"]["unusable"]["by_reason"]["unparsable worker answer"] >= 1 + m
    assert manifest["answer_limits"]["max_skipped"] == 1.0
    assert totals["answered"] + totals["unparsable"] == 4 * (1 + m) - (1 + 2 * m)
    assert calls["worker"]["calls"] <= 4 * (1 + m) - (1 + 2 * m)  # identical worker prompts are one call
    assert not summary["missing"]  # every cell still has paired questions from the other items
    report = cell_text((Path(out) / "report.html").read_text())
    assert "What is missing" in report and "1 too_few_options" in report and f"<td>timeout</td><td>{1 + m}</td>" in report
    assert f"<td>empty_router</td><td>{m}</td>" in report
    assert f"{1 + 2 * m} of {calls['router']['calls']} router answers were unusable" in report
    assert "Unusable answers by reason" in report and "timed out after N s" in report
    assert (Path(out) / "_SUCCESS").exists()
