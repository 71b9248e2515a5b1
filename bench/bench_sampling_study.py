"""Bench: the 500-draw sampler study on a synthetic 1M-target table (issue 4, HT-Coreset).

The table mimics the AMLworld setting: ~0.1% positives, two scorer families (a, b) with 5 seeds
each that share a latent risk, so the held-out family's false positives mostly land among the
construction family's hard negatives. Cases:

- a->b and b->a: strata from one family's mean score, predictions from the other (as published);
- a->scattered: family b's predictions plus false alarms spread over the easy pool, the way an
  LLM unrelated to the scorer behaves; it shows what dropping the weights costs.

Prints the sampler-study table, checks that HT-Coreset has the lowest F1 RMSE among the HT
samplers in the held-out directions, and reports wall time and rows/s (floor: <= 60 s for three
samplers on 1M targets). Run: ``python bench/bench_sampling_study.py [--targets N] [--draws K]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from audit.sampling.design import DesignConfig, build_design
from audit.sampling.percentile import percentiles_over_blocks
from audit.sampling.strata import easy_difficulty
from audit.sampling.study import HeldOutCase, StudyConfig, run_study, study_protocol

HT_SAMPLERS = ("uniform_ht", "difficulty_ht", "ht_coreset")
TAU = 0.5


def synthetic_families(n: int, seed: int, runs: int = 5) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Labels (prevalence 0.1%) and, per family, (n, runs) probabilities from a shared latent risk."""
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.001
    risk = rng.normal(0.0, 1.0, n) + 4.0 * labels
    families = {}
    for name in ("a", "b"):
        base = risk + 0.2 * rng.normal(0.0, 1.0, n)  # family-specific view of the features
        families[name] = np.column_stack(
            [1.0 / (1.0 + np.exp(-4.0 * (base + 0.08 * rng.normal(0.0, 1.0, n) - 3.7))) for _ in range(runs)]
        )
    return labels, families


def build_cases(n: int, seed: int) -> list[HeldOutCase]:
    labels, fam = synthetic_families(n, seed)
    rng = np.random.default_rng(seed + 1)
    scattered = (fam["b"] >= TAU) | (rng.random(fam["b"].shape) < 0.002)
    return [
        HeldOutCase("synthetic-1M", "a->b", labels, fam["a"].mean(axis=1), TAU, fam["b"] >= TAU),
        HeldOutCase("synthetic-1M", "b->a", labels, fam["b"].mean(axis=1), TAU, fam["a"] >= TAU),
        HeldOutCase("synthetic-1M", "a->scattered", labels, fam["a"].mean(axis=1), TAU, scattered),
    ]


def bench_design_build(case: HeldOutCase) -> None:
    """In-memory design build and the refinement percentile path, for the Ray job's baseline."""
    ids = np.arange(len(case.labels))
    start = time.perf_counter()
    design, manifest = build_design(ids, case.labels, case.construction_score, DesignConfig(tau=TAU))
    build_s = time.perf_counter() - start
    pool = easy_difficulty(case.labels, case.construction_score, manifest.hard_cut)
    start = time.perf_counter()
    bounds = percentiles_over_blocks(np.array_split(pool, 100), manifest.easy_percentiles)
    refine_s = time.perf_counter() - start
    assert np.array_equal(bounds, np.percentile(pool, manifest.easy_percentiles))
    n = len(ids)
    print(
        f"design build (in memory, 1 process): {n:,} targets in {build_s:.2f} s = {n / build_s:,.0f} targets/s; "
        f"coreset {len(design):,} rows ({n / len(design):.0f}x smaller); strata N_h={list(manifest.population)} "
        f"n_h={list(manifest.sample)}"
    )
    print(
        f"exact percentile refinement over 100 blocks: {len(pool):,} values in {refine_s:.2f} s "
        f"= {len(pool) / refine_s:,.0f} values/s, equal to np.percentile: True"
    )


def f1_table(summary: pd.DataFrame) -> pd.DataFrame:
    f1 = summary[summary["metric"] == "f1"].copy()
    cols = ["truth", "signed_bias", "mae", "rmse", "sd", "mean_width95"]
    f1[cols] = f1[cols] * 100  # percentage points, for the report only
    f1 = f1.rename(columns={c: f"{c}_pp" for c in cols})
    pp = [f"{c}_pp" for c in cols]
    return f1[["direction", "sampler", *pp, "coverage95", "coverage_mcse", "wald_coverage95"]].round(3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=20260930)
    parser.add_argument("--out", type=Path, default=None, help="write protocol.json then summary.csv here")
    args = parser.parse_args()

    start = time.perf_counter()
    cases = build_cases(args.targets, args.seed)
    print(
        f"synthetic table: {args.targets:,} targets, {int(cases[0].labels.sum()):,} positives, "
        f"5 runs per family, generated in {time.perf_counter() - start:.1f} s"
    )
    bench_design_build(cases[0])

    config = StudyConfig(draws=args.draws)
    protocol = study_protocol(config, cases)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "protocol.json").write_text(json.dumps(protocol, indent=2))

    three = StudyConfig(draws=args.draws, samplers=HT_SAMPLERS)
    start = time.perf_counter()
    run_study(three, cases[:1])
    floor_s = time.perf_counter() - start
    draws_total = args.draws * len(HT_SAMPLERS)
    print(
        f"\nfloor check: {args.draws}-draw study, 3 samplers, {args.targets:,} targets: {floor_s:.2f} s "
        f"({'PASS' if floor_s <= 60 else 'FAIL'} <= 60 s); {args.targets / floor_s:,.0f} targets/s; "
        f"{args.targets * draws_total / floor_s:,.0f} target-draws/s simulated"
    )

    start = time.perf_counter()
    summary, _ = run_study(config, cases)
    all_s = time.perf_counter() - start
    print(f"full study: {len(cases)} cases x {len(config.samplers)} samplers x {args.draws} draws in {all_s:.2f} s")
    if args.out:
        summary.to_csv(args.out / "summary.csv", index=False)

    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    print("\nF1 by sampler (_pp columns in percentage points; coverage as a fraction):")
    print(f1_table(summary).to_string(index=False))

    ok = True
    for direction in ("a->b", "b->a"):
        f1 = summary[(summary["metric"] == "f1") & (summary["direction"] == direction)].set_index("sampler")
        best = f1.loc[list(HT_SAMPLERS), "rmse"].idxmin()
        ok &= best == "ht_coreset"
        print(f"{direction}: lowest F1 RMSE among HT samplers: {best} ({'PASS' if best == 'ht_coreset' else 'FAIL'})")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mib:,.0f} MiB")
    return 0 if ok and floor_s <= 60 else 1


if __name__ == "__main__":
    sys.exit(main())
