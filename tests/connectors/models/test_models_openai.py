"""The openai backend against a real completions server on loopback serving the tiny model."""
from __future__ import annotations

import socket
import time

import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.base import CapabilityError, Decoding
from connectors.models.registry import build_backend
from tests.servers.completions_server import CompletionsServer
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.models  # builds transformers models (torch)

QUESTIONS = [
    Prompt("Question: which planet is red?\nA. water\nB. fire\nC. earth\nD. ocean", "Answer with the letter only.", "Answer:"),
    Prompt("Question: the largest ocean?\nA. blue\nB. green\nC. red", None, "Answer:"),
    Prompt("Question: what is the first number of the year?\nA. one\nB. two", None, "Answer:"),
]
LABELS = [list("ABCD"), list("ABC"), list("AB")]
FAST = {"backoff_s": 0.0, "max_backoff_s": 0.0}


@pytest.fixture(scope="module")
def server():
    with CompletionsServer(str(shared_tiny_lm()), model_name="tiny") as srv:
        yield srv


@pytest.fixture(scope="module")
def hf_scores():
    return build_backend(f"hf:{shared_tiny_lm()}", {"batch_size": 2}).choice_logprobs(QUESTIONS, LABELS)


@pytest.mark.parametrize("settings, requests", [({"label_method": "echo"}, 3), ({"label_method": "echo", "prompt_lists": False}, 9),
                                               ({"label_method": "top_logprobs", "top_logprobs": 1000}, 3)])
def test_label_logprobs_agree_with_the_hf_backend_within_1e4(server, hf_scores, settings, requests):
    backend = build_backend(f"openai:{server.base_url}#tiny", {**settings, "concurrency": 3})
    before = sum(server.requests.values())
    scores = backend.choice_logprobs(QUESTIONS, LABELS)
    assert sum(server.requests.values()) - before == requests  # one per item, or one per label without prompt lists
    for a, b in zip(hf_scores, scores):
        assert b.error is None
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-4
        assert b.label_mass == pytest.approx(a.label_mass, rel=1e-3)


def test_settings_record_what_the_endpoint_serves_and_not_its_start_time(server):
    spec = f"openai:{server.base_url}#tiny"
    listings = server.listings
    settings = build_backend(spec).settings()
    assert settings["served_model"] == {"id": "tiny", "owned_by": "benchaudit-tests"} and server.listings == listings + 1
    with CompletionsServer(str(shared_tiny_lm()), model_name="tiny") as restarted:  # another start, another "created"
        assert restarted.started != server.started
        again = build_backend(f"openai:{restarted.base_url}#tiny").settings()
    assert again["served_model"] == settings["served_model"]
    assert build_backend("openai:http://127.0.0.1:9/v1#m", {"timeout_s": 1}).settings()["served_model"] is None


def test_label_outside_the_top_n_is_an_item_error_pointing_to_echo(server, hf_scores):
    scores = build_backend(f"openai:{server.base_url}#tiny", {"top_logprobs": 1}).choice_logprobs(QUESTIONS, LABELS)
    assert all(s.error and "not among the top-1 log-probs" in s.error and "label_method='echo'" in s.error for s in scores)


def test_429_and_5xx_are_retried_and_counted(server, hf_scores):
    backend = build_backend(f"openai:{server.base_url}#tiny", {"label_method": "echo", "concurrency": 1, **FAST})
    server.fail_with = [503, 429]
    scores = backend.choice_logprobs(QUESTIONS[:1], LABELS[:1])
    assert scores[0].error is None and scores[0].logprobs == pytest.approx(hf_scores[0].logprobs, abs=1e-4)
    assert backend.counters["retries"] == 2 and backend.counters["requests"] == 3 and backend.counters["failures"] == 0


def test_a_4xx_is_not_retried_and_stays_on_its_item(server):
    backend = build_backend(f"openai:{server.base_url}#other-model", FAST)
    scores = backend.choice_logprobs(QUESTIONS[:1], LABELS[:1])
    assert "HTTP 404" in scores[0].error and "not served" in scores[0].error
    assert backend.counters["retries"] == 0 and backend.counters["failures"] == 1


