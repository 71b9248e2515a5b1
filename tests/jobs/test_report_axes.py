"""Plots that do not mislead (issue 34, item 5), over every axis of every report: each tick label distinct
(no "0.99 0.99 1.00"), none reading "-0", counts ticked at whole numbers and never below zero (no
"0 0 0 0 1", no −1), probability axes inside [0, 1]. The reports: contamination with a single model,
a landscape from real lm-eval logs, the 31-run history (and, under Ray, a run of every job)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobs.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROBABILITY_AXES = ("Ptop1", "Hnorm")
COUNT_CHARTS = ("Models above their clean baseline", "Question-level transitions")


def axes_problems(report: Path) -> list[str]:
    text = report.read_text(encoding="utf-8")
    problems = []
    for svg in re.findall(r"<svg.*?</svg>", text, flags=re.S):
        title = re.search(r'aria-label="([^"]*)"', svg).group(1)
        labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
        for axis in ("xtick", "ytick"):
            ticks = re.findall(rf'<text class="{axis}"[^>]*>([^<]*)</text>', svg)
            if len(set(ticks)) < len(ticks):
                problems.append(f"{report.name} · {title} · {axis}: repeated labels {ticks}")
            if any(re.fullmatch(r"[-−]0(\.0*)?%?", t) for t in ticks):
                problems.append(f"{report.name} · {title} · {axis}: a '-0' label {ticks}")
            if any(name in labels for name in PROBABILITY_AXES) and any(not 0 <= float(t) <= 1 for t in ticks):
                problems.append(f"{report.name} · {title} · {axis}: a probability axis past [0, 1] {ticks}")
            if title.startswith(COUNT_CHARTS) and axis == ("xtick" if "per r" in title else "ytick") \
                    and not all(re.fullmatch(r"\d[\d,]*", t) for t in ticks):
                problems.append(f"{report.name} · {title} · {axis}: a count axis with {ticks}")
    return problems


def reports(root: Path) -> list[Path]:
    return sorted(root.glob("*/*/report.html"))


@pytest.mark.ray  # --from-lm-eval reads each model's logs in a Ray Data task
def test_one_model_contamination_and_lm_eval_landscapes_have_honest_axes(tmp_path):
    from tests.fixtures.contamination.reference_study import MODELS, reference_outcomes

    one = reference_outcomes()
    one = one[one["model"] == MODELS[0]]
    one = one[one["r"] == 1]  # one model, one setting: every count 0 or 1, r from 1 to 1
    one.to_parquet(tmp_path / "one.parquet")
    out = tmp_path / "runs"
    assert main(["contamination", "--outcomes", str(tmp_path / "one.parquet"), "--bootstrap", "50", "--out", str(out),
                 "--log-level", "warning"]) == 0
    assert main(["landscape", "--from-lm-eval", str(FIXTURES / "lm_eval" / "v0.4.13"), "--out", str(out),
                 "--log-level", "warning"]) == 0
    found = reports(out)
    assert {p.parts[-3] for p in found} == {"contamination", "landscape"}
    assert [p for r in found for p in axes_problems(r)] == []
    contamination = next(r for r in found if r.parts[-3] == "contamination").read_text()
    assert "from 1 to 1" not in contamination and "through r = 1" not in contamination
    assert "at r = 1, the only setting" in contamination
    landscape = next(r for r in found if r.parts[-3] == "landscape").read_text()
    assert landscape.count('class="xtick"') > 3  # its scatters were checked


def test_every_axis_of_a_history_of_reports(history_runs):
    found = reports(history_runs)
    assert len(found) >= 29
    assert [p for r in found for p in axes_problems(r)] == []


@pytest.mark.ray
def test_every_axis_of_every_jobs_report(sample_runs):
    found = [sample_runs[job] / "report.html" for job in sample_runs]
    assert [p for r in found for p in axes_problems(r)] == []
