"""The index of a run root with a history (31 runs, ``tests/jobs/history_runs.py``), opened in headless
Chromium at 1,280 px the way a person reads it: about one screen per ~20 runs, nothing wider than
the page, no column squeezed by a long error, no legend over a title or plot squashed by its legend,
one number format per axis (counts as whole numbers), and runs with other options never joined
into one trend line. Screenshots: ``tests/artifacts/screenshots/index-history*.png``.
"""
from __future__ import annotations

import re

import pytest

from tests.browser import load_page, require_browser
from tests.jobs.history_runs import MODELS, TRACE_RUNS

pytestmark = pytest.mark.browser  # (its runs start no Ray: traces, contamination from outcomes, geo and docs in the driver)
WIDTH, SCREEN = 1280, 900

# Everything measured with every <details> open (collapsed runs and plots laid out too).
MEASURE = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const wider = [document.documentElement, document.body, ...document.querySelectorAll('.wide')]
    .filter(e => e.scrollWidth > e.clientWidth).map(e => [e.className || e.tagName, e.scrollWidth, e.clientWidth]);
  const charts = [...document.querySelectorAll('svg')].map(svg => ({
    title: svg.querySelector('text.title').textContent,
    titleBox: box(svg.querySelector('text.title')),
    plotBox: box(svg.querySelector('rect[fill="none"]')),
    legendBoxes: [...svg.querySelectorAll('g.legend')].map(box),
    legend: [...svg.querySelectorAll('g.legend title')].map(t => t.textContent),
    yticks: [...svg.querySelectorAll('text.ytick')].map(t => t.textContent),
    svgBox: box(svg)}));
  const columns = [...document.querySelectorAll('table.runs')].map(t => [...t.querySelectorAll('th')].map(
    th => th.getBoundingClientRect().width));
  const rows = [...document.querySelectorAll('table.runs .rows')].map(e => getComputedStyle(e).overflowWrap);
  const values = [...document.querySelectorAll('table.runs tbody tr')].filter(tr => tr.offsetParent !== null).map(tr => {
    const cell = tr.cells[5], v = cell.querySelector('.v'), c = cell.getBoundingClientRect();
    const r = v ? v.getBoundingClientRect() : null;
    return {run: tr.cells[0].innerText, cell: cell.innerText, value: v ? v.innerText : null,
            shown: !!r && r.width > 0 && r.left >= c.left - 0.5 && r.right <= c.right + 0.5};
  });
  return {wider, charts, columns, rows, values, text: document.body.innerText};
}"""


@pytest.fixture(scope="module")
def index_load(history_runs):
    require_browser()
    return load_page(history_runs / "index.html", screenshot="index-history", width=WIDTH, measure=MEASURE)


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_a_long_history_reads_in_about_one_screen_per_twenty_runs(index_load):
    assert "31 run(s) of 4 job(s)" in index_load.text
    assert index_load.height <= SCREEN * 31 / 20, index_load.height  # 14,000 px before
    assert f"Show {TRACE_RUNS - 8} older traces run(s)" in index_load.text
    assert index_load.console_errors == [] and index_load.requests == []


def test_nothing_is_wider_than_the_page_and_no_column_is_squeezed(index_load):
    m = index_load.measured
    assert m["wider"] == []
    # the stopped docs run's long error sits behind its status: every column keeps its width
    assert m["columns"] and all(min(widths) >= 80 for widths in m["columns"]), m["columns"]
    assert "over --max-skipped 0" not in index_load.text and "over --max-skipped 0" in m["text"]  # one click away
    assert m["rows"] and set(m["rows"]) == {"break-word"}  # metric names wrap at their separators, not mid-word


def test_trend_plots_keep_legend_and_title_apart_and_one_number_format(index_load):
    charts = index_load.measured["charts"]
    assert len(charts) >= 30
    for c in charts:
        assert c["plotBox"][3] - c["plotBox"][1] >= 100, c["title"]  # never squashed by a long legend
        for legend in c["legendBoxes"]:
            assert not _overlap(legend, c["titleBox"]) and not _overlap(legend, c["plotBox"]), c["title"]
            assert legend[2] <= c["svgBox"][2] + 1 and legend[3] <= c["svgBox"][3] + 1, c["title"]  # inside the plot
        decimals = {len(t.split(".")[1]) if "." in t else 0 for t in c["yticks"]}
        assert len(decimals) == 1, (c["title"], c["yticks"])  # one format on an axis
    counts = next(c for c in charts if c["title"] == "traces · traces")  # traces per model: a count
    assert counts["yticks"] and all(re.fullmatch(r"\d+", t) for t in counts["yticks"]), counts["yticks"]


def test_one_trend_line_per_input_and_configuration(index_load):
    charts = {c["title"]: c for c in index_load.measured["charts"]}
    traces = charts["traces · traces"]["legend"]  # 24 runs alternating per_outcome 2 and 3: two lines per model
    assert sorted(traces) == sorted(f"{m} · per_outcome={k}" for m in MODELS for k in (2, 3))
    geo = charts.get("geo · coverage")
    assert geo is None  # the two geo runs differ in lexicon profile: one point per line is no trend
    per_model = charts["contamination · models_above_baseline@r=1"]["legend"]  # same options twice: one line
    assert per_model == ["all"]


def test_every_runs_first_headline_value_is_visible_at_1280_px_open_or_not(index_load, history_runs):
    """Issue 34: "coco2017_val · coverage = 0.…" -- the number cut off, expanded or not."""
    import json

    from jobs.common.pages.html import fmt

    firsts = {}
    for entry in (history_runs / "_runs" / "entries").rglob("*.json"):
        e = json.loads(entry.read_text())
        if e["headline"]:
            firsts[e["run_id"]] = fmt(e["headline"][0]["value"])
    for measured in (index_load.measured_closed, index_load.measured):
        rows = {r["run"]: r for r in measured["values"]}
        for run_id, value in firsts.items():
            if run_id not in rows:  # an older run behind its closed summary
                assert measured is index_load.measured_closed, run_id
                continue
            row = rows[run_id]
            assert row["shown"] and row["value"].replace("\xa0", " ").startswith(f" = {value}"), (run_id, row)
    assert len(firsts) >= 30 and len(index_load.measured["values"]) == 31


def test_failed_runs_are_marked_and_the_docs_input_is_its_cards(index_load):
    text = index_load.text
    assert "✗ failed" in text  # the docs run that stopped over --max-skipped 0
    assert "benchaudit ·" not in index_load.measured["text"] and "cards · " in index_load.measured["text"]
