"""The seed paper's landscape tables on a real model: ``benchaudit landscape`` on the shipped samples.

    python -m bench.bench_landscape_real [--sample 250] [--out runs/bench-landscape-real] [--model hf:PATH]
    python -m bench.bench_landscape_real --summary runs/bench-landscape-real/landscape/<run-id>   # print only

Runs the real CLI (``benchaudit landscape``, nothing computed here that the job does not compute)
on ARC-Challenge, CommonsenseQA (standardised to four options), HellaSwag and MMLU (the 57
MMLU-Redux subject files, which are also the ``--reference`` expert labels), ``--sample`` items
each (the paper used 1,000: ``--sample 1000``), under every perturbation, with SmolLM2-135M-Instruct
(the project's GGUF fixture, fetched when missing) unless ``--model`` names another. The response
cache under ``<out>/_cache/models`` makes a rerun, or a larger ``--sample`` (the seeded hash draw of
n items contains the draw of fewer), repeat no forward pass: keep the same ``--out``.

Prints one markdown table per view: accuracy per perturbation; per benchmark the relative
no-answer drop, mean Ptop1 and Hnorm, MPD, the flagged-item count and (MMLU) precision/recall of
the flags against the expert labels. The job's MPD is exact below 50,000 items (no interval);
the interval printed beside it is a percentile bootstrap over the items (seeded, 1,000
replicates), computed here from the job's own points, so two benchmarks' MPDs can be compared.
"""
from __future__ import annotations

import argparse
import json
import time
from importlib import resources
from pathlib import Path

import numpy as np

from audit.landscape.mpd import mpd_exact
from audit.stats.bootstrap import BootstrapConfig, resample_indices

BENCHMARKS = {"arc": ("arc", "arc_challenge_test.jsonl"), "csqa": ("commonsenseqa", "commonsenseqa_dev.jsonl"),
              "hellaswag": ("hellaswag", "hellaswag_val.txt.bz2"), "mmlu": ("mmlu", "mmlu_redux")}
PERTURBATIONS = ["none", "noise", "mask", "no_answer", "score_bias", "answer_a", "answer_d", "circular"]
# the reference paper (the MPD values and the no-answer relative accuracy drops it reports)
PAPER_MPD = {"arc": 0.404, "mmlu": 0.479}
PAPER_NO_ANSWER_DROP = {"mmlu": 0.716, "csqa": 0.612, "arc": 0.554, "hellaswag": 0.502}
REPLICATES = 1000


def _samples() -> Path:
    return Path(str(resources.files("connectors") / "samples" / "benchmarks"))


def _default_model() -> str:
    from connectors.models.fetch import fetch

    return f"hf:{fetch('smollm2-135m')}"


def run_landscape(model: str, sample: int, out: str, seed: int | None, num_cpus: int, batch_size: int) -> Path:
    """``benchaudit landscape`` through its CLI entry point; returns the run directory."""
    from jobs.cli import main

    root = _samples()
    args = ["landscape", "--model", model, "--sample", str(sample), "--perturbations", ",".join(PERTURBATIONS),
            "--reference", str(root / "mmlu_redux"), "--out", out, "--num-cpus", str(num_cpus), "--actors", "1",
            "--batch-size", str(batch_size)]
    for name, (preset, path) in BENCHMARKS.items():
        args += ["--benchmark", f"{name}:{preset}:{root / path}"]
    if seed is not None:
        args += ["--seed", str(seed)]
    runs = Path(out) / "landscape"
    before = set(runs.iterdir()) if runs.exists() else set()
    code = main(args)
    if code != 0:
        raise SystemExit(f"benchaudit landscape failed (exit {code})")
    (made,) = set(runs.iterdir()) - before
    return made


