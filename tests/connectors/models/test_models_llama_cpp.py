"""The openai backend against a real llama.cpp server (llama-cpp-python) serving the same GGUF as the hf backend."""
from __future__ import annotations

import importlib.util

import pytest

from audit.landscape.prompts import Prompt
from tests.fixtures.mcqa_items import mcqa_items

pytestmark = [pytest.mark.models, pytest.mark.slow]

FAST = {"backoff_s": 0.0, "max_backoff_s": 0.0}


def _top(scores) -> int:
    return max(range(len(scores.logprobs)), key=lambda i: scores.logprobs[i])


@pytest.fixture(scope="module")
def llama_server(smollm2_gguf):
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama-cpp-python[server] is not installed (the test and server extras build it: scripts/setup test)")
    from connectors.models.llama_cpp_server import LlamaCppServer

    with LlamaCppServer(smollm2_gguf) as server:
        yield server


@pytest.fixture(autouse=True)
def server_alive(request):
    """A server that died (a wheel built for another CPU: SIGILL on the first completion) fails the test that met it,
    and every later one at once, as a crash with its exit status: not as the refused connections its clients see."""
    server = request.getfixturevalue("llama_server") if "llama_server" in request.fixturenames else None
    if server is not None:
        server.check()
    yield
    if server is not None:
        server.check()


@pytest.fixture(scope="module")
def remote(llama_server, smollm2_gguf):
    """The openai backend on the server, rendering prompts with the GGUF's own chat template."""
    from connectors.models.registry import build_backend

    return build_backend(f"openai:{llama_server.base_url}#smollm2-135m", {"tokenizer": str(smollm2_gguf), "concurrency": 2})


def test_llama_cpp_and_hf_pick_the_same_letter_on_at_least_90_percent_of_50_items(remote, smollm2):
    """Same weights, other kernels: llama.cpp multiplies Q4_1 blocks by 8-bit activations, hf the
    de-quantised float32 weights, so values differ a little and near-ties may flip; a tolerance.
    The letter opens the assistant's turn (no "Answer:"), where this model's choices vary."""
    prompts, labels, _ = mcqa_items(50, answer_prefix="")
    assert all(remote.render(p) == smollm2.render(p) for p in prompts)  # the same question, token for token
    local = smollm2.choice_logprobs(prompts, labels)
    served = remote.choice_logprobs(prompts, labels)
    assert [s.error for s in served] == [None] * 50 and remote.counters["requests"] == 50
    top = [_top(s) for s in local]
    agree = sum(t == _top(s) for t, s in zip(top, served))
    assert agree >= 45, f"{agree}/50 items agree on the top letter"
    assert max(abs(a - b) for x, y in zip(local, served) for a, b in zip(x.logprobs, y.logprobs)) < 0.5
    assert min(top.count(t) for t in set(top)) >= 10  # a real model's choices vary: agreement is not one letter everywhere


def test_settings_record_what_the_server_reports_it_serves(remote, llama_server, smollm2, smollm2_gguf):
    listed = llama_server.models()["data"]
    assert [m["id"] for m in listed] == [str(smollm2_gguf)]  # llama.cpp lists the path it loaded
    s = remote.settings()
    assert s["served_model"] == {"id": str(smollm2_gguf), "owned_by": "me"}
    assert s["chat_template_sha256"] == smollm2.settings()["chat_template_sha256"] and s["chat_template"] is True


def test_the_server_tokenises_the_rendered_prompt_and_the_letters_as_transformers_does(llama_server, remote, smollm2):
    """Special tokens (<|im_start|>, <|im_end|>) parsed as such, no BOS added (this GGUF says add_bos_token=false),
    and each letter one token after the assistant's turn opens: the ids the server scores are the hf backend's."""
    import json
    import urllib.request

    def server_ids(text: str) -> list[int]:
        request = urllib.request.Request(f"http://127.0.0.1:{llama_server.port}/extras/tokenize", json.dumps({"input": text}).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["tokens"]

    for prefix in ("", "Answer:"):
        prompt = mcqa_items(1, answer_prefix=prefix)[0][0]
        text = smollm2.render(prompt)
        local = smollm2.tokenizer(text, add_special_tokens=False)["input_ids"]
        assert server_ids(text) == local
        for label in smollm2.label_strings(prompt, list("ABCD")):
            assert server_ids(text + label) == [*local, *smollm2.tokenizer.encode(label, add_special_tokens=False)]
            assert len(smollm2.tokenizer.encode(label, add_special_tokens=False)) == 1


def test_echo_needs_one_prompt_per_request_on_llama_cpp(llama_server, smollm2_gguf):
    """llama-cpp-python reads a list ``prompt`` as token ids and answers HTTP 500 (not retried away: it stays 500)."""
    from connectors.models.registry import build_backend

    prompts, labels, _ = mcqa_items(1)
    listed = build_backend(f"openai:{llama_server.base_url}#smollm2-135m",
                           {"tokenizer": str(smollm2_gguf), "label_method": "echo", "max_retries": 1, **FAST})
    error = listed.choice_logprobs(prompts, labels)[0].error
    assert "HTTP 500" in error and listed.counters["retries"] == 1


def test_a_prompt_beyond_the_context_window_is_that_items_error_and_not_retried(llama_server, smollm2_gguf):
    from connectors.models.registry import build_backend

    backend = build_backend(f"openai:{llama_server.base_url}#smollm2-135m", {"tokenizer": str(smollm2_gguf), **FAST})
    long = Prompt("Question: " + "why " * 3000 + "?\nA. yes\nB. no", None, "Answer:")
    ok, too_long = backend.choice_logprobs([mcqa_items(1)[0][0], long], [list("ABCD"), list("AB")])
    assert ok.error is None and "HTTP 400" in too_long.error and "maximum context length is 2048 tokens" in too_long.error
    assert backend.counters["retries"] == 0 and backend.counters["failures"] == 1
    from connectors.models.base import Decoding

    (text,) = backend.generate([mcqa_items(1)[0][0]], Decoding(max_new_tokens=16))
    assert text.error is None and text.text and 0 < text.completion_tokens <= 16 and text.finish_reason in ("stop", "length")
