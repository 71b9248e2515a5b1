"""One forward per item against lm-eval's per-option log-likelihood, on the same real model and items.

    python -m bench.bench_landscape_lm_eval [--items 32] [--runs 3] [--batch-size 16] [--out runs/bench-lm-eval]

Needs lm-eval (``pip install .[bench]``). The model is SmolLM2-135M-Instruct, the project's GGUF
fixture, loaded once from its de-quantised copy (``connectors.models.gguf``) through the ``hf``
backend; lm-eval's ``HFLM`` wraps **the same model object and tokenizer**, so both sides run the
same weights in float32 on one pinned core, in this process, alternating, best of ``--runs``.
The items are ``--items`` ARC-Challenge test items drawn by the landscape job's own loader and
seeded hash (the shipped sample). Two lm-eval tasks are written as local task YAMLs over a local
JSONL (``dataset_path: json``, no hub):

- ``ba_letter``: letter style. The context is exactly the prompt ``benchaudit landscape`` sends
  (chat template, options listed, ending in ``Answer:``), the continuations are `` A``, `` B``, ...
  lm-eval's ``HFLM`` groups requests that share a context and have one-token continuations
  (``logits_cache``, on by default) and runs **one forward per context**: the same count as the
  landscape, which here differs only in keeping the last position's logits alone.
- ``ba_arc``: ARC style, lm-eval's own ``arc_challenge`` format: ``Question: ...\\nAnswer:`` and
  each option's text as its continuation, **one sequence per option** (no options in the prompt).

Timed on each side (CPU seconds of this process, which other work on a shared machine barely
changes, and wall seconds): the model step only -- ``HFBackend.choice_logprobs`` (what the landscape's
model actors run) and ``HFLM.loglikelihood`` over the task's requests (built once) -- so neither
side pays for dataset loading, task building or metrics. Then the ``lm_eval`` CLI runs both tasks
with ``--log_samples`` (its own process and model load; kept under ``--out`` and reused by a rerun with
the same ``--items``), ``benchaudit landscape --from-lm-eval``
reads that output, and the script asserts that it reproduces lm-eval's ``acc`` for each task
exactly; on the letter task it also compares lm-eval's per-option log-probs with the landscape's.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from audit.landscape.prompts import load_template
from bench.common import pin_one_core

TASKS = ("ba_letter", "ba_arc")


def _items(n: int, spec: str) -> list:
    """``n`` ARC-Challenge items, drawn as ``benchaudit landscape --sample n`` draws them."""
    from jobs.common.inputs.benchmarks import shipped_mcqa
    from jobs.landscape.config import LandscapeConfig
    from jobs.landscape.inputs import load_benchmark

    cfg = LandscapeConfig(model=[spec], sample=n)
    return load_benchmark(shipped_mcqa().to_spec(), cfg).items


def write_tasks(folder: Path, docs: list[dict]) -> None:
    """The documents as JSONL and one task YAML per style, reading them with ``dataset_path: json``."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "docs.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    common = {"dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data.resolve())}}, "test_split": "test",
              "output_type": "multiple_choice", "doc_to_target": "gold", "target_delimiter": " ",
              "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}]}
    styles = {"ba_letter": {"doc_to_text": "prompt", "doc_to_choice": "letters"},
              "ba_arc": {"doc_to_text": "Question: {{question}}\nAnswer:", "doc_to_choice": "choices"}}
    for task, style in styles.items():
        (folder / f"{task}.yaml").write_text(yaml.safe_dump({"task": task, **common, **style}, sort_keys=False))


def task_requests(folder: Path) -> dict[str, list]:
    """Each task's loglikelihood requests, as lm-eval's evaluator builds them (zero-shot)."""
    from lm_eval.tasks import TaskManager, get_task_dict

    tasks = get_task_dict(list(TASKS), TaskManager(include_path=str(folder)))
    out = {}
    for name, task in tasks.items():
        task.build_all_requests(limit=None, rank=0, world_size=1)
        out[name] = sorted(task.instances, key=lambda r: (r.doc_id, r.idx))
    return out


def run_lm_eval_cli(folder: Path, model_dir: str, batch_size: int, out: Path) -> float:
    """``lm_eval run`` on both tasks with ``--log_samples``; its wall seconds (model load included)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "lm_eval", "run", "--model", "hf", "--model_args", f"pretrained={model_dir},dtype=float32",
           "--device", "cpu", "--include_path", str(folder), "--tasks", ",".join(TASKS), "--log_samples",
           "--output_path", str(out), "--batch_size", str(batch_size)]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - t


def from_lm_eval(samples: Path, out: Path) -> Path:
    """``benchaudit landscape --from-lm-eval`` on lm-eval's output; the run directory."""
    from jobs.cli import main

    runs = out / "landscape"
    before = set(runs.iterdir()) if runs.exists() else set()
    if main(["landscape", "--from-lm-eval", str(samples), "--out", str(out)]) != 0:
        raise SystemExit("benchaudit landscape --from-lm-eval failed")
    (made,) = set(runs.iterdir()) - before
    return made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--out", default="runs/bench-lm-eval")
    args = ap.parse_args()
    import lm_eval
    import torch
    from lm_eval.models.huggingface import HFLM

    from connectors.models.fetch import fetch
    from connectors.models.gguf import transformers_source
    from connectors.models.registry import build_backend

    pin_one_core()
    torch.set_num_threads(1)
    out = Path(args.out)
    gguf = fetch("smollm2-135m")
    _, model_dir = transformers_source(str(gguf))
    spec = f"hf:{gguf}"
    backend = build_backend(spec, {"batch_size": args.batch_size, "max_batch_tokens": 1 << 20})
    template = load_template()
    items = _items(args.items, spec)
    prompts = [template.build(item) for item in items]
    labels = [list(item.labels) for item in items]
    docs = [{"id": item.source_id, "question": item.question, "choices": list(item.options), "letters": list(item.labels),
             "gold": item.gold, "prompt": backend.render(p)} for item, p in zip(items, prompts)]
    folder = out / "tasks"
    write_tasks(folder, docs)
    requests = task_requests(folder)
    lm = HFLM(pretrained=backend.model, tokenizer=backend.tokenizer, batch_size=args.batch_size)

    def tokens(texts: list[str]) -> float:
        return float(np.mean([len(backend.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]))

    sides = {
        "benchaudit landscape (letters, one forward per item)": lambda: backend.choice_logprobs(prompts, labels),
        "lm-eval ba_letter (letters as continuations)": lambda: lm.loglikelihood(requests["ba_letter"], disable_tqdm=True),
        "lm-eval ba_arc (option texts as continuations)": lambda: lm.loglikelihood(requests["ba_arc"], disable_tqdm=True),
    }
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    answers: dict[str, object] = {}
    for run in range(args.runs):
        order = list(sides)[run % len(sides):] + list(sides)[:run % len(sides)]  # rotate who goes first
        for name in order:
            t, c = time.perf_counter(), time.process_time()
            answers[name] = sides[name]()
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    n = len(items)
    ours, letter_name, arc_name = list(sides)
    arc_ctx = [r.args[0] for r in requests["ba_arc"]]
    print(f"model: SmolLM2-135M-Instruct ({gguf.name}, de-quantised, float32), lm_eval {lm_eval.__version__}; {n} ARC-Challenge "
          f"items, {sum(len(x) for x in labels)} options; one pinned core, one torch thread; batch size {args.batch_size}; "
          f"best of {args.runs}, alternating")
    print(f"tokens per sequence: landscape prompt {tokens([d['prompt'] for d in docs]):.0f}; ba_arc context "
          f"{tokens(arc_ctx):.0f} (+ option)")
    print("\nCPU seconds of this process (robust to other work on the machine) and wall seconds, best of each:")
    print("\n| side | sequences | best CPU s | items per CPU s | ratio (CPU) | best wall s | items/s (wall) | ratio (wall) |\n"
          "|---|---|---|---|---|---|---|---|")
    for name in sides:
        seqs = n if name != arc_name else len(requests["ba_arc"])
        c, w = min(cpu[name]), min(wall[name])
        print(f"| {name} | {seqs} | {c:.1f} | {n / c:.2f} | {c / min(cpu[ours]):.2f}× | {w:.1f} | {n / w:.2f} | "
              f"{w / min(wall[ours]):.2f}× |")
    print("wall s:", {k: [round(x, 1) for x in v] for k, v in wall.items()})
    print("CPU s:", {k: [round(x, 1) for x in v] for k, v in cpu.items()})

    # the letter task scores the landscape's own prompt and letters: the same log-probs, up to padding arithmetic
    lm_letter = np.array([ll for ll, _ in answers[letter_name]])
    ours_lp = np.concatenate([np.array(s.logprobs) for s in answers[ours]])
    print(f"\nletter task: |lm-eval log-prob - landscape log-prob| max {np.abs(lm_letter - ours_lp).max():.2e} over "
          f"{len(ours_lp)} options")
    splits = np.cumsum([len(x) for x in labels])[:-1]
    agree = np.mean([np.argmax(a) == np.argmax(b) for a, b in zip(np.split(lm_letter, splits), np.split(ours_lp, splits))])
    print(f"letter task: same predicted option on {agree:.1%} of items")

    if any((out / "lm-eval").rglob("samples_ba_*.jsonl")):  # the same items and tasks give the same output
        print(f"\nlm_eval CLI output reused from {out / 'lm-eval'} (delete it to run the CLI again)")
    else:
        seconds = run_lm_eval_cli(folder, model_dir, args.batch_size, out / "lm-eval")
        print(f"\nlm_eval CLI, both tasks, --log_samples: {seconds:.0f} s wall (its own model load included)")
    run_dir = from_lm_eval(out / "lm-eval", out)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    table = {r["benchmark"]: r for r in summary["table"] if r["perturbation"] == "none"}
    for r in manifest["lm_eval"]["runs"]:
        ours_acc, theirs = table[r["task"]]["accuracy"], r["acc"]["lm_eval"]
        assert ours_acc == theirs, f"{r['task']}: --from-lm-eval accuracy {ours_acc} != lm-eval acc {theirs}"
        print(f"--from-lm-eval {r['task']}: accuracy {ours_acc:.4f} == lm-eval acc,none {theirs:.4f} ({r['rows']} documents)")
    print(f"--from-lm-eval run: {run_dir}")


if __name__ == "__main__":
    main()
