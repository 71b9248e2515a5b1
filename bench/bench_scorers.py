"""Scorer sensitivity on real answers, and the speed of the question-clustered bootstrap.

    python bench/bench_scorers.py [--data-dir ../shared/data]

Part 1 varies real answers and scores variant and original (in process, the science the
``benchaudit scorers`` job distributes): the gold answers of the shipped TruthfulQA (all four
scorers) and of the shipped allennlp DROP fixture, and, when ../shared/data is present, the
answers of three instruction-tuned models to TruthfulQA (HiTZ truthfulqa-multi human review,
English, 100 answers each). Per scorer metric over all transformation types: mean original and
variant score, the paired difference with its 95% question-clustered interval (10,000 replicates,
seed 2026) and the share of pairs whose score changed.
Part 2 times 10,000 bootstrap replicates over 1,000 questions on one core: the whole per-scorer,
per-transformation summary (``summarize_sensitivity``) of a pairs table built from the real
TruthfulQA pairs spread over 1,000 question ids, and a plain clustered mean. Best of three.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from audit.conventions.inventory import american_to_other
from audit.scorers.sensitivity import (
    SensitivityConfig,
    gold_answers_table,
    run_sensitivity,
    summarize_sensitivity,
)
from audit.stats.bootstrap import BootstrapConfig, cluster_bootstrap_mean
from bench.common import pin_one_core
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.scorers import read_gold_references

SAMPLES = Path(__file__).resolve().parents[1] / "connectors" / "samples" / "benchmarks"
ALL = ("drop", "squad", "exact", "truthfulqa")
SHOWN = ("em", "f1", "bleu_acc", "bleu_max", "rouge1_acc", "rougeLsum_acc", "rougeLsum_max")


def show(title: str, result) -> None:
    counts = result.variants.groupby("status").size().to_dict()
    print(f"\n-- {title}: {counts.get('accepted', 0)} accepted variants of {result.pairs['question_id'].nunique()} questions, "
          f"{counts.get('rejected', 0)} rejected --")
    rows = result.summary[(result.summary.transformation_type == "all") & result.summary.metric.isin(SHOWN)]
    for r in rows.itertuples():
        print(f"{r.scorer:>10} {r.metric:<14} original {r.mean_original:6.3f} -> variant {r.mean_variant:6.3f}  "
              f"difference {r.mean_difference:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]  changed {100 * r.share_changed:5.1f}%")


def part_one(data: Path, config: SensitivityConfig) -> pd.DataFrame:
    inventory = american_to_other()
    golds = read_gold_references(BenchmarkSpec(str(SAMPLES / "TruthfulQA.csv"), preset="truthfulqa"))
    truthfulqa = run_sensitivity(gold_answers_table(golds).table, golds, inventory, config, "TruthfulQA gold")
    show("TruthfulQA (817 questions), gold answers", truthfulqa)
    drop = read_gold_references(BenchmarkSpec(str(SAMPLES / "drop_allennlp_fixture.json"), preset="drop"))
    drop_config = SensitivityConfig(ALL[:3], config.variants, config.bootstrap)
    show("DROP allennlp fixture (19 questions), gold answers",
         run_sensitivity(gold_answers_table(drop).table, drop, inventory, drop_config, "DROP gold"))
    hitz = data / "truthfulqa_multi_hitz"
    if hitz.exists():
        golds = read_gold_references(BenchmarkSpec(str(hitz / "truthfulqa_en_validation.json"), preset="truthfulqa"))
        answers = pd.read_csv(hitz / "human_review" / "evaluated" / "en.csv")
        answers[["question_id", "model"]] = answers["id"].str.split("__", expand=True)
        for model, block in answers.groupby("model"):
            table = block[["question_id", "model_answer"]].rename(columns={"model_answer": "answer"})
            show(f"{model} answers to TruthfulQA (HiTZ human review, en)", run_sensitivity(table, golds, inventory, config, model))
    else:
        print(f"\n({hitz} not found: model-output part skipped)")
    return truthfulqa.pairs


def _best(fn, repeats: int = 3) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def part_two(pairs: pd.DataFrame, config: BootstrapConfig, n_questions: int = 1_000) -> None:
    real = sorted(pairs["question_id"].unique())
    blocks = []
    for i in range(n_questions):  # question i carries the real pairs of real question i mod len(real)
        blocks.append(pairs[pairs["question_id"] == real[i % len(real)]].assign(question_id=f"q{i}"))
    spread = pd.concat(blocks, ignore_index=True)
    groups = spread.groupby(["scorer", "metric"]).ngroups * (1 + spread["transformation_type"].nunique())
    print(f"\n== Bootstrap: {config.n_replicates:,} replicates over {n_questions:,} questions, one core ==")
    best, median = _best(lambda: summarize_sensitivity(spread, config))
    print(f"summarize_sensitivity: {len(spread):,} pairs, up to {groups} scorer x metric x type statistics in one pass: "
          f"best {best:.2f} s (median {median:.2f} s); limit 5 s: {'ok' if best < 5 else 'OVER'}")
    values = np.random.default_rng(0).normal(size=n_questions * 3)
    best, median = _best(lambda: cluster_bootstrap_mean(values, np.repeat(np.arange(n_questions), 3), config))
    print(f"cluster_bootstrap_mean: {len(values):,} values in {n_questions:,} questions: best {best:.3f} s (median {median:.3f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--replicates", type=int, default=10_000)
    args = parser.parse_args()
    pin_one_core()
    boot = BootstrapConfig(n_replicates=args.replicates)
    print("== Scorer sensitivity to valid variants (95% question-clustered intervals) ==")
    pairs = part_one(args.data_dir, SensitivityConfig(ALL, bootstrap=boot))
    part_two(pairs, boot)


if __name__ == "__main__":
    main()
