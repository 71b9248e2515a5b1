"""The whole geo job from local Parquet, on a local Ray: throughput, start-up and peak memory.

    .venv/bin/python bench/bench_geo_job.py [--sizes 1000000 5000000] [--cpus 2]

For each corpus size it writes (once, cached under bench/out/) Parquet files of real captions
(the shipped COCO + CC3M repeated and shuffled, no dictionary encoding, 250k-row row groups),
runs ``benchaudit geo`` on them in a fresh local Ray, and prints: wall time including Ray
start-up, Ray start-up alone, scan wall time, steady-state captions/s per core (rows finished
between the first and the last shard, over that time, per CPU), and the peak resident memory of
the driver plus all Ray processes. Memory staying flat between sizes is the point of the scan
design: nothing row-sized reaches the driver.
"""
from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench.common import PeakRSS, repeated_shuffled

OUT = Path(__file__).resolve().parent / "out"


def make_corpus(rows: int, files: int = 10) -> Path:
    d = OUT / f"captions_{rows}"
    if (d / "_DONE").exists():
        return d
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    per = rows // files
    for i in range(files):
        text = repeated_shuffled(per, seed=1000 + i)
        url = pa.array([f"http://img{j % 97}.example.{('com', 'co.uk', 'jp', 'de', 'fr')[j % 5]}/{j}.jpg" for j in range(per)])
        pq.write_table(pa.table({"text": text, "url": url}), d / f"part-{i:03d}.parquet", row_group_size=250_000,
                       use_dictionary=False, compression="zstd")
    (d / "_DONE").touch()
    return d


def run_once(path: Path, cpus: int, profile: str = "paper") -> dict:
    import ray

    from jobs.common.config import RunOptions
    from jobs.geo.config import CorpusConfig, GeoConfig
    from jobs.geo.run import run

    cfg = GeoConfig(corpus=[CorpusConfig(name="bench", paths=[str(path)], preset="datacomp", id="")],
                    bootstrap=0, shard_rows=250_000, lexicon_profile=profile)
    out = OUT / "runs"
    shutil.rmtree(out, ignore_errors=True)
    t = time.monotonic()
    with PeakRSS() as mem:
        run_dir = run(cfg, RunOptions(out=str(out), num_cpus=cpus))
    wall = time.monotonic() - t
    ray.shutdown()
    m = json.loads((Path(run_dir) / "manifest.json").read_text())
    samples = [s for s in m["timings"]["progress"] if s["shards"] > 0]
    first, last = samples[0], samples[-1]
    steady = (last["rows"] - first["rows"]) / (last["t_s"] - first["t_s"]) if last["t_s"] > first["t_s"] else float("nan")
    return {
        "rows": m["rows"]["in"], "shards": m["shards"]["total"], "wall_s": wall, "ray_init_s": m["timings"]["ray_init_s"],
        "scan_s": m["timings"]["scan_s"], "steady_per_core": steady / cpus, "scan_per_core": m["timings"]["scan_rows_per_s"] / cpus,
        "peak_rss_mib": mem.peak / 2**20,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--lexicon-profile", default="paper", choices=["paper", "extended", "gazetteer"])
    args = ap.parse_args()
    print(f"benchaudit geo ({args.lexicon_profile} lexicon) on local Parquet, local Ray with {args.cpus} CPUs")
    print(f"{'captions':>10} {'shards':>6} {'wall s':>7} {'ray init s':>10} {'scan s':>7} {'steady/core':>12} {'scan/core':>10} "
          f"{'peak RSS MiB':>12}")
    for size in args.sizes:
        r = run_once(make_corpus(size), args.cpus, args.lexicon_profile)
        print(f"{r['rows']:>10,} {r['shards']:>6} {r['wall_s']:>7.1f} {r['ray_init_s']:>10.1f} {r['scan_s']:>7.1f} "
              f"{r['steady_per_core']:>12,.0f} {r['scan_per_core']:>10,.0f} {r['peak_rss_mib']:>12,.0f}")


if __name__ == "__main__":
    main()
