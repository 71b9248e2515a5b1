"""Contamination-audit generation throughput on one GPU: M = 9, n = 100, a random 8B-class Llama.

    python -m bench.gpu_contamination            # one H200: under 5 minutes
    python -m bench.gpu_contamination --tiny     # CPU smoke check of the same code path (seconds)

No download: the model is a Llama-3-8B-shaped configuration (32 layers, hidden 4096, GQA 8 KV
heads, 14,336 MLP) with random weights; its vocabulary is the tests' byte-level BPE (600 tokens,
so every generated id decodes: 6.98 B parameters instead of 8.03 B, the difference being the
embedding and LM-head rows of the 128k vocabulary). With vLLM importable the model runs in the
``vllm`` backend (``load_format="dummy"``: random weights from the saved config); otherwise it is
built on the device in bf16 and handed to the ``hf`` backend, whose per-row seeded sampling
keeps the noisy router slots in shared batches.

The calls are the job's own: ``plan_calls`` on n synthetic 4-option questions (nested design:
1 clean + M noisy router calls and 1 + M worker calls per question), the router rows through
``generate_prompt_batch`` with each row's decoding, then the worker rows built from the router
outputs (``jobs.contamination.run.run_models``), no Ray and no cache. Random weights rarely emit
EOS, so router outputs run to ``--router-tokens`` and worker prompts reach M of them.

Prints, per step and in total: calls/s, generated tokens/s and prompt tokens/s, plus the outcome
categories (a random model answers unparsably: that is expected, the point is the call path).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.contamination.plan import ModelRoles, PlanConfig
from audit.contamination.prompts import PromptSet
from audit.mcqa.items import mcqa_items
from audit.mcqa.prompt import Decoding
from bench.common import random_llama
from connectors.models.batches import generate_prompt_batch
from jobs.common.runtime.manifest import StageTimer
from jobs.contamination.calls import call_rows
from jobs.contamination.run import run_models
from tests.servers.tiny_lm import WORDS, build_tokenizer

LLAMA_8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "max_position_embeddings": 8192, "rope_theta": 500000.0}
TINY = {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "max_position_embeddings": 4096}


def questions(n: int, words: int, seed: int = 0) -> list[dict]:
    """``n`` single-answer 4-option items in the shared item schema, stems of ``words`` words."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        options = [" ".join(rng.choice(WORDS, 3)) + f" {i}-{k}" for k in range(4)]
        items.append({"id": f"q{i:03d}", "benchmark": "bench", "question": " ".join(rng.choice(WORDS, words)) + "?",
                      "passage": None, "instructions": None, "options": options, "gold": [options[i % 4]]})
    return items


def build_backend(args, tokenizer, config):
    """(backend, name): vLLM with dummy weights when importable on a GPU, else hf with an in-memory random model."""
    import torch

    if not args.tiny and args.backend in ("auto", "vllm"):
        try:
            import vllm  # noqa: F401
        except ImportError:
            if args.backend == "vllm":
                raise SystemExit("--backend vllm: vLLM is not importable here") from None
        else:
            from connectors.models.spec import ModelSpec
            from connectors.models.vllm_engine import VLLMBackend

            folder = tempfile.mkdtemp(prefix="random-llama-")
            config.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
            return VLLMBackend(ModelSpec("vllm", folder), {"load_format": "dummy", "dtype": "bfloat16",
                                                           "max_model_len": config.max_position_embeddings,
                                                           "gpu_memory_utilization": 0.85, "chat_template": "never"}), "vllm"

    from connectors.models.hf import HFBackend
    from connectors.models.spec import ModelSpec

    device = "cpu" if args.tiny else "cuda:0"
    dtype = torch.float32 if args.tiny else torch.bfloat16
    model = random_llama(config, device, dtype)
    settings = {"device": device, "dtype": str(dtype).removeprefix("torch."), "batch_size": args.batch_size,
                "max_batch_tokens": args.batch_size * config.max_position_embeddings, "chat_template": "never"}
    return HFBackend(ModelSpec("hf", "random-llama"), settings, model=model, tokenizer=tokenizer), "hf"


