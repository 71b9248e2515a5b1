"""The vllm backend (skipped where vLLM is not importable, as on CPU-only machines)."""
from __future__ import annotations

import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.registry import build_backend
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.models  # builds transformers models (torch)

PROMPTS = [Prompt(f"Question: the {w} river?\nA. red\nB. blue\nC. green\nD. fire", None, "Answer:") for w in ("largest", "first")]
LABELS = [list("ABCD")] * len(PROMPTS)


def test_vllm_label_logprobs_match_hf_within_a_tolerance():
    pytest.importorskip("vllm")
    backend = build_backend(f"vllm:{shared_tiny_lm()}", {"dtype": "float32", "gpu_memory_utilization": 0.3})
    assert backend.settings()["label_method"] in ("logprob_token_ids", "full_vocabulary")
    ref = build_backend(f"hf:{shared_tiny_lm()}").choice_logprobs(PROMPTS, LABELS)
    for a, b in zip(ref, backend.choice_logprobs(PROMPTS, LABELS)):
        assert b.error is None and max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-3


def test_missing_vllm_is_a_clear_error():
    try:
        import vllm  # noqa: F401
    except ImportError:
        from connectors.models.base import BackendError

        with pytest.raises(BackendError, match="the vllm backend needs vLLM"):
            build_backend("vllm:/models/x")
    else:
        pytest.skip("vLLM is installed here")
