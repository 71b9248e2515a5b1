"""``--from-lm-eval`` at leaderboard scale: records/s per core and the driver's peak RSS at 100 / 500 / 2,000 models.

    python -m bench.bench_lm_eval_scale [--models 100,500,2000] [--tasks 4] [--items 100] [--cpus 2]

Synthetic logs in lm-eval's real 0.4.3-on layout (``<model>/samples_<task>_<date>.jsonl`` beside
``results_<date>.json``, records as ``EvaluationTracker.save_results_samples`` writes them: sanitised
``arguments``, string ``resps``, ``acc``), MMLU-shaped: ``mmlu_<subject>`` tasks of a ``mmlu`` group, four
single-letter continuations " A".." D". Each model answers from a shared latent item difficulty plus its own
skill, so the per-item sums are not trivial. The largest set is written once and the smaller runs read
hard links to its first models' folders (the same bytes, no copy).

Each size runs ``benchaudit landscape --from-lm-eval`` in a fresh process (so its peak is its own; Ray's
workers are other processes) that prints its own ``ru_maxrss`` at the end: the driver holds the per-item sums
of each benchmark and one small table per model, never the records, so its peak must stay flat in the
number of models (within 1.3x from the smallest to the largest). Records/s per core = records read / wall
seconds of the job / CPUs given to Ray.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATE = "2026-05-13T10-21-33.123456"
LETTERS = " A", " B", " C", " D"


def _record(doc_id: int, subject: str, lls: np.ndarray, gold: int) -> str:
    context = f"The following are multiple choice questions (with answers) about {subject}.\n\nQ{doc_id}?\nA. a\nB. b\nC. c\nD. d\nAnswer:"
    top = int(np.argmax(lls))
    doc = {"question": f"Q{doc_id} of {subject}?", "subject": subject, "choices": ["a", "b", "c", "d"], "answer": gold}
    return json.dumps({
        "doc_id": doc_id, "doc": doc, "target": gold,
        "arguments": {f"gen_args_{i}": {"arg_0": context, "arg_1": c} for i, c in enumerate(LETTERS)},
        "resps": [[[repr(float(x)), str(i == top)]] for i, x in enumerate(lls)],
        "filtered_resps": [[repr(float(x)), str(i == top)] for i, x in enumerate(lls)],
        "filter": "none", "metrics": ["acc"], "doc_hash": "0" * 64, "prompt_hash": "0" * 64, "target_hash": "0" * 64,
        "acc": float(top == gold),
    })


def write_logs(root: Path, models: int, tasks: int, items: int, seed: int = 2026) -> int:
    """``models`` model folders of ``tasks`` MMLU-shaped subtasks x ``items`` documents; returns records written."""
    rng = np.random.default_rng(seed)
    subjects = [f"subject_{t:02d}" for t in range(tasks)]
    gold = rng.integers(0, 4, (tasks, items))
    difficulty = rng.normal(0, 1, (tasks, items))
    for m in range(models):
        folder = root / f"org__model-{m:04d}"
        folder.mkdir(parents=True)
        skill = rng.normal(1.0, 0.7)
        results = {"results": {"mmlu": {"acc,none": 0.0, "alias": "mmlu"}}, "configs": {}, "model_name": f"org/model-{m:04d}",
                   "config": {"model": "hf", "model_args": f"pretrained=org/model-{m:04d}"}}
        for t, subject in enumerate(subjects):
            lls = rng.normal(-6, 1, (items, 4))
            lls[np.arange(items), gold[t]] += 1.5 * (skill - difficulty[t])
            lls = np.minimum(lls, -1e-3)
            task = f"mmlu_{subject}"
            lines = [_record(i, subject, lls[i], int(gold[t, i])) for i in range(items)]
            (folder / f"samples_{task}_{DATE}.jsonl").write_text("\n".join(lines) + "\n")
            acc = float((np.argmax(lls, axis=1) == gold[t]).mean())
            results["results"][task] = {"acc,none": acc, "alias": f"  - {subject}"}
            results["configs"][task] = {"task": task, "output_type": "multiple_choice", "group": "mmlu"}
        (folder / f"results_{DATE}.json").write_text(json.dumps(results))
    return models * tasks * items


def linked_subset(full: Path, dest: Path, models: int) -> Path:
    for folder in sorted(full.iterdir())[:models]:
        (dest / folder.name).mkdir(parents=True)
        for f in folder.iterdir():
            os.link(f, dest / folder.name / f.name)
    return dest


CHILD = """
import resource, sys, time
from jobs.cli import main
t = time.perf_counter()
code = main(["landscape", "--from-lm-eval", sys.argv[1], "--out", sys.argv[2], "--num-cpus", sys.argv[3],
             "--log-level", "warning", "--connect-timeout", "600"])
print("RESULT", code, time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, flush=True)
"""


def run_one(root: Path, out: Path, cpus: int, tries: int = 3) -> tuple[float, int]:
    """One run in a fresh process; a local Ray that did not start (a busy machine) is tried again."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for _ in range(tries):
        done = subprocess.run([sys.executable, "-c", CHILD, str(root), str(out), str(cpus)], env=env, capture_output=True,
                              text=True, check=False)
        if "Ray did not start" not in done.stderr:
            break
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")), None)
    if line is None or line.split()[1] != "0":
        raise SystemExit(f"the run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    _, _, wall, rss = line.split()
    return float(wall), int(rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="100,500,2000")
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args()
    sizes = [int(x) for x in args.models.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench_lm_eval_scale_") as tmp:
        base = Path(tmp)
        t = time.perf_counter()
        per_model = args.tasks * args.items
        write_logs(base / "full", max(sizes), args.tasks, args.items)
        print(f"wrote {max(sizes):,} models x {args.tasks} tasks x {args.items} items ({max(sizes) * per_model:,} records) "
              f"in {time.perf_counter() - t:.0f} s; Ray CPUs {args.cpus}")
        print(f"{'models':>7} {'records':>10} {'wall s':>8} {'records/s/core':>15} {'driver peak RSS MiB':>20}")
        peaks = []
        for n in sizes:
            root = linked_subset(base / "full", base / f"m{n}", n)
            wall, rss = run_one(root, base / f"runs{n}", args.cpus)
            peaks.append(rss)
            print(f"{n:>7,} {n * per_model:>10,} {wall:>8.1f} {n * per_model / wall / args.cpus:>15,.0f} "
                  f"{rss / 2**20:>20,.0f}", flush=True)
        ratio = max(peaks) / min(peaks)
        print(f"driver peak RSS largest / smallest: {ratio:.2f}x ({'flat' if ratio <= 1.3 else 'NOT flat'} within 1.3x)")


if __name__ == "__main__":
    main()