def report(name: str, table: pa.Table, seconds: float) -> None:
    done = table.filter(pc.is_null(table.column("error")))
    prompt, generated = (int(pc.sum(done.column(c)).as_py() or 0) for c in ("prompt_tokens", "completion_tokens"))
    print(f"{name:7s}: {table.num_rows:5d} calls in {seconds:7.1f} s = {table.num_rows / seconds:7.2f} calls/s, "
          f"{generated / seconds:9.0f} generated tokens/s, {prompt / seconds:9.0f} prompt tokens/s "
          f"({table.num_rows - done.num_rows} errors, {generated / max(done.num_rows, 1):.0f} generated and "
          f"{prompt / max(done.num_rows, 1):.0f} prompt tokens per call)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="small model on CPU: a smoke check of the code path")
    ap.add_argument("--backend", choices=("auto", "vllm", "hf"), default="auto", help="auto: vllm when importable (default)")
    ap.add_argument("--questions", type=int, default=None, help="default: 100 (GPU), 6 (--tiny)")
    ap.add_argument("--max-routers", type=int, default=9, help="M (default: 9)")
    ap.add_argument("--router-tokens", type=int, default=None, help="longest router output; default: 192 (GPU), 12 (--tiny)")
    ap.add_argument("--worker-tokens", type=int, default=16, help="longest worker answer (default: 16)")
    ap.add_argument("--stem-words", type=int, default=60, help="words per question stem (default: 60)")
    ap.add_argument("--batch-size", type=int, default=64, help="hf batch size (default: 64); vLLM schedules its own")
    args = ap.parse_args()
    import torch
    from transformers import LlamaConfig

    if not args.tiny and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: run with --tiny for the CPU smoke check")
    n = args.questions or (6 if args.tiny else 100)
    router_tokens = args.router_tokens or (12 if args.tiny else 192)
    tokenizer = build_tokenizer()
    config = LlamaConfig(**(TINY if args.tiny else LLAMA_8B), vocab_size=len(tokenizer), eos_token_id=0, pad_token_id=0,
                         bos_token_id=0, tie_word_embeddings=False)
    started = time.perf_counter()
    backend, name = build_backend(args, tokenizer, config)
    h, kv = config.hidden_size, config.num_key_value_heads / config.num_attention_heads
    attention = 2 * h * h + 2 * h * h * kv  # q and o, then k and v (grouped-query)
    params = 2 * config.vocab_size * h + config.num_hidden_layers * (attention + 3 * h * config.intermediate_size)
    print(f"{'tiny' if args.tiny else '8B-class'} random Llama on {name}: about {params / 1e9:.3g} B parameters; ready in "
          f"{time.perf_counter() - started:.1f} s")

    plan = PlanConfig(m=args.max_routers, clean_router=Decoding(max_new_tokens=router_tokens),
                      noisy_router=Decoding(temperature=0.8, top_p=0.95, max_new_tokens=router_tokens),
                      worker=Decoding(max_new_tokens=args.worker_tokens))
    timer = StageTimer()

    def generate(calls):
        return generate_prompt_batch(backend, call_rows(calls))

    items, rejected = mcqa_items(questions(n, args.stem_words))  # run_models takes items, not rows
    assert not rejected, rejected
    done = run_models(items, [ModelRoles("random-llama")], PromptSet.shipped(), plan, generate, timer)
    routers_s, workers_s = timer.seconds["routers_s"], timer.seconds["workers_s"]
    print(f"n = {n} questions, M = {args.max_routers}, nested design: planned {done.plan.counts()}")
    report("routers", done.routers, routers_s)
    report("workers", done.workers, workers_s)
    report("total", pa.concat_tables([done.routers, done.workers]), routers_s + workers_s)
    print("outcomes:", dict(sorted(Counter(done.outcomes["status"]).items())))


if __name__ == "__main__":
    main()