def test_unreachable_endpoint_is_a_clear_per_item_error_at_once_without_retries():
    """Nothing listens (a server never started, or one that crashed): each item says so at once, with the default
    backoff, instead of retrying a refused connection for seconds per item."""
    with socket.socket() as s:  # a loopback port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = build_backend(f"openai:http://127.0.0.1:{port}/v1#tiny", {"max_retries": 2, "timeout_s": 2})
    started = time.monotonic()
    scores = backend.choice_logprobs(QUESTIONS, LABELS)
    assert time.monotonic() - started < 2  # 3 items x 2 retries of the default 0.5 s and 1 s backoff would be 4.5 s
    for s in scores:
        assert s.logprobs is None
        assert s.error == (f"openai:http://127.0.0.1:{port}/v1#tiny: POST http://127.0.0.1:{port}/v1/completions failed "
                           f"after 0 retries: connection refused: nothing listens at 127.0.0.1:{port} (a server not "
                           "started, or one that crashed); a refused connection is not retried")
    assert backend.counters["requests"] == 3 and backend.counters["retries"] == 0 and backend.counters["failures"] == 3


def test_chat_only_endpoint_refuses_choice_logprobs_with_the_reason():
    backend = build_backend("openai:http://127.0.0.1:9/v1#m", {"endpoint": "chat"})
    with pytest.raises(CapabilityError, match="chat-only endpoint cannot return prompt log-probs"):
        backend.choice_logprobs(QUESTIONS, LABELS)


def test_api_key_is_sent_but_never_in_settings_repr_or_errors(monkeypatch):
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-very-secret")
    backend = build_backend("openai:http://127.0.0.1:9/v1#m", {"api_key_env": "BENCH_TEST_KEY", "max_retries": 0, "timeout_s": 1})
    assert backend.client._headers["Authorization"] == "Bearer sk-very-secret"
    scores = backend.choice_logprobs(QUESTIONS[:1], LABELS[:1])
    shown = f"{backend.settings()} {backend!r} {scores}"
    assert "sk-very-secret" not in shown and "BENCH_TEST_KEY" not in str(backend.settings())


def test_generation_matches_the_hf_backend(server):
    params = Decoding(max_new_tokens=8)
    remote = build_backend(f"openai:{server.base_url}#tiny").generate(QUESTIONS, params)
    local = build_backend(f"hf:{shared_tiny_lm()}").generate(QUESTIONS, params)
    assert [g.text for g in remote] == [g.text for g in local]
    assert [g.completion_tokens for g in remote] == [g.completion_tokens for g in local]


def test_text_generator_on_an_arrow_batch_counts_tokens_and_reruns_from_the_cache(server, tmp_path):
    import pyarrow as pa

    from connectors.models.batches import TextGenerator

    batch = pa.table({"id": ["a", "b"], "system": [None, "Be brief."], "user": [q.user for q in QUESTIONS[:2]],
                      "answer_prefix": ["", ""]})
    spec = f"openai:{server.base_url}#tiny"
    first = TextGenerator(spec, cache_root=str(tmp_path), params={"max_new_tokens": 5, "stop": ["\n"]})(batch)
    assert first.column_names[-8:] == ["text", "prompt_tokens", "completion_tokens", "finish_reason", "error",
                                       "error_code", "error_transient", "cached"]
    assert first.column("cached").to_pylist() == [False, False]
    assert first.column("error").null_count == 2 and all(0 < n <= 5 for n in first.column("completion_tokens").to_pylist())
    before = sum(server.requests.values())
    again = TextGenerator(spec, cache_root=str(tmp_path), params={"max_new_tokens": 5, "stop": ["\n"]})
    rerun = again(batch)
    assert rerun.column("text") == first.column("text") and rerun.column("cached").to_pylist() == [True, True]
    assert sum(server.requests.values()) == before and again.backend.counters["hits"] == 2


def test_echo_finds_the_label_after_text_that_per_token_decoding_splits(server):
    """Curly quotes are several byte tokens each; the server's text_offsets drift on them, so the
    label is found from the echoed text (the last prompt token), not from the offsets."""
    prompts = [Prompt("Question: The current testing policy is:\nA. “Opt-in”\nB. “Opt-out”\nC. Mandatory testing", None, "Answer:")]
    hf = build_backend(f"hf:{shared_tiny_lm()}").choice_logprobs(prompts, [list("ABC")])
    echo = build_backend(f"openai:{server.base_url}#tiny", {"label_method": "echo"}).choice_logprobs(prompts, [list("ABC")])
    assert echo[0].error is None and max(abs(a - b) for a, b in zip(hf[0].logprobs, echo[0].logprobs)) < 1e-4
