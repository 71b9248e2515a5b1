"""Per-row decoding settings: ``generate_each``, the row columns of a prompt batch, and the hf backend's
per-row seeded sampling (a row's sample depends on its prompt and seed, not on its batch)."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.base import Decoding
from connectors.models.batches import generate_prompt_batch, row_params
from connectors.models.hf import RowSampler
from connectors.models.registry import build_backend, open_backend
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.models  # builds transformers models (torch)

PROMPTS = [Prompt(user=f"Question: which {w} is red?", system=None, answer_prefix="") for w in ("city", "river planet", "king")]


@pytest.fixture(scope="module")
def hf():
    return build_backend(f"hf:{shared_tiny_lm()}", {"batch_size": 8})


def sampled(seed: int | None, tokens: int = 8) -> Decoding:
    return Decoding(max_new_tokens=tokens, temperature=0.9, top_p=0.9, seed=seed)


def test_a_seeded_row_samples_the_same_text_alone_or_in_any_batch(hf):
    params = [sampled(1), sampled(2), sampled(3)]
    together = [g.text for g in hf.generate_each(PROMPTS, params)]
    alone = [hf.generate_each([p], [q])[0].text for p, q in zip(PROMPTS, params)]
    reversed_batch = [g.text for g in hf.generate_each(PROMPTS[::-1], params[::-1])][::-1]
    assert together == alone == reversed_batch
    other = [g.text for g in hf.generate_each(PROMPTS, [sampled(11), sampled(12), sampled(13)])]
    assert sum(a != b for a, b in zip(together, other)) >= 2  # another seed, another sample
    # one seed for the whole batch (generate) is each row's own seed: the same as generate_each with that seed
    assert [g.text for g in hf.generate(PROMPTS, sampled(5))] == [g.text for g in hf.generate_each(PROMPTS, [sampled(5)] * 3)]


def test_mixed_greedy_and_sampled_rows_keep_their_order_and_settings(hf):
    greedy = Decoding(max_new_tokens=3)
    mixed = hf.generate_each(PROMPTS, [greedy, sampled(4, tokens=6), greedy])
    assert [g.text for g in mixed][::2] == [g.text for g in hf.generate([PROMPTS[0], PROMPTS[2]], greedy)]
    assert mixed[1].text == hf.generate([PROMPTS[1]], sampled(4, tokens=6))[0].text
    assert mixed[0].completion_tokens <= 3 and mixed[1].completion_tokens <= 6
    with pytest.raises(ValueError, match="3 prompts but 2 generation settings"):
        hf.generate_each(PROMPTS, [greedy, greedy])


def test_row_sampler_draws_from_the_tempered_nucleus():
    """Gumbel-max over many seeds: frequencies match softmax(logits / T) on the top-p nucleus, nothing outside it."""
    import torch

    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0, -3.0]])
    temperature, top_p = 0.7, 0.9
    probs = torch.softmax(logits[0] / temperature, dim=-1).numpy()
    order = np.argsort(-probs)
    before = np.cumsum(probs[order]) - probs[order]
    nucleus = order[before < top_p]
    expected = np.zeros_like(probs)
    expected[nucleus] = probs[nucleus] / probs[nucleus].sum()
    draws = 4000
    picks = [int(RowSampler(torch, [seed], [temperature], [top_p], "cpu")(None, logits).argmax()) for seed in range(draws)]
    counts = np.bincount(picks, minlength=5)
    assert set(np.flatnonzero(counts)) <= set(nucleus.tolist()) and len(nucleus) < 5
    for k in nucleus:  # within 4 binomial standard deviations
        sd = math.sqrt(draws * expected[k] * (1 - expected[k]))
        assert abs(counts[k] - draws * expected[k]) < 4 * sd, (k, counts[k], draws * expected[k])


def test_prompt_batch_columns_set_each_rows_decoding_and_seeded_rows_are_cached(tmp_path):
    batch = pa.table({"id": ["a", "b", "c"], "system": [None] * 3, "user": [p.user for p in PROMPTS], "answer_prefix": [""] * 3,
                      "max_new_tokens": [2, 5, None], "temperature": [0.0, 0.9, 0.9], "seed": [None, 3, None]})
    params = row_params(batch, Decoding(max_new_tokens=4))
    assert params == [Decoding(max_new_tokens=2), Decoding(max_new_tokens=5, temperature=0.9, seed=3),
                      Decoding(max_new_tokens=4, temperature=0.9)]
    assert row_params(batch.drop_columns(["max_new_tokens", "temperature", "seed"]), Decoding()) is None
    backend = open_backend(f"hf:{shared_tiny_lm()}", {"batch_size": 4}, cache_root=str(tmp_path))
    first = generate_prompt_batch(backend, batch, Decoding(max_new_tokens=4))
    assert [t <= n for t, n in zip(first.column("completion_tokens").to_pylist(), (2, 5, 4))] == [True] * 3
    again = open_backend(f"hf:{shared_tiny_lm()}", {"batch_size": 4}, cache_root=str(tmp_path))
    second = generate_prompt_batch(again, batch, Decoding(max_new_tokens=4))
    # greedy and seeded rows come from the cache; sampling without a seed is never cached
    assert second.column("cached").to_pylist() == [True, True, False]
    assert second.column("text").to_pylist()[:2] == first.column("text").to_pylist()[:2]
    assert again.counters["hits"] == 2 and again.counters["generate_calls"] == 1


def test_greedy_and_sampled_rows_of_one_length_share_one_generate_call_and_keep_their_texts(hf):
    """A clean (greedy) and a noisy (sampled) router call of the same length are one batch: one pass of the
    weights per token for both, and each row's text is what it would be alone."""
    greedy, noisy = Decoding(max_new_tokens=6), sampled(4, tokens=6)
    before = hf.counters["generate_calls"]
    mixed = hf.generate_each(PROMPTS, [greedy, noisy, greedy])
    assert hf.counters["generate_calls"] - before == 1
    assert [mixed[0].text, mixed[2].text] == [g.text for g in hf.generate([PROMPTS[0], PROMPTS[2]], greedy)]
    assert mixed[1].text == hf.generate([PROMPTS[1]], noisy)[0].text
