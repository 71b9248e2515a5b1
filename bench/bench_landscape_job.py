"""``benchaudit landscape`` end to end on a local Ray: the first run, then a rerun served by the cache.

    python -m bench.bench_landscape_job [--items 400] [--perturbations none,noise] [--num-cpus 2]

A synthetic 4-option benchmark (JSONL, mapped columns) and the tiny random Llama of
``tests/servers/tiny_lm.py`` through the ``hf`` path, one CPU actor. Prints wall seconds and
prompts/s for the first run (prompt stage + model + landscape stage + summary) and for a rerun
into a new run directory (every answer from the response cache: forward passes must be 0), plus
the stage timings of each from the manifest. Ray start-up is reported apart.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from jobs.common.cli.config import RunOptions
from jobs.common.runtime.ray_start import init_ray
from jobs.landscape.config import LandscapeConfig
from jobs.landscape.run import run
from tests.servers.tiny_lm import WORDS, build_tiny_lm


def _benchmark(path: Path, n: int) -> None:
    rng = np.random.default_rng(0)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            options = [" ".join(rng.choice(WORDS, 3)) for _ in range(4)]
            stem = " ".join(rng.choice(WORDS, 40))
            fh.write(json.dumps({"id": f"q{i}", "q": f"{stem}?", "opts": options, "ans": options[i % 4]}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--perturbations", default="none,noise")
    ap.add_argument("--num-cpus", type=int, default=2)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-landscape-"))
    model = build_tiny_lm(root / "model")
    _benchmark(root / "b.jsonl", args.items)
    t = time.perf_counter()
    init_ray(None, args.num_cpus)
    print(f"ray start-up {time.perf_counter() - t:.1f} s")
    cfg = LandscapeConfig(input=[str(root / "b.jsonl")], question_column="q", id_column="id", options_column=["opts"],
                          gold_column=["ans"], model=[f"hf:{model}"], actors=1, batch_size=32,
                          perturbations=args.perturbations.split(","))
    for label in ("first run", "rerun (cache)"):
        t = time.perf_counter()
        out = run(cfg, RunOptions(out=str(root / "runs")))
        dt = time.perf_counter() - t
        manifest = json.loads((Path(out) / "manifest.json").read_text())
        calls = manifest["models"]["model"]["calls"]
        rows = manifest["perturbations"]["prompt_rows"]
        stages = {k: v for k, v in manifest["timings"].items() if k.endswith("_s")}
        print(f"{label}: {rows} prompts in {dt:.1f} s = {rows / dt:.1f} prompts/s; forward passes "
              f"{calls.get('forward_passes', 0)}, cache hits {calls['cache_hits']}; stages {stages}")


if __name__ == "__main__":
    main()
