"""Landscape scoring throughput on one GPU: a random 8B-class Llama in bf16, 250-token prompts.

    python -m bench.gpu_landscape            # one H200: under 5 minutes
    python -m bench.gpu_landscape --tiny     # CPU smoke check of the same code path (seconds)

No download: the model is a Llama-3-8B-shaped configuration (32 layers, hidden 4096, GQA 8 KV
heads, vocabulary 128,256) with random weights, built on the device in bf16 and handed to the
``hf`` backend; the tokenizer is the tests' byte-level BPE (its ids are a subset of the
vocabulary). Every item is a 4-option prompt of about 250 tokens from the shipped template;
scoring is ``choice_logprobs`` (one forward per item, last-position logits only).

Prints items/s, prompt tokens/s and the ratio to the FLOP bound: a forward costs about
2 x params x tokens, so at ``--peak-tflops`` (H200 dense bf16: 989) the bound is
peak / (2 x params x tokens per item) items/s. With vLLM importable, the same prompts go through
the ``vllm`` backend (``load_format="dummy"``: random weights from the saved config).
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from audit.landscape.prompts import load_template
from audit.mcqa.items import McqaItem
from bench.common import random_llama
from connectors.models.hf import HFBackend
from connectors.models.spec import ModelSpec
from tests.servers.tiny_lm import WORDS, build_tokenizer

LLAMA_8B = {"vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192, "rope_theta": 500000.0}
TINY = {"vocab_size": 1024, "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024}


def _prompts(tokenizer, n: int, target_tokens: int, seed: int = 0):
    """``n`` 4-option prompts of about ``target_tokens`` tokens each."""
    template = load_template()
    rng = np.random.default_rng(seed)
    words = 150
    prompts = []
    for i in range(n):
        for _ in range(3):  # adjust the stem length to the target
            item = McqaItem(f"q{i}", "bench", " ".join(rng.choice(WORDS, words)) + "?",
                            tuple(" ".join(rng.choice(WORDS, 4)) for _ in range(4)), gold=0)
            prompt = template.build(item)
            length = len(tokenizer(f"{prompt.system}\n\n{prompt.user}\n{prompt.answer_prefix}")["input_ids"])
            words = max(10, int(words * target_tokens / length))
        prompts.append(prompt)
    return prompts


def _time(backend, prompts, batch: int) -> tuple[float, float]:
    labels = [list("ABCD")] * len(prompts)
    backend.choice_logprobs(prompts[:batch], labels[:batch])  # warm-up
    start = time.perf_counter()
    scores = backend.choice_logprobs(prompts, labels)
    elapsed = time.perf_counter() - start
    errors = sum(s.error is not None for s in scores)
    if errors:
        raise SystemExit(f"{errors} items failed: {next(s.error for s in scores if s.error)}")
    return elapsed, float(np.mean([s.label_mass for s in scores]))


def _report(name: str, n: int, elapsed: float, tokens: float, params: int, peak: float, mass: float) -> None:
    items_s = n / elapsed
    bound = peak * 1e12 / (2 * params * tokens)
    print(f"{name:5s}: {items_s:8.1f} items/s, {items_s * tokens:10.0f} prompt tokens/s, "
          f"{2 * params * tokens * items_s / 1e12:6.1f} TFLOP/s = {items_s / bound:5.1%} of the FLOP bound "
          f"({bound:.0f} items/s at {peak:g} TFLOP/s); mean label mass {mass:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="small model on CPU: a smoke check of the code path")
    ap.add_argument("--items", type=int, default=None, help="default: 2048 (GPU), 32 (--tiny)")
    ap.add_argument("--tokens", type=int, default=250)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--peak-tflops", type=float, default=989.0)
    args = ap.parse_args()
    import torch
    from transformers import LlamaConfig

    device = "cpu" if args.tiny else "cuda:0"
    if not args.tiny and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: run with --tiny for the CPU smoke check")
    n = args.items or (32 if args.tiny else 2048)
    shape = TINY if args.tiny else LLAMA_8B
    dtype = torch.float32 if args.tiny else torch.bfloat16
    tokenizer = build_tokenizer()
    config = LlamaConfig(**shape, eos_token_id=0, pad_token_id=0, bos_token_id=0, tie_word_embeddings=False)
    t = time.perf_counter()
    model = random_llama(config, device, dtype)
    params = sum(p.numel() for p in model.parameters())
    print(f"{'tiny' if args.tiny else '8B-class'} random Llama: {params / 1e9:.2f} B params, {dtype}, {device}; "
          f"built in {time.perf_counter() - t:.1f} s")
    prompts = _prompts(tokenizer, n, args.tokens)
    hf = HFBackend(ModelSpec("hf", "random-llama"), {"device": device, "dtype": str(dtype).removeprefix("torch."),
                                                      "batch_size": args.batch_size, "max_batch_tokens": args.batch_size * 2 * args.tokens},
                   model=model, tokenizer=tokenizer)
    tokens = float(np.mean([len(hf.tokenizer(hf.render(p))["input_ids"]) for p in prompts]))
    print(f"{n} items, {tokens:.0f} prompt tokens per item on average, batch size {args.batch_size}")
    elapsed, mass = _time(hf, prompts, args.batch_size)
    _report("hf", n, elapsed, tokens, params, args.peak_tflops, mass)
    del hf, model
    if args.tiny:
        return
    torch.cuda.empty_cache()
    try:
        import vllm  # noqa: F401
    except ImportError:
        print("vllm : not importable here; skipped")
        return
    from connectors.models.vllm_engine import VLLMBackend

    with tempfile.TemporaryDirectory() as tmp:
        config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        engine = VLLMBackend(ModelSpec("vllm", tmp), {"load_format": "dummy", "dtype": "bfloat16", "max_model_len": 2048,
                                                        "gpu_memory_utilization": 0.85, "chat_template": "never"})
        elapsed, mass = _time(engine, prompts, args.batch_size)
        _report("vllm", n, elapsed, tokens, params, args.peak_tflops, mass)


if __name__ == "__main__":
    main()
