"""The whole conventions job from local Parquet, on a local Ray: throughput, start-up and memory.

    python -m bench.bench_conventions_job [--items 100000 1000000] [--cpus 2] [--data-dir ../shared/data]

For each size it writes (once, cached under bench/out/) Parquet files of real items (the shipped
TruthfulQA plus ARC-Challenge from ../shared/data, repeated with fresh ids, in the item schema),
runs ``benchaudit conventions`` on them in a fresh local Ray with a 10,000-replicate bootstrap, and
prints: wall time including Ray start-up, Ray start-up alone, scan wall time, items/s per core over
the scan, the aggregate step (labels read back + bootstrap) and the peak resident memory of the
driver plus all Ray processes.
"""
from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.common import ProcessWatch
from connectors.benchmarks.read import read_benchmark
from connectors.benchmarks.spec import BenchmarkSpec

OUT = Path(__file__).resolve().parent / "out"
SAMPLES = Path(__file__).resolve().parents[1] / "connectors" / "samples" / "benchmarks"


def make_items(n: int, data: Path, files: int = 8) -> Path:
    d = OUT / f"items_{n}"
    if (d / "_DONE").exists():
        return d
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    parts = [read_benchmark(BenchmarkSpec(str(SAMPLES / "TruthfulQA.csv"), preset="truthfulqa"))]
    arc = data / "arc_challenge" / "arc_challenge_test.jsonl"
    if arc.exists():
        parts.append(read_benchmark(BenchmarkSpec(str(arc), preset="arc")))
    base = pa.concat_tables(parts).combine_chunks()
    copies = -(-n // base.num_rows)
    table = pa.concat_tables([base] * copies).slice(0, n).combine_chunks()
    table = table.set_column(0, "id", pc.cast(pa.array(range(n)), pa.string()))
    per = -(-n // files)
    for i in range(files):
        pq.write_table(table.slice(i * per, per), d / f"part-{i:03d}.parquet", compression="zstd")
    (d / "_DONE").touch()
    return d


def run_once(path: Path, cpus: int) -> dict:
    import ray

    from jobs.common.cli.config import RunOptions
    from jobs.common.inputs.benchmarks import BenchmarkConfig
    from jobs.conventions.config import ConventionsConfig
    from jobs.conventions.run import run

    cfg = ConventionsConfig(benchmark=[BenchmarkConfig(name="bench", paths=[str(path)], question="question", id="id",
                                                        options="options", gold="gold")], shard_rows=50_000)
    out = OUT / "runs"
    shutil.rmtree(out, ignore_errors=True)
    start = time.monotonic()
    with ProcessWatch() as mem:
        run_dir = run(cfg, RunOptions(out=str(out), num_cpus=cpus))
    wall = time.monotonic() - start
    ray.shutdown()
    m = json.loads((Path(run_dir) / "manifest.json").read_text())
    t = m["timings"]
    return {"items": m["rows"]["in"], "shards": m["shards"]["total"], "wall_s": wall, "ray_init_s": t["ray_init_s"],
            "scan_s": t["scan_s"], "per_core": m["rows"]["in"] / t["scan_s"] / cpus, "aggregate_s": t["aggregate_s"],
            "peak_rss_mib": mem.peak / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    args = ap.parse_args()
    print(f"benchaudit conventions on local Parquet (TruthfulQA + ARC items), local Ray with {args.cpus} CPUs")
    print(f"{'items':>10} {'shards':>6} {'wall s':>7} {'ray init s':>10} {'scan s':>7} {'items/s/core':>12} "
          f"{'aggregate s':>11} {'peak RSS MiB':>12}")
    for n in args.items:
        r = run_once(make_items(n, args.data_dir), args.cpus)
        print(f"{r['items']:>10,} {r['shards']:>6} {r['wall_s']:>7.1f} {r['ray_init_s']:>10.1f} {r['scan_s']:>7.1f} "
              f"{r['per_core']:>12,.0f} {r['aggregate_s']:>11.2f} {r['peak_rss_mib']:>12,.0f}")


if __name__ == "__main__":
    main()