def bootstrap_mpd(points: list[list[float]], seed: int) -> tuple[float, float]:
    """95% percentile interval of the MPD over items resampled with replacement."""
    pts = np.asarray(points, dtype=float)
    values = [mpd_exact(pts[idx]) for chunk in resample_indices(len(pts), BootstrapConfig(REPLICATES, seed, 0.95))
              for idx in chunk]
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def _num(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def tables(run_dir: Path) -> str:
    """The markdown tables of a finished run's summary.json and manifest.json."""
    summary = json.loads((run_dir / "summary.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (model,) = summary["overview"]["models"]
    rows = {(r["benchmark"], r["perturbation"]): r for r in summary["table"] if r["model"] == model}
    benches = [b for b in BENCHMARKS if (b, "none") in rows]
    seed = manifest["seeds"]["mpd"]
    lines = [f"model `{model}`; {summary['overview']['items']} items per benchmark; flags from "
             f"`{summary['flags']['from']}` (an item is flagged when the model misses it under noise injection)", "",
             "| benchmark | " + " | ".join(PERTURBATIONS) + " |", "|---" * (len(PERTURBATIONS) + 1) + "|"]
    for b in benches:
        lines.append(f"| {b} | " + " | ".join(_pct(rows.get((b, p), {}).get("accuracy")) for p in PERTURBATIONS) + " |")
    checked = {v["benchmark"]: v for v in summary["validation"] if v.get("chosen")}
    flagged = summary["overview"]["review_candidates"]
    lines += ["", "| benchmark | items | chance | no-answer relative drop (paper) | mean Ptop1 | mean Hnorm | mean label mass "
                  "| MPD [95% bootstrap] (paper) | flagged | flags vs expert labels: precision / recall (expert-flagged) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for b in benches:
        none = rows[(b, "none")]
        drop = rows.get((b, "no_answer"), {}).get("relative_change")
        low, high = bootstrap_mpd(summary["points"][b]["models"][model], seed)
        paper_mpd = f" ({PAPER_MPD[b]:.3f})" if b in PAPER_MPD else ""
        v = checked.get(b)
        check = "—"
        if v and v["n_matched"]:  # only MMLU items match the MMLU-Redux reference
            check = (f"{_num(v['precision'])} / {_num(v['recall'])} ({v['true_positives']} of {v['n_flagged']} flagged "
                     f"are among the {v['n_expert_bad']} expert-flagged of {v['n_matched']} matched)")
        lines.append(f"| {b} | {none['n_items']} | {_pct(1 / 4)} | {_pct(-drop if drop is not None else None)} "
                     f"({_pct(PAPER_NO_ANSWER_DROP[b])}) | {none['mean_ptop1']:.3f} | {none['mean_hnorm']:.3f} | "
                     f"{none.get('mean_label_mass', float('nan')):.3f} | {none['mpd']:.3f} [{low:.3f}, {high:.3f}]{paper_mpd} | "
                     f"{flagged.get(b, 0)} | {check} |")
    calls = manifest["models"][model]["calls"]
    lines += ["", f"model calls: {json.dumps({k: calls[k] for k in ('cache_hits', 'computed') if k in calls})}; "
                  f"stage seconds: {json.dumps({k: round(v, 1) for k, v in manifest['timings'].items() if k.endswith('_s')})}"]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sample", type=int, default=250, help="items per benchmark (the paper: 1000)")
    ap.add_argument("--out", default="runs/bench-landscape-real", help="keep it across reruns: its _cache/ holds every answer")
    ap.add_argument("--model", default=None, help="a model spec (default: the smollm2-135m GGUF fixture, hf backend)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--num-cpus", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--summary", default=None, metavar="RUN_DIR", help="print the tables of a finished run; run nothing")
    args = ap.parse_args()
    if args.summary:
        run_dir = Path(args.summary)
    else:
        t = time.perf_counter()
        run_dir = run_landscape(args.model or _default_model(), args.sample, args.out, args.seed, args.num_cpus, args.batch_size)
        print(f"run {run_dir} in {time.perf_counter() - t:.0f} s")
    print(tables(run_dir))


if __name__ == "__main__":
    main()
