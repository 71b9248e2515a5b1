"""Convention audit on real benchmarks, and detection throughput on one core.

    python bench/bench_conventions.py [--data-dir ../shared/data] [--items 100000]

Part 1 prints, for TruthfulQA, ARC-Challenge, CommonsenseQA and HellaSwag from the shared data:
coverage, American share and the share excluding spelling, each with a 95% item-bootstrap
interval (10,000 replicates, seed 2026), next to the reference study's TruthfulQA figures.
Part 2 times detection over >= 100,000 real items (TruthfulQA and ARC repeated) in one process
pinned to one core, with Arrow's thread pool at 1: the detector alone and the whole stage
(detect, label, count). The best of three passes is reported (the machine is shared).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from audit.conventions.detect import DetectorConfig
from audit.conventions.inventory import load_inventory
from audit.conventions.metrics import BenchmarkSummary, merge_counts, summarize
from audit.conventions.stage import ConventionStage
from audit.stats.bootstrap import BootstrapConfig
from connectors.benchmarks.read import read_benchmark
from connectors.benchmarks.spec import BenchmarkSpec

BENCHMARKS = (
    ("truthfulqa", "truthfulqa/TruthfulQA.csv"),
    ("arc", "arc_challenge/arc_challenge_test.jsonl"),
    ("commonsenseqa", "commonsenseqa/dev_rand_split.jsonl"),
    ("hellaswag", "hellaswag/hellaswag_val_full.txt.bz2"),
)
REFERENCE_TRUTHFULQA = {"coverage": 0.0759, "american_share": 0.944, "excl_spelling": 0.905}
FLOOR_ITEMS_PER_S = 50_000


def _pct(value: float, low: float | None = None, high: float | None = None) -> str:
    text = f"{100 * value:5.1f}%"
    return text if low is None else f"{text} [{100 * low:5.1f}, {100 * high:5.1f}]"


def audit(items: pa.Table, config: DetectorConfig, boot: BootstrapConfig) -> BenchmarkSummary:
    result = ConventionStage(config).process(items)
    return summarize(merge_counts([result.counts]), result.labels, boot)[0]


def print_summary(name: str, s: BenchmarkSummary) -> None:
    cats = ", ".join(f"{c} {b.american}/{b.other}" for c, b in s.by_category.items() if b.american or b.other)
    print(f"{name:<22} items {s.n_items:>6}  coverage {_pct(s.coverage, s.coverage_ci.low, s.coverage_ci.high)}"
          f"  American share {_pct(s.american_share, s.share_ci.low, s.share_ci.high)}"
          f"  excl. spelling {_pct(s.american_share_excl_spelling, s.share_excl_spelling_ci.low, s.share_excl_spelling_ci.high)}"
          f"  skew {s.skew:+.3f}")
    print(f"{'':<22} signals A/O {s.n_american}/{s.n_other} ({cats}); ambiguous {s.n_ambiguous}, "
          f"neutral {s.n_neutral}; labels {s.labels}")


def part_one(data: Path, boot: BootstrapConfig) -> dict[str, pa.Table]:
    tables = {}
    print("== Convention signals on real benchmarks (95% item-bootstrap intervals) ==")
    for preset, path in BENCHMARKS:
        items = read_benchmark(BenchmarkSpec(str(data / path), preset=preset))
        tables[preset] = items
        print_summary(preset, audit(items, DetectorConfig(), boot))
    lexical = audit(tables["truthfulqa"], DetectorConfig(include_lexical=True), boot)
    print_summary("truthfulqa +lexical", lexical)
    ref = REFERENCE_TRUTHFULQA
    print(f"{'reference (TruthfulQA)':<22} coverage {_pct(ref['coverage'])}  American share "
          f"{_pct(ref['american_share'])}  excl. spelling {_pct(ref['excl_spelling'])}")
    start = time.perf_counter()
    audit(tables["hellaswag"], DetectorConfig(), boot)
    print(f"(whole HellaSwag stage + {boot.n_replicates:,}-replicate bootstrap: {time.perf_counter() - start:.2f} s)")
    return tables


def _best(run, repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def part_two(tables: dict[str, pa.Table], n_items: int, batch_size: int, repeats: int) -> None:
    base = pa.concat_tables([tables["truthfulqa"], tables["arc"]])
    copies = -(-n_items // base.num_rows)
    items = pa.concat_tables([base] * copies).combine_chunks()
    batches = items.to_batches(max_chunksize=batch_size)
    chars = sum(pc.sum(pc.utf8_length(items.column(c))).as_py() or 0 for c in ("question",))
    chars += sum(pc.sum(pc.utf8_length(pc.list_flatten(items.column(c)))).as_py() or 0 for c in ("options", "gold"))
    print(f"\n== Detection throughput: {items.num_rows:,} items (TruthfulQA + ARC x {copies}), "
          f"{chars / items.num_rows:.0f} characters/item, batches of {batch_size:,}, one core ==")
    load_inventory.cache_clear()
    start = time.perf_counter()
    stage = ConventionStage()
    print(f"set-up (load the inventory CSV, build the automaton): {time.perf_counter() - start:.3f} s")
    for label, run in (
        ("detector", lambda: [stage.detector(b) for b in batches]),
        ("stage (detect+label+count)", lambda: merge_counts([stage.process(b).counts for b in batches])),
    ):
        best, median = _best(run, repeats)
        rate = items.num_rows / best
        verdict = "ok" if rate >= FLOOR_ITEMS_PER_S else "BELOW FLOOR"
        print(f"{label:<28} best {best:.2f} s = {rate:,.0f} items/s per core "
              f"(median {items.num_rows / median:,.0f}); floor {FLOOR_ITEMS_PER_S:,}: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=16_384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--replicates", type=int, default=10_000)
    args = parser.parse_args()
    if not (args.data_dir / "truthfulqa" / "TruthfulQA.csv").exists():
        raise SystemExit(f"{args.data_dir}: no truthfulqa/TruthfulQA.csv; pass --data-dir")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    pa.set_cpu_count(1)
    tables = part_one(args.data_dir, BootstrapConfig(n_replicates=args.replicates))
    part_two(tables, args.items, args.batch_size, args.repeats)


if __name__ == "__main__":
    main()
