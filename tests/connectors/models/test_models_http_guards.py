"""The openai backend against hostile endpoints (issue 33, items 1, 9, 10): a redirect elsewhere never
carries the key, a reply without end never fills memory, a reply one byte at a time never holds the
run past its timeout. Real stdlib servers on loopback; a second server stands for the other host and
records what reaches it."""
from __future__ import annotations

import json
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.registry import build_backend
from tests.servers.scripted_http import ScriptedServer

KEY = "sk-guard-0123456789abcdefXYZ"
PROMPT = Prompt("Question: the largest river?\nA. red\nB. blue", None, "Answer:")
FAST = {"backoff_s": 0.0, "max_backoff_s": 0.0, "concurrency": 1, "api_key_env": "BENCH_GUARD_KEY"}
COMPLETION = {"choices": [{"index": 0, "text": " A", "finish_reason": "length",
                           "logprobs": {"tokens": [" A"], "token_logprobs": [-0.1], "top_logprobs": [{" A": -0.1, " B": -2.5}]}}]}


def endpoint(answer):
    """A completions endpoint whose ``/v1/models`` is answered plainly and whose completions are ``answer``'s."""
    def reply(server, h):
        if h.command == "GET":
            return server.send_json(h, 200, {"data": [{"id": "m"}]})
        return answer(server, h)
    return ScriptedServer(reply)


def completions(server: ScriptedServer) -> list[tuple[str, str, dict[str, str]]]:
    return [s for s in server.seen if s[0] == "POST"]


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("BENCH_GUARD_KEY", KEY)


# --- 1: a redirect is the call's error; the key never goes where Location points ----------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_host_is_the_items_error_and_nothing_reaches_that_host(status):
    with ScriptedServer(lambda s, h: s.send_json(h, 200, COMPLETION)) as other:
        with endpoint(lambda s, h: s.send_json(h, status, {}, {"Location": f"{other.url}/v1/completions"})) as server:
            backend = build_backend(f"openai:{server.url}/v1#m", {**FAST, "max_retries": 2})
            [scores] = backend.choice_logprobs([PROMPT], [["A", "B"]])
            [generated] = backend.generate([PROMPT])
    assert other.seen == []  # neither the key nor the prompt reached the other host
    for error in (scores.error, generated.error):
        assert f"failed: redirected (HTTP {status}) to {other.url}; redirects are not followed" in error, error
        assert "/v1/completions" not in error.split("redirected")[1]  # the origin only, never the path
    assert scores.logprobs is None and generated.text is None
    assert len(completions(server)) == 2 and backend.counters["retries"] == 0  # not retried: it would say the same


def test_a_redirect_to_the_same_host_is_not_followed_either():
    """The key is never resent on a redirect, not even to the origin that asked for it."""
    def answer(s, h):
        if h.path == "/v1/completions":
            return s.send_json(h, 302, {}, {"Location": "/v1/elsewhere"})
        return s.send_json(h, 200, COMPLETION)

    with endpoint(answer) as server:
        backend = build_backend(f"openai:{server.url}/v1#m", FAST)
        [scores] = backend.choice_logprobs([PROMPT], [["A", "B"]])
    assert f"redirected (HTTP 302) to {server.url}; redirects are not followed" in scores.error
    assert [p for _, p, _ in completions(server)] == ["/v1/completions"]


# --- 9: a reply over the limit is the item's error, read no further ------------------------------------------------


@pytest.mark.parametrize("declared", [False, True])  # a chunk stream that never says its size, or one that says 256 MiB
def test_a_reply_larger_than_the_limit_is_the_items_error_with_memory_bounded(declared):
    size = 256 * 2**20
    chunk = b" " * 2**16

    def huge(s, h):
        if len(completions(s)) > 1:  # the first item's request only; the second item is answered well
            return s.send_json(h, 200, COMPLETION)
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        if declared:
            h.send_header("Content-Length", str(size))
        h.end_headers()
        s.stream(h, chunk, 0.0, limit=size)

    with endpoint(huge) as server:
        backend = build_backend(f"openai:{server.url}/v1#m", {**FAST, "max_reply_bytes": 2**20, "max_retries": 2})
        tracemalloc.start()
        try:
            scores = backend.choice_logprobs([PROMPT, PROMPT], [["A", "B"], ["A", "B"]])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        sent = server.sent
    assert "the reply is larger than the 1,048,576-byte limit" in scores[0].error
    assert scores[1].logprobs == pytest.approx((-0.1, -2.5))
    assert peak < 16 * 2**20, f"{peak / 2**20:.0f} MiB allocated for a 1 MiB limit"
    assert sent < 48 * 2**20, f"{sent / 2**20:.0f} MiB of the 256 MiB reply were read"  # the limit plus socket buffers
    assert backend.counters["retries"] == 0


def test_the_reply_limit_defaults_to_8_mib_and_is_a_setting():
    from connectors.models.openai_compat import OpenAISettings

    assert OpenAISettings().max_reply_bytes == 8 * 2**20
    with pytest.raises(ValueError, match="max_reply_bytes must be positive"):
        OpenAISettings(max_reply_bytes=0)


# --- 10: timeout_s bounds the whole request ------------------------------------------------------------------------


def _drip_body(s, h):  # a well-formed reply, one byte every 0.2 s (each read is quick; the request never ends in time)
    data = json.dumps(COMPLETION).encode()
    h.send_response(200)
    h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    for byte in data:
        if s.stop.is_set():
            return
        s.write(h, bytes([byte]))
        time.sleep(0.2)


def _endless_chunks(s, h):  # a chunked stream that never ends: a chunk every 0.1 s
    h.send_response(200)
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    s.stream(h, b"1\r\n \r\n", 0.1)


def _drip_headers(s, h):  # the status line and headers themselves, one byte every 0.2 s
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 200 + b"\r\n\r\n{}":
        if s.stop.is_set():
            return
        s.write(h, bytes([byte]))
        time.sleep(0.2)


@pytest.mark.parametrize("answer", [_drip_body, _endless_chunks, _drip_headers], ids=["drip-body", "endless-chunks", "drip-headers"])
def test_a_reply_that_never_completes_fails_as_a_timeout_within_timeout_s(answer):
    with endpoint(answer) as server:
        backend = build_backend(f"openai:{server.url}/v1#m", {**FAST, "timeout_s": 1.0, "max_retries": 1})
        started = time.monotonic()
        with ThreadPoolExecutor(1) as pool:  # so that the old, unbounded client fails this test instead of hanging it
            future = pool.submit(backend.choice_logprobs, [PROMPT], [["A", "B"]])
            try:
                [scores] = future.result(timeout=10)
            finally:
                server.stop.set()
        elapsed = time.monotonic() - started
    assert "failed after 1 retries: timed out after 1 s" in scores.error, scores.error
    assert elapsed < 4.0, f"two attempts of timeout_s 1 took {elapsed:.1f} s"
    assert backend.counters["requests"] == 2
