"""One forward per item (label log-probs at the last position) against lm-eval-style scoring.

    python -m bench.bench_landscape_forward [--items 96] [--options 4] [--layers 4] [--hidden 256]

Both sides run the same randomly initialised Llama (built here and saved like a checkpoint,
then loaded through the ``hf`` backend's own path), on one core, in this process:

- landscape: ``HFBackend.choice_logprobs``: the prompt lists the options and ends in
  ``Answer:``; one sequence per item, logits of the last position only.
- lm-eval style: per option one sequence ``context + " " + option text``, summing the option
  tokens' log-probs (lm-eval's ``loglikelihood`` for ``multiple_choice`` tasks: one sequence per
  option), batched, sorted by length and left-padded the same way. The context is the same
  rendered prompt, so the two differ only in how many sequences they run per item.

Prints items/s of each and their ratio (best of three runs each).
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import torch

from audit.mcqa.prompt import Prompt
from bench.common import pin_one_core
from connectors.models.registry import build_backend
from tests.servers.tiny_lm import WORDS, build_tiny_lm


def _items(n: int, k: int, seed: int = 0) -> list[tuple[str, list[str]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        stem = " ".join(rng.choice(WORDS, 60))
        options = [" ".join(rng.choice(WORDS, 6)) for _ in range(k)]
        out.append((f"Question: {stem}?", options))
    return out


def _landscape_prompts(items, letters):
    return [Prompt("\n".join([stem, *(f"{letters[i]}. {o}" for i, o in enumerate(opts))]), "Answer with the letter only.", "Answer:")
            for stem, opts in items]


def lm_eval_style(model, tokenizer, contexts, items, batch_size: int) -> list[list[float]]:
    """Sum of continuation log-probs per option, one left-padded sequence per option."""
    seqs = []
    for i, (context, (_, options)) in enumerate(zip(contexts, items)):
        ctx = tokenizer(context)["input_ids"]
        for j, option in enumerate(options):
            cont = tokenizer(" " + option, add_special_tokens=False)["input_ids"]
            seqs.append((i, j, ctx, cont))
    order = sorted(range(len(seqs)), key=lambda s: -(len(seqs[s][2]) + len(seqs[s][3])))
    scores = [[0.0] * len(opts) for _, opts in items]
    for start in range(0, len(order), batch_size):
        batch = [seqs[s] for s in order[start:start + batch_size]]
        full = [c + t for _, _, c, t in batch]
        width = max(map(len, full))
        ids = torch.full((len(full), width), tokenizer.pad_token_id)
        mask = torch.zeros((len(full), width), dtype=torch.long)
        for r, s in enumerate(full):
            ids[r, width - len(s):] = torch.tensor(s)
            mask[r, width - len(s):] = 1
        with torch.inference_mode():
            logp = torch.log_softmax(model(input_ids=ids, attention_mask=mask,
                                           position_ids=(mask.cumsum(-1) - 1).clamp(min=0)).logits.float(), -1)
        for r, (i, j, _, cont) in enumerate(batch):
            positions = torch.arange(width - len(cont) - 1, width - 1)
            scores[i][j] = float(logp[r, positions, torch.tensor(cont)].sum())
    return scores


def _best_of(fn, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=96)
    ap.add_argument("--options", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()
    pin_one_core()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_lm(f"{tmp}/model", layers=args.layers, hidden=args.hidden, heads=4, init_range=0.02)
        backend = build_backend(f"hf:{path}", {"batch_size": args.batch_size, "max_batch_tokens": 1 << 20})
        items = _items(args.items, args.options)
        letters = [chr(65 + i) for i in range(args.options)]
        prompts = _landscape_prompts(items, letters)
        labels = [letters] * len(items)
        contexts = [backend.render(p) for p in prompts]
        n_tokens = np.mean([len(backend.tokenizer(c)["input_ids"]) for c in contexts])
        one = _best_of(lambda: backend.choice_logprobs(prompts, labels))
        per_option = _best_of(lambda: lm_eval_style(backend.model, backend.tokenizer, contexts, items, args.batch_size))
    print(f"model: random Llama, {args.layers} layers, hidden {args.hidden}; {args.items} items x {args.options} options; "
          f"landscape prompt {n_tokens:.0f} tokens on average; one core, best of 3")
    print(f"one forward per item (landscape)     : {args.items / one:8.1f} items/s")
    print(f"one sequence per option (lm-eval)    : {args.items / per_option:8.1f} items/s")
    print(f"ratio                                : {per_option / one:8.2f}x")


if __name__ == "__main__":
    main()
