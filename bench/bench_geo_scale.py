"""The geo job at 1M, 10M and 100M captions on a local Ray: how its cost grows with the corpus.

    .venv/bin/python -m bench.bench_geo_scale [--sizes 1 10 100] [--profile paper] [--cpus 2] [--keep]

The corpus is ``bench.bench_geo_job``'s: files of 1M DataComp-shaped rows of real captions (uid,
url, text; zstd Parquet, 250k-row row groups), written where missing (100M rows: 100 files, about
4 GB) and deleted afterwards unless ``--keep``. Each size (millions of rows) runs the job over the
first files on a fresh local Ray and prints: steady-state captions/s per core, wall and scan
time, time from the command's start to its first progress line, peak resident memory of the
driver and of Ray's processes (raylet, object store, workers; each process's own peak, summed: an
upper bound of their peak together), and the object-store spill; and the
steady state's captions per CPU second of all the job's processes, which neighbours' load moves
less than the wall-clock rate (the load average is printed beside each size). Then the
checks issue 22 asks for: peak RSS within 20% and per-core rate within 10% from the second size
to the last; and a plot, ``bench/out/geo_scale.png`` (matplotlib, in the bench extra: ``scripts/setup bench``).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil

from bench.bench_geo_job import CORPUS, FILE_ROWS, OUT, corpus_files, job_run

PLOT = OUT / "geo_scale.png"


def plot(rows: list[dict], path) -> bool:
    """Rate per core and peak memory against corpus size; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = [r["rows"] for r in rows]
    fig, (rate, mem) = plt.subplots(1, 2, figsize=(10, 4))
    rate.plot(sizes, [r["steady_per_core"] for r in rows], "o-", label="per core (wall clock)")
    rate.plot(sizes, [per_cpu_second(r) for r in rows], "o-", label="per CPU second (all processes)")
    rate.set(xscale="log", xlabel="captions", ylabel="captions/s (steady state)", ylim=(0, None), title="geo job throughput")
    rate.legend()
    mem.plot(sizes, [r["rss_driver_mib"] for r in rows], "o-", label="driver")
    mem.plot(sizes, [r["rss_ray_mib"] for r in rows], "o-", label="Ray processes")
    mem.set(xscale="log", xlabel="captions", ylabel="peak RSS (MiB)", ylim=(0, None), title="memory")
    mem.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def per_cpu_second(r: dict) -> float:
    """Captions per CPU second of the whole job (workers, Ray's processes, driver) in the steady state:
    the per-core rate a busy neighbour does not move."""
    cpu = sum(r["steady_cpu_us"].values())
    return 1e6 / cpu if cpu else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100], help="corpus sizes in millions of rows")
    ap.add_argument("--profile", default="paper", choices=["paper", "extended", "gazetteer"])
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--shard-rows", type=int, default=None, help="the job's --shard-rows (default: the job's own)")
    ap.add_argument("--keep", action="store_true", help="keep the generated corpus files")
    args = ap.parse_args()
    rows = []
    try:
        files = corpus_files(max(args.sizes) * FILE_ROWS)
        print(f"benchaudit geo ({args.profile}) on local Parquet, local Ray with {args.cpus} CPUs; corpus "
              f"{sum(f.stat().st_size for f in files) / 2**30:.1f} GiB in {len(files)} files; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for size in args.sizes:
            r = job_run(files[:size], args.profile, args.cpus, args.shard_rows)
            r["load"] = os.getloadavg()[0]
            rows.append(r)
            print(json.dumps({k: v for k, v in r.items()}, default=str))
    finally:
        if not args.keep:
            shutil.rmtree(CORPUS, ignore_errors=True)
    print(f"\n{'captions':>12} {'shards':>6} {'wall s':>7} {'scan s':>7} {'first line s':>12} {'steady/core':>12} "
          f"{'per CPU s':>10} {'RSS driver MiB':>14} {'RSS Ray MiB':>11} {'spilled MiB':>11} {'load':>5}")
    for r in rows:
        print(f"{r['rows']:>12,} {r['shards']:>6} {r['wall_s']:>7.1f} {r['scan_s']:>7.1f} {r['first_line_s'] or float('nan'):>12.1f} "
              f"{r['steady_per_core']:>12,.0f} {per_cpu_second(r):>10,.0f} {r['rss_driver_mib']:>14,.0f} "
              f"{r['rss_ray_mib']:>11,.0f} {r['spilled_mib']:>11.0f} {r['load']:>5.1f}")
    if len(rows) >= 2:
        a, b = rows[-2], rows[-1]
        peak = max(b["rss_driver_mib"] + b["rss_ray_mib"], 1) / max(a["rss_driver_mib"] + a["rss_ray_mib"], 1)
        rate, cpu = b["steady_per_core"] / a["steady_per_core"], per_cpu_second(b) / per_cpu_second(a)
        print(f"{a['rows']:,} → {b['rows']:,}: peak RSS (driver + Ray) ×{peak:.2f} (flat within 20%: "
              f"{'yes' if abs(peak - 1) <= 0.2 else 'NO'}); steady rate per core ×{rate:.2f}, per CPU second ×{cpu:.2f} "
              f"(within 10%: {'yes' if rate >= 0.9 else 'NO'} / {'yes' if cpu >= 0.9 else 'NO'}; the load average moved "
              f"{a['load']:.1f} → {b['load']:.1f})")
    if rows:
        print(f"plot: {PLOT}" if plot(rows, PLOT) else "plot: not drawn (matplotlib is not installed)")


if __name__ == "__main__":
    main()
