"""What a user waits for before any work: ``--help``, then a job's fixed overhead on a small input.

    python -m bench.bench_startup --help-only [--repeats 10]     # benchaudit --help and benchaudit geo --help
    python -m bench.bench_startup [--repeats 3] [--with-running-ray]
    python -m bench.bench_startup --in-process [--repeats 3]   # small runs beside a Ray running in this process

Help: the installed ``benchaudit`` script in a fresh process, cold (no bytecode cache: a fresh
``PYTHONPYCACHEPREFIX``, so every module is compiled, as on the first run after an install) and
warm (bytecode cached, the usual case), the median of ``--repeats`` runs each.

"before" is ``--executor ray`` (every sharded job starts a local Ray, as all did before small
inputs ran in-process); "after" is the default ``--executor auto``. Both run side by side, in
alternation, on the same inputs: the shipped captions and benchmarks cut with ``--limit``, four
dataset cards. ``--with-running-ray`` also times the Ray-only jobs (coreset build) when a Ray
started with ``ray start`` is up (in a private RAY_TMPDIR, stopped afterwards by its own PIDs), which
``init_ray`` joins instead of starting one. Also printed: the import time of the CLI (what
``--help`` costs).

``--in-process``: small geo runs (the gazetteer profile, 40 captions) called one after another in one Python
process that runs a local Ray (a notebook's ``ray.init()``, a plan of several jobs, the test suite), ``--executor
ray`` against ``auto``, alternated; wall seconds and the whole machine's busy CPU seconds (``/proc/stat``: the Ray
workers too), medians. ``auto`` keeps such a run in the process: one pool actor would cost a worker start and a
lexicon compile that this process has paid once already.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CARDS = ROOT / "tests" / "fixtures" / "docs" / "cards"
JOBS = {
    "geo (2 × 500 captions)": ["geo", "--limit", "500", "--bootstrap", "1000"],
    "conventions (2 × 200 items)": ["conventions", "--limit", "200", "--bootstrap", "1000"],
    "scorers (100 answers)": ["scorers", "--limit", "100", "--bootstrap", "1000"],
    "docs (4 cards)": ["docs", *[a for c in ("hf_card_detailed.md", "hf_card_sparse.md", "croissant_rai.json",
                                              "datasheet_newsqa.md") for a in ("--cards", str(CARDS / c))]],
}


def timed(args: list[str], out: str, env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "jobs.cli", *args, "--out", out, "--log-level", "warning"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


HELP = {"benchaudit --help": ["--help"], "benchaudit geo --help": ["geo", "--help"]}


def help_seconds(args: list[str], cold: bool) -> float:
    """One ``benchaudit ARGS`` in a new process; ``cold``: with an empty bytecode cache."""
    env = dict(os.environ)
    prefix = tempfile.mkdtemp(prefix="pycache-") if cold else None
    if prefix:
        env["PYTHONPYCACHEPREFIX"] = prefix
    started = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "benchaudit"), *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   env=env)
    elapsed = time.perf_counter() - started
    if prefix:
        shutil.rmtree(prefix, ignore_errors=True)
    return elapsed


def help_rows(repeats: int) -> list[tuple[str, float, float]]:
    rows = []
    for name, args in HELP.items():
        help_seconds(args, cold=False)  # fills the ordinary bytecode cache
        cold, warm = [], []
        for _ in range(repeats):  # alternate, so a busy moment hits both
            cold.append(help_seconds(args, cold=True))
            warm.append(help_seconds(args, cold=False))
        rows.append((name, statistics.median(cold), statistics.median(warm)))
    return rows


def _targets(path: Path) -> None:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    y = rng.random(20_000) < 0.01
    pd.DataFrame({"id": np.arange(20_000), "label": y.astype(int),
                  "score": np.where(y, rng.beta(5, 2, 20_000), rng.beta(1, 12, 20_000))}).to_parquet(path)


def _free_port() -> int:
    with socket.socket() as s:  # a port nobody else's Ray on this machine is using
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_running_ray(work: Path, repeats: int) -> list[tuple[str, float, float]]:
    """coreset build on 20,000 targets: a fresh local Ray each time vs. joining a running one."""
    _targets(work / "targets.parquet")
    args = ["coreset", "build", "--input", str(work / "targets.parquet"), "--tau", "0.5"]
    fresh = [timed(args, str(work / "runs")) for _ in range(repeats)]
    tmp = Path(tempfile.mkdtemp(prefix="bray", dir="/tmp"))
    # a private Ray: its own temp dir, so no one else's ray.init finds it (loopback only; token auth off for it)
    env = {**os.environ, "RAY_TMPDIR": str(tmp), "RAY_AUTH_MODE": "disabled"}
    subprocess.run([str(Path(sys.executable).parent / "ray"), "start", "--head", "--num-cpus", str(os.cpu_count()),
                    "--port", str(_free_port()), "--ray-client-server-port", str(_free_port()), "--include-dashboard", "false",
                    "--disable-usage-stats", "--temp-dir", str(tmp / "ray")], env=env, check=True, capture_output=True)
    try:
        joined = [timed(args, str(work / "runs"), env) for _ in range(repeats)]
    finally:
        ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
        for line in ps:  # only the processes of this private Ray (never 'ray stop': it stops every Ray here)
            if str(tmp) in line:
                try:
                    os.kill(int(line.split()[0]), 9)
                except (ProcessLookupError, ValueError):
                    pass
        shutil.rmtree(tmp, ignore_errors=True)
    return [("coreset build (20,000 targets)", statistics.median(fresh), statistics.median(joined))]


def _busy_cpu_s() -> float:
    """Busy CPU seconds of the whole machine since boot (every process: the Ray workers a run starts too)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def in_process(work: Path, repeats: int) -> list[tuple[str, float, float]]:
    """Small geo runs in this process beside its running local Ray: (measure, on Ray, auto)."""
    import ray

    from jobs.common.cli.config import RunOptions
    from jobs.geo.config import CorpusConfig, GeoConfig
    from jobs.geo.run import run
    from tests.builders import write_tar

    for shard in range(2):
        write_tar(work / f"{shard:05d}.tar", [(f"{shard}{i:04d}", f"Street food in Bangkok {i}".encode(), {"url": f"http://a.th/{i}"})
                                              for i in range(20)])
    cfg = GeoConfig(corpus=[CorpusConfig(name="wds", paths=[str(work / "*.tar")], format="webdataset", text="txt", url="url")],
                    bootstrap=0)
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    try:
        times: dict[str, list[tuple[float, float]]] = {"ray": [], "auto": []}
        for i in range(repeats + 1):  # the first pair pays the first actor's and this process's one-time costs: not counted
            for executor in ("ray", "auto"):
                wall, cpu = time.perf_counter(), _busy_cpu_s()
                run(cfg, RunOptions(out=str(work / "runs"), executor=executor, log_level="warning"))
                if i:
                    times[executor].append((time.perf_counter() - wall, _busy_cpu_s() - cpu))
    finally:
        ray.shutdown()
    return [(measure, statistics.median(t[k] for t in times["ray"]), statistics.median(t[k] for t in times["auto"]))
            for k, measure in enumerate(("wall, s", "busy CPU, s"))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--with-running-ray", action="store_true")
    ap.add_argument("--running-ray-only", action="store_true", help="only the joined-Ray comparison")
    ap.add_argument("--help-only", action="store_true", help="only the --help timings")
    ap.add_argument("--in-process", action="store_true", help="only small runs beside a Ray running in this process")
    a = ap.parse_args()
    if a.in_process:
        work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
        try:
            rows = in_process(work, a.repeats)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(f"geo, 40 captions, gazetteer, in a process running Ray (median of {a.repeats} runs after a first pair)")
        print(f"{'measure':16} {'--executor ray':>15} {'auto':>8} {'saved':>7}")
        for measure, on_ray, auto in rows:
            print(f"{measure:16} {on_ray:15.2f} {auto:8.2f} {on_ray / auto:6.1f}×")
        return
    print(f"{'command':24} {'cold, s':>8} {'warm, s':>8}   (median of {a.repeats}; cold: no bytecode cache)")
    for name, cold, warm in help_rows(a.repeats):
        print(f"{name:24} {cold:8.2f} {warm:8.2f}")
    if a.help_only:
        return
    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        rows = []
        for name, args in ({} if a.running_ray_only else JOBS).items():
            before, after = [], []
            for _ in range(a.repeats):  # alternate, so a busy moment hits both
                before.append(timed([*args, "--executor", "ray"], str(work / "runs")))
                after.append(timed(args, str(work / "runs")))
            rows.append((name, statistics.median(before), statistics.median(after)))
        print(f"{'job (small input)':32} {'before: on Ray, s':>18} {'after: auto, s':>15} {'saved':>7}")
        for name, before, after in rows:
            print(f"{name:32} {before:18.1f} {after:15.1f} {before / after:6.1f}×")
        if a.with_running_ray or a.running_ray_only:
            print(f"{'job (Ray needed)':32} {'fresh Ray, s':>18} {'joined Ray, s':>15}")
            for name, fresh, joined in with_running_ray(work, a.repeats):
                print(f"{name:32} {fresh:18.1f} {joined:15.1f} {fresh / joined:6.1f}×")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
