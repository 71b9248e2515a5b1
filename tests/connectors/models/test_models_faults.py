"""The openai backend and the response cache against what goes wrong for real: an endpoint that repeats
the request's key in its error body, replies cut short, reset, not UTF-8 or with log-probs that are no
log-probs, and cache files damaged on disk. A real stdlib server on loopback (tests/servers) and real
Parquet files; no model is loaded, so these run in the unit tier."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.registry import build_backend, open_backend
from tests.servers.faulty_completions import FaultyCompletionsServer, label_logprobs

KEY = "sk-test-0123456789abcdefXYZ"
PROMPTS = [Prompt(f"Question: the {w} river?\nA. red\nB. blue\nC. green\nD. fire", None, "Answer:")
           for w in ("largest", "smallest", "first")]
LABELS = [list("ABCD")] * len(PROMPTS)
STRINGS = [" A", " B", " C", " D"]
FAST = {"backoff_s": 0.0, "max_backoff_s": 0.0, "concurrency": 1}


def expected(prompt: Prompt) -> list[float]:
    """What the server answers for a prompt, computed from its own function (the backend renders it unchanged)."""
    top = label_logprobs(f"{prompt.user}\n{prompt.answer_prefix}")
    return [top[s] for s in STRINGS]


@pytest.fixture()
def server():
    with FaultyCompletionsServer() as srv:
        yield srv


def spec(server: FaultyCompletionsServer) -> str:
    return f"openai:{server.base_url}#m"


def test_the_served_answers_are_the_servers_function(server):
    backend = build_backend(spec(server), FAST)
    assert backend.render(PROMPTS[0]) == f"{PROMPTS[0].user}\n{PROMPTS[0].answer_prefix}"
    assert [list(s.logprobs) for s in backend.choice_logprobs(PROMPTS, LABELS)] == [expected(p) for p in PROMPTS]


# --- 5: the key an endpoint repeats never reaches a message -------------------------------------------------------


@pytest.mark.parametrize("fault, status", [("echo_auth_401", "HTTP 401"), ("echo_auth_500", "HTTP 500")])
def test_a_key_the_endpoint_echoes_is_redacted_from_every_error(server, monkeypatch, fault, status):
    monkeypatch.setenv("BENCH_FAULT_KEY", KEY)
    server.always = fault
    backend = build_backend(spec(server), {"api_key_env": "BENCH_FAULT_KEY", "max_retries": 1, **FAST})
    scores = backend.choice_logprobs(PROMPTS[:1], LABELS[:1])
    generated = backend.generate(PROMPTS[:1])
    assert set(server.seen_auth) == {f"Bearer {KEY}"}  # the key is sent ...
    for error in (scores[0].error, generated[0].error):  # ... and its echo is an error that shows no part of it
        assert status in error and "Authorization: Bearer [redacted]" in error and error.startswith(f"{spec(server)}: ")
        assert KEY[:10] not in error and "\n" not in error
    assert KEY not in f"{backend.settings()} {backend!r}"


def test_a_key_in_a_generated_text_is_redacted(server, monkeypatch):
    """Whatever an endpoint sends back is text the backend produces: the key is never in it."""
    monkeypatch.setenv("BENCH_FAULT_KEY", KEY)
    server.always = "auth_in_text"
    backend = build_backend(spec(server), {"api_key_env": "BENCH_FAULT_KEY", **FAST})
    assert backend.generate(PROMPTS[:1])[0].text == " A (you sent Bearer [redacted])"


# --- 7: transport faults are retried, malformed content is the item's error ---------------------------------------


@pytest.mark.parametrize("fault", ["short_body", "reset"])
def test_a_reply_cut_short_or_reset_is_retried_and_counted(server, fault):
    server.faults = [fault]
    backend = build_backend(spec(server), FAST)
    scores = backend.choice_logprobs(PROMPTS, LABELS)
    assert [list(s.logprobs) for s in scores] == [expected(p) for p in PROMPTS]
    assert dict(backend.counters) == {"requests": 4, "retries": 1}


def test_a_reply_cut_short_every_time_is_an_item_error_after_the_retries(server):
    server.always = "short_body"
    backend = build_backend(spec(server), {"max_retries": 2, **FAST})
    error = backend.choice_logprobs(PROMPTS[:1], LABELS[:1])[0].error
    assert error.startswith(f"{spec(server)}: POST {server.base_url}/completions failed after 2 retries: the response was "
                            "cut short (")
    assert dict(backend.counters) == {"requests": 3, "retries": 2, "failures": 1}


@pytest.mark.parametrize("fault, settings, reason", [
    ("bad_utf8", {}, "POST {url}/completions failed: the response is not UTF-8 (byte 0xff at offset "),
    ("logprob_string", {}, "log-prob \"-0.5\" of label ' A' is not a number"),
    ("logprob_nan", {}, "log-prob nan of label ' A' is NaN"),
    ("logprob_positive", {}, "log-prob 0.5 of label ' A' is above 0"),
    ("wrong_count", {"label_method": "echo"}, "the endpoint answered 3 choices for the 4 prompts sent (one per label)"),
])
def test_malformed_content_is_an_error_on_its_item_only(server, fault, settings, reason):
    server.faults = [fault]  # the first item's request; the others are answered well
    backend = build_backend(spec(server), {**FAST, **settings})
    scores = backend.choice_logprobs(PROMPTS, LABELS)
    assert scores[0].logprobs is None and scores[0].error.startswith(f"{spec(server)}: {reason.format(url=server.base_url)}")
    assert [list(s.logprobs) for s in scores[1:]] == [expected(p) for p in PROMPTS[1:]]
    assert backend.counters["retries"] == 0 and backend.counters["failures"] == (fault == "bad_utf8")


# --- 11: an answer refused as invalid is never cached -------------------------------------------------------------


@pytest.mark.parametrize("fault, settings", [("logprob_positive", {}), ("wrong_count", {"label_method": "echo"})])
def test_invalid_answers_are_not_cached_and_a_rerun_asks_again(server, tmp_path, fault, settings):
    server.always = fault
    first = open_backend(spec(server), {**FAST, **settings}, cache_root=str(tmp_path))
    assert all(s.error for s in first.choice_logprobs(PROMPTS, LABELS))
    assert first.counters["files_written"] == 0
    server.always = None  # the endpoint is fixed
    again = open_backend(spec(server), {**FAST, **settings}, cache_root=str(tmp_path))
    scores = again.choice_logprobs(PROMPTS, LABELS)
    assert again.counters["requests"] == len(PROMPTS) and not any(s.cached or s.error for s in scores)
    assert [list(s.logprobs) for s in scores] == [expected(p) for p in PROMPTS]


def test_an_invalid_answer_from_any_backend_is_an_item_error_and_not_cached(server, tmp_path):
    """The cache checks what it is given, whichever backend gave it (here a backend whose answer has one
    log-prob too many, as a buggy backend would)."""
    from connectors.models.base import ChoiceScores
    from connectors.models.cache import CachedBackend

    backend = build_backend(spec(server), FAST)
    backend.choice_logprobs = lambda prompts, labels: [ChoiceScores((-1.0, -2.0, -3.0, -4.0, -5.0), 0.5) for _ in prompts]
    cached = CachedBackend(backend, str(tmp_path))
    scores = cached.choice_logprobs(PROMPTS[:2], LABELS[:2])
    assert [s.error for s in scores] == [f"{spec(server)}: 5 log-probs for 4 labels"] * 2
    assert cached.counters["files_written"] == 0


# --- 6: a damaged cache file is set aside, counted and recomputed --------------------------------------------------


def _rewrite(path: Path, change, key: str | None = None) -> None:
    """The file rewritten with one entry's value changed (``key``'s, else the second; what a buggy writer or a bad
    disk could leave)."""
    table = pq.read_table(path)
    values = table.column("value").to_pylist()
    at = table.column("key").to_pylist().index(key) if key else 1
    values[at] = change(json.loads(values[at]))
    pq.write_table(pa.table({"key": table.column("key"), "value": values}), path)


CORRUPTIONS = {
    "garbage bytes": lambda p: p.write_bytes(b"\x00garbage, not parquet\xff" * 40),
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "empty": lambda p: p.write_bytes(b""),
    "wrong schema": lambda p: pq.write_table(pa.table({"key": [1, 2, 3], "answer": ["a", "b", "c"]}), p),
    "list longer than the labels": lambda p: _rewrite(p, lambda v: json.dumps({**v, "logprobs": [*v["logprobs"], -9.0]})),
    "strings in the list": lambda p: _rewrite(p, lambda v: json.dumps({**v, "logprobs": ["-1.0", *v["logprobs"][1:]]})),
    "log-prob above 0": lambda p: _rewrite(p, lambda v: json.dumps({**v, "logprobs": [0.5, *v["logprobs"][1:]]})),
    "not JSON": lambda p: _rewrite(p, lambda v: "{not json"),
}


@pytest.mark.parametrize("damage", CORRUPTIONS)
def test_a_damaged_cache_file_is_set_aside_counted_and_recomputed(server, tmp_path, damage, caplog):
    first = open_backend(spec(server), FAST, cache_root=str(tmp_path))
    fresh = [s.logprobs for s in first.choice_logprobs(PROMPTS, LABELS)]
    [file] = (tmp_path / first.cache.namespace).glob("*.parquet")
    CORRUPTIONS[damage](file)

    rerun = open_backend(spec(server), FAST, cache_root=str(tmp_path))
    scores = rerun.choice_logprobs(PROMPTS, LABELS)
    assert [s.logprobs for s in scores] == fresh and not any(s.error or s.cached for s in scores)
    assert rerun.counters["cache_bad"] == 1 and rerun.counters["requests"] == len(PROMPTS)
    assert (file.parent / (file.name + ".bad")).exists()  # set aside beside the others, for inspection
    assert f"response cache: {file}: " in caplog.text and "set aside as" in caplog.text

    third = open_backend(spec(server), FAST, cache_root=str(tmp_path))  # the recomputed answers are cached anew
    assert [s.logprobs for s in third.choice_logprobs(PROMPTS, LABELS)] == fresh
    assert third.counters["requests"] == 0 and third.counters["hits"] == len(PROMPTS) and "cache_bad" not in third.counters


def test_a_bad_generation_entry_is_set_aside_and_regenerated(server, tmp_path):
    first = open_backend(spec(server), FAST, cache_root=str(tmp_path))
    texts = [g.text for g in first.generate(PROMPTS)]
    [file] = (tmp_path / first.cache.namespace).glob("*.parquet")
    _rewrite(file, lambda v: json.dumps({**v, "text": 7}))
    rerun = open_backend(spec(server), FAST, cache_root=str(tmp_path))
    assert [g.text for g in rerun.generate(PROMPTS)] == texts
    assert rerun.counters["cache_bad"] == 1 and rerun.counters["requests"] == len(PROMPTS)


def test_a_file_another_reader_set_aside_is_a_miss_not_an_error(server, tmp_path):
    """Two actors list the same folder; one sets a file aside; the other, asking for it later, recomputes."""
    first = open_backend(spec(server), FAST, cache_root=str(tmp_path))
    fresh = [s.logprobs for s in first.choice_logprobs(PROMPTS, LABELS)]
    a = open_backend(spec(server), FAST, cache_root=str(tmp_path))
    b = open_backend(spec(server), FAST, cache_root=str(tmp_path))
    a.cache._load_index(), b.cache._load_index()  # both have listed the folder (a reads the file when asked)
    [file] = (tmp_path / first.cache.namespace).glob("*.parquet")
    asked = first.key("choice_logprobs", PROMPTS[0], STRINGS)  # a bad entry that a asks for
    _rewrite(file, lambda v: json.dumps({**v, "logprobs": v["logprobs"][:2]}), asked)
    assert [s.logprobs for s in a.choice_logprobs(PROMPTS[:2], LABELS[:2])] == fresh[:2] and a.counters["cache_bad"] == 1
    assert not file.exists()
    assert [s.logprobs for s in b.choice_logprobs(PROMPTS, LABELS)] == fresh
    assert b.counters["requests"] == len(PROMPTS) and "cache_bad" not in b.counters
