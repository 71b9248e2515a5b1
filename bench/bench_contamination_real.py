"""``benchaudit contamination`` on a real model, and its ``--outcomes`` re-analysis giving the same statistics.

    python -m bench.bench_contamination_real [--sample 100] [--max-routers 3] [--out runs/bench-contamination-real]
    python -m bench.bench_contamination_real --summary runs/bench-contamination-real/contamination/<run-id>

SmolLM2-135M-Instruct (the project's GGUF fixture, hf backend; ``--model`` for another) is both
the router and the worker, on ``--sample`` questions of the shipped ARC-Challenge test set, r =
1..``--max-routers`` noisy routers (nested design). Both steps run through the real CLI
(``benchaudit contamination``), then ``benchaudit contamination --outcomes <run>/data/outcomes``
re-analyses the outcome table the run wrote with no model call; the script asserts that every
statistic of the two summaries is equal (``STATISTICS``), and prints the per-r table, the
categories and the call accounting as markdown. The router outputs (the clean relays and the
noisy rewrites the worker saw) are in ``<run>/data/calls/`` (``role`` router, ``condition``,
``slot``, ``text``); the response cache under ``<out>/_cache/models`` makes a rerun free.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.bench_landscape_real import _default_model

# every block of summary.json computed from the outcomes (not the run id, mode, inputs or call accounting)
STATISTICS = ("overview", "headline", "table", "per_r", "per_model", "cells", "trend", "reversal", "categories", "missing",
              "status_totals", "significance", "m", "models", "n_questions", "identity_max_residual")


def _cli(args: list[str]) -> Path:
    """One ``benchaudit contamination`` run through the CLI entry point; its run directory."""
    from jobs.cli import main

    out = Path(args[args.index("--out") + 1]) / "contamination"
    before = set(out.iterdir()) if out.exists() else set()
    code = main(["contamination", *args])
    if code != 0:
        raise SystemExit(f"benchaudit contamination failed (exit {code})")
    (made,) = set(out.iterdir()) - before
    return made


def load(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def same_statistics(audit: dict, again: dict) -> list[str]:
    """The blocks of ``STATISTICS`` on which the two summaries differ (empty: identical)."""
    return [k for k in STATISTICS if audit.get(k) != again.get(k)]


def tables(run_dir: Path) -> str:
    summary = load(run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    cells = summary["cells"]
    lines = [f"{summary['n_questions']} questions, M = {summary['m']}, models {summary['models']}; design "
             f"{manifest['design']['design']}; router max tokens {manifest['design']['plan']['clean_router']['max_new_tokens']}",
             "", "| model | r | n | clean accuracy | noisy accuracy | gain | improve | degrade | McNemar p | Holm p |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        lines.append(f"| {c['model']} | {c['r']} | {c['n']} | {c['baseline']:.3f} | {c['accuracy']:.3f} | {c['gain']:+.3f} | "
                     f"{c['improve']} | {c['degrade']} | {c['mcnemar_p']:.3g} | {c['holm_p']:.3g} |")
    trend = summary["trend"]
    if trend:
        lines.append(f"\ntrend of improve - degrade over r: slope {trend['slope']:+.3f} "
                     f"[{trend['low']:+.3f}, {trend['high']:+.3f}]")
    lines.append(f"outcome categories: {json.dumps(summary['status_totals'])}")
    calls = manifest["calls"]
    keys = ("calls", "computed", "cache_hits", "prompt_tokens", "completion_tokens", "empty_outputs", "failed", "timeout")
    for role in ("router", "worker"):
        lines.append(f"{role} calls: {json.dumps({k: calls[role][k] for k in keys})}")
    lines.append(f"stage seconds: {json.dumps({k: round(v, 1) for k, v in manifest['timings'].items() if k.endswith('_s')})}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--max-routers", type=int, default=3)
    ap.add_argument("--router-max-tokens", type=int, default=256, help="longest router output (the job's default: 768)")
    ap.add_argument("--out", default="runs/bench-contamination-real")
    ap.add_argument("--model", default=None, help="router and worker spec (default: the smollm2-135m GGUF fixture)")
    ap.add_argument("--num-cpus", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--summary", default=None, metavar="RUN_DIR", help="print the tables of a finished run; run nothing")
    args = ap.parse_args()
    if args.summary:
        print(tables(Path(args.summary)))
        return
    model = args.model or _default_model()
    t = time.perf_counter()
    audit = _cli(["--worker-model", model, "--router-model", model, "--sample", str(args.sample), "--max-routers",
                  str(args.max_routers), "--router-max-tokens", str(args.router_max_tokens), "--out", args.out,
                  "--num-cpus", str(args.num_cpus), "--actors", "1", "--batch-size", str(args.batch_size)])
    audit_s = time.perf_counter() - t
    t = time.perf_counter()
    again = _cli(["--outcomes", str(audit / "data" / "outcomes"), "--out", args.out])
    again_s = time.perf_counter() - t
    differ = same_statistics(load(audit), load(again))
    assert not differ, f"--outcomes re-analysis differs from the audit on {differ}"
    print(f"audit {audit} in {audit_s:.0f} s; --outcomes re-analysis {again} in {again_s:.1f} s: "
          f"every statistic identical ({', '.join(STATISTICS)})")
    print(f"router outputs (clean relays and noisy rewrites): {audit / 'data' / 'calls'} (role == 'router', column text)")
    print(tables(audit))


if __name__ == "__main__":
    main()
