"""Benchmark-level statistics are a registry (``audit.landscape.statistics``): a statistic registered as one
function, with no other edit, appears in the summary table, the report and the headline of a real run."""
from __future__ import annotations

import json
import math
import statistics as pystats
from pathlib import Path

import pytest

from audit.landscape.statistics import STATISTICS, Group, statistic, unregister
from jobs.cli import main
from jobs.common.runtime.job import JobRun
from tests.builders import A, write_lm_eval_runs


@pytest.fixture
def median_ptop1():
    @statistic("median_ptop1", "median Ptop1 (test)", headline=True)
    def median(g: Group) -> float:
        return float(g.scored["ptop1"].median()) if len(g.scored) else float("nan")

    yield median
    unregister("median_ptop1")
    assert "median_ptop1" not in STATISTICS


@pytest.mark.ray  # the run reads its logs with Ray Data
def test_a_registered_statistic_appears_in_summary_report_and_headline(median_ptop1, tmp_path, capsys, monkeypatch):
    runs = write_lm_eval_runs(tmp_path / "lm-eval")
    written, write_json = [], JobRun.write_json

    def counted(job: JobRun, name: str, data: object) -> None:
        written.append(name)
        write_json(job, name, data)

    monkeypatch.setattr(JobRun, "write_json", counted)
    assert main(["landscape", "--from-lm-eval", str(runs), "--out", str(tmp_path / "runs")]) == 0
    assert written.count("manifest.json") == 1  # the run's manifest is written once, when it is committed
    run_dir = Path(capsys.readouterr().out.split("manifest: ")[1].strip()).parent
    summary = json.loads((run_dir / "summary.json").read_text())

    # by hand: Ptop1 of each item is the largest softmax probability of its continuation log-likelihoods
    expected = pystats.median(max(math.exp(x) for x in ll) / sum(math.exp(x) for x in ll) for ll in A)
    row = next(r for r in summary["table"] if r["model"] == "org/model-a" and r["perturbation"] == "none")
    assert row["median_ptop1"] == pytest.approx(expected, abs=1e-12)
    assert {"name": "median_ptop1", "label": "median Ptop1 (test)", "percent": False, "headline": True,
            "interval": False} in summary["statistics"]
    tracked = {(h["input"], h["metric"]): h["value"] for h in summary["headline"]}
    assert tracked[("arc_easy/org/model-a", "median_ptop1@none")] == pytest.approx(expected, abs=1e-12)
    assert ("arc_easy/org/model-a", "accuracy@none") in tracked and ("arc_easy/org/model-a", "mpd@none") in tracked
    report = (run_dir / "report.html").read_text()
    assert "median Ptop1 (test)" in report and f"{expected:.3f}" in report


def test_a_name_registered_twice_is_refused():
    with pytest.raises(ValueError, match="registered already"):
        statistic("accuracy", "again")(lambda g: 0.0)
