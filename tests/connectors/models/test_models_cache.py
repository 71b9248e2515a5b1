"""The response cache: a rerun makes zero forward passes and zero HTTP requests."""
from __future__ import annotations

import threading

import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.base import Decoding
from connectors.models.cache import ResponseCache
from connectors.models.registry import build_backend, open_backend
from tests.servers.completions_server import CompletionsServer
from tests.servers.tiny_lm import build_model, build_tiny_lm, shared_tiny_lm

pytestmark = pytest.mark.models  # builds transformers models (torch)

PROMPTS = [Prompt(f"Question: the {w} river?\nA. red\nB. blue\nC. green\nD. fire", None, "Answer:")
           for w in ("largest", "smallest", "first", "blue", "green")]
LABELS = [list("ABCD")] * len(PROMPTS)


def test_rerun_through_the_cache_makes_zero_forward_passes(tmp_path):
    spec = f"hf:{shared_tiny_lm()}"
    first = open_backend(spec, {"batch_size": 2}, cache_root=str(tmp_path))
    fresh = first.choice_logprobs(PROMPTS, LABELS)
    assert first.counters["forward_passes"] == 3 and first.counters["misses"] == 5
    rerun = open_backend(spec, {"batch_size": 2}, cache_root=str(tmp_path))
    cached = rerun.choice_logprobs(PROMPTS, LABELS)
    assert rerun.counters["forward_passes"] == 0 and rerun.counters["hits"] == 5
    assert [c.logprobs for c in cached] == [f.logprobs for f in fresh]  # exact: floats round-trip through JSON
    # an added item repeats no pass for the others
    more = open_backend(spec, {"batch_size": 2}, cache_root=str(tmp_path))
    more.choice_logprobs([*PROMPTS, Prompt("Question: what?\nA. x\nB. y", None, "Answer:")], [*LABELS, ["A", "B"]])
    assert more.counters["forward_passes"] == 1 and more.counters["hits"] == 5 and more.counters["misses"] == 1


def test_weights_saved_over_the_old_ones_get_fresh_answers_not_the_cached_ones(tmp_path, monkeypatch):
    """A fine-tuned checkpoint written over the old file (same name, same size, same inode) is another model."""
    monkeypatch.setenv("BENCHAUDIT_MODEL_CACHE", str(tmp_path / "model-cache"))
    model_dir = build_tiny_lm(tmp_path / "model", seed=0)
    spec, cache_root = f"hf:{model_dir}", str(tmp_path / "responses")
    old = open_backend(spec, cache_root=cache_root).choice_logprobs(PROMPTS, LABELS)
    weights = model_dir / "model.safetensors"
    before = weights.stat()
    build_model(len(build_backend(spec).tokenizer), seed=1).save_pretrained(tmp_path / "tuned")
    tuned = (tmp_path / "tuned" / "model.safetensors").read_bytes()
    assert len(tuned) == before.st_size
    with open(weights, "r+b") as fh:  # in place: the same file, only its bytes differ
        fh.write(tuned)
    assert weights.stat().st_ino == before.st_ino and weights.stat().st_size == before.st_size
    rerun = open_backend(spec, cache_root=cache_root)
    new = rerun.choice_logprobs(PROMPTS, LABELS)
    assert rerun.counters["hits"] == 0 and rerun.counters["forward_passes"] > 0 and not any(s.cached for s in new)
    assert all(a.logprobs != b.logprobs for a, b in zip(old, new))
    again = open_backend(spec, cache_root=cache_root)  # the new weights' answers are cached in their turn
    assert [s.logprobs for s in again.choice_logprobs(PROMPTS, LABELS)] == [s.logprobs for s in new]
    assert again.counters["hits"] == len(PROMPTS) and again.counters["forward_passes"] == 0


def test_rerun_against_the_server_makes_zero_http_requests(tmp_path):
    with CompletionsServer(str(shared_tiny_lm())) as server:
        spec = f"openai:{server.base_url}#tiny"
        params = Decoding(max_new_tokens=4)
        first = open_backend(spec, {"label_method": "echo"}, cache_root=str(tmp_path))
        a = first.choice_logprobs(PROMPTS, LABELS)
        g = first.generate(PROMPTS[:2], params)
        served = sum(server.requests.values())
        assert served == 7
        rerun = open_backend(spec, {"label_method": "echo"}, cache_root=str(tmp_path))
        assert [s.logprobs for s in rerun.choice_logprobs(PROMPTS, LABELS)] == [s.logprobs for s in a]
        assert rerun.generate(PROMPTS[:2], params) == g
        assert sum(server.requests.values()) == served and rerun.counters["requests"] == 0
        # a setting that changes outputs is a different key: the server is asked again
        other = open_backend(spec, {"label_method": "top_logprobs", "top_logprobs": 1000}, cache_root=str(tmp_path))
        other.choice_logprobs(PROMPTS[:1], LABELS[:1])
        assert sum(server.requests.values()) == served + 1


def test_failed_items_are_not_cached_and_sampling_without_seed_is_never_cached(tmp_path):
    backend = open_backend("openai:http://127.0.0.1:9/v1#m", {"max_retries": 0, "timeout_s": 1}, cache_root=str(tmp_path))
    assert backend.choice_logprobs(PROMPTS[:1], LABELS[:1])[0].error
    assert backend.counters["files_written"] == 0
    assert not Decoding(temperature=0.7).deterministic and Decoding(temperature=0.7, seed=1).deterministic


def test_concurrent_writers_never_clobber_each_other(tmp_path):
    identity = {"spec": "hf:x", "revision": "r"}

    def write(worker):
        cache = ResponseCache(str(tmp_path), identity)
        for batch in range(10):
            cache.put_many({f"w{worker}-b{batch}-{i}": {"v": [worker, batch, i]} for i in range(20)})
            cache.put_many({f"shared-{batch}-{i}": {"v": [batch, i]} for i in range(5)})  # same batch from everyone

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reader = ResponseCache(str(tmp_path), identity)
    keys = [f"w{w}-b{b}-{i}" for w in range(6) for b in range(10) for i in range(20)] + \
           [f"shared-{b}-{i}" for b in range(10) for i in range(5)]
    found = reader.get_many(keys)
    assert len(found) == len(keys) and found["w3-b7-11"] == {"v": [3, 7, 11]}
    files = [p.name for p in (tmp_path / reader.namespace).iterdir()]
    assert not [f for f in files if f.startswith(".tmp")] and len([f for f in files if f.endswith(".parquet")]) == 6 * 10 + 10


def test_cache_works_on_an_fsspec_url():
    backend = build_backend(f"hf:{shared_tiny_lm()}")
    from connectors.models.cache import CachedBackend

    cached = CachedBackend(backend, "memory://landscape-cache")
    cached.choice_logprobs(PROMPTS[:2], LABELS[:2])
    again = CachedBackend(backend, "memory://landscape-cache")
    passes = backend.counters["forward_passes"]
    again.choice_logprobs(PROMPTS[:2], LABELS[:2])
    assert backend.counters["forward_passes"] == passes and again.counters["hits"] >= 2
