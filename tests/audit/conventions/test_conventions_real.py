"""The whole stage on the real benchmark files, when ../shared/data is present."""
from __future__ import annotations

from pathlib import Path

import pytest

from audit.conventions.metrics import merge_counts, summarize
from audit.conventions.stage import ConventionStage
from audit.stats.bootstrap import BootstrapConfig
from connectors.benchmarks.read import read_benchmark
from connectors.benchmarks.spec import BenchmarkSpec

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"
pytestmark = pytest.mark.skipif(not SHARED.exists(), reason="../shared/data not available")


def summary(preset: str, path: str):
    items = read_benchmark(BenchmarkSpec(str(SHARED / path), preset=preset))
    result = ConventionStage().process(items)
    return summarize(merge_counts([result.counts]), result.labels, BootstrapConfig(n_replicates=500))[0]


def test_truthfulqa_lands_near_the_reference_study():
    # reference: coverage 7.59%, American share 94.4% (its own 1,813-pair inventory)
    s = summary("truthfulqa", "truthfulqa/TruthfulQA.csv")
    assert s.n_items == 817
    assert 0.06 <= s.coverage <= 0.10
    assert 0.90 <= s.american_share <= 0.98
    assert s.share_ci.low <= 0.944 <= s.share_ci.high


def test_arc_metric_units_pull_the_share_down():
    s = summary("arc", "arc_challenge/arc_challenge_test.jsonl")
    assert s.by_category["unit"].other > 5 * s.by_category["unit"].american
    assert s.american_share_excl_spelling < 0.5 < s.american_share
