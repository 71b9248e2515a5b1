"""The GPU bench scripts run their code path on CPU (``--tiny``) and print their figures.

Why: they run only where a GPU machine is lent, which CI never has; without this a change to the
job code they call (``run_models`` came to take items instead of rows) breaks them unseen until the
next GPU session, which then spends its device time on the crash.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.models


def _run(module: str) -> str:
    done = subprocess.run([sys.executable, "-m", module, "--tiny"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_landscape_bench_scores_every_item():
    out = _run("bench.gpu_landscape")
    rate = re.search(r"hf\s*:\s*([\d.]+) items/s", out)
    assert rate and float(rate.group(1)) > 0, out


def test_contamination_bench_makes_the_planned_calls():
    """Every planned router call is made; worker calls are at most the planned ones (a cell whose router
    output is unusable is blocked, identical worker prompts are one call), and none fails."""
    out = _run("bench.gpu_contamination")
    planned = re.search(r"'router_calls': (\d+).*'worker_calls': (\d+)", out)
    made = {step: re.search(rf"{step}\s*:\s*(\d+) calls in .*\((\d+) errors", out) for step in ("routers", "workers", "total")}
    assert planned and all(made.values()), out
    routers, workers, total = (int(made[s].group(1)) for s in ("routers", "workers", "total"))
    assert routers == int(planned.group(1)) and 0 < workers <= int(planned.group(2)) and total == routers + workers, out
    assert all(int(m.group(2)) == 0 for m in made.values()), out
