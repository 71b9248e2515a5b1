"""Every job's report and the index of runs, opened in a real headless Chromium.

Each page must load with no console error and no request at all (a report is one self-contained
file), show text from data that carries ``<script>`` and ``<img onerror>`` as text (no script or
image element in the DOM, the title untouched), and leave a full-page screenshot under
``tests/artifacts/screenshots/`` for a person to look at. Skips where Chromium or Playwright is
missing (``scripts/setup test`` installs both where it can).
"""
from __future__ import annotations

import pytest

from tests.browser import load_page, require_browser
from tests.jobs.sample_runs import IMG, JOBS, SCRIPT

pytestmark = pytest.mark.ray
SHOWS_DATA_TEXT = {"geo", "conventions", "scorers", "docs", "coreset-estimate", "traces", "landscape", "contamination", "index"}
TITLES = {"geo": "Geographic visibility", "conventions": "Locale conventions", "scorers": "Scorer sensitivity",
          "docs": "Documentation audit", "coreset-build": "HT-Coreset design", "coreset-estimate": "HT-Coreset estimates",
          "coreset-study": "HT-Coreset sampler study", "traces": "Reasoning-trace audit", "landscape": "MCQA probability landscapes",
          "contamination": "Contamination sensitivity", "index": "benchaudit runs"}


@pytest.fixture(scope="module")
def browser():
    return require_browser()


@pytest.mark.parametrize("page", [*JOBS, "index"])
def test_report_loads_offline_without_errors_and_data_stays_text(browser, sample_runs, page):
    path = sample_runs["geo"].parents[1] / "index.html" if page == "index" else sample_runs[page] / "report.html"
    load = load_page(path, screenshot=page)
    assert load.console_errors == [] and load.page_errors == [] and load.dialogs == []
    assert load.requests == [], f"a self-contained report fetched {load.requests}"
    assert load.title.startswith(TITLES[page]) and "pwned" not in load.title
    assert load.scripts == 0 and load.images == 0  # markup from data never became elements
    if page in SHOWS_DATA_TEXT:
        assert SCRIPT in load.text and IMG in load.text  # ... it is shown, as text
    assert load.screenshot.exists() and load.screenshot.stat().st_size > 10_000


def test_index_lists_every_job_and_draws_a_trend(browser, sample_runs):
    load = load_page(sample_runs["geo"].parents[1] / "index.html")
    for job in JOBS:
        assert job in load.text
    assert "docs-earlier" in load.text and "Trends across runs" in load.text


WIDER = """() => [document.documentElement, document.body, ...document.querySelectorAll('.wide')]
  .filter(e => e.scrollWidth > e.clientWidth).map(e => [e.className || e.tagName, e.scrollWidth, e.clientWidth,
                                                       e.innerText.slice(0, 60)])"""


@pytest.mark.parametrize("page", [*JOBS, "index"])
def test_no_table_is_wider_than_a_1280_px_page(browser, sample_runs, page):
    """Every table fits the page with its collapsed parts opened: the conventions table hid its "neutral"
    column even at 1,900 px; a value and its interval now split over two lines where needed."""
    path = sample_runs["geo"].parents[1] / "index.html" if page == "index" else sample_runs[page] / "report.html"
    load = load_page(path, screenshot=f"{page}-1280", width=1280, measure=WIDER)
    assert load.measured == []
