"""A real headless Chromium for report tests: load a page, record what it did, keep a screenshot.

Chromium comes from the system's packages (Debian: ``apt-get install chromium``; ``scripts/setup
test`` installs it where it can), driven through Playwright's Python package with
``executable_path`` (Playwright's own browser download is never used). Tests that need it skip
when either is missing.

What a page load records: console messages of type error, uncaught page errors, every request
other than the page itself (a self-contained report makes none), the title, the visible text and
how many ``<script>``/``<img>`` elements the DOM holds (data must never become markup).
"""
from __future__ import annotations

import atexit
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "tests" / "artifacts" / "screenshots"  # git-ignored; named in the README
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    """The system Chromium: $CHROMIUM, else chromium / chromium-browser / google-chrome on PATH."""
    for candidate in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


def require_browser() -> str:
    """The Chromium to drive, or skip the test saying what is missing."""
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium, or scripts/setup test)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("Playwright's Python package is not installed (pip install -e '.[test]')")
    return path


@dataclass
class PageLoad:
    url: str
    title: str
    text: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every request but the page itself
    scripts: int = 0
    images: int = 0
    dialogs: list[str] = field(default_factory=list)
    screenshot: Path | None = None
    measured: object = None  # what ``measure`` returned
    measured_closed: object = None  # what ``measure`` returned before any ``<details>`` was opened
    height: int = 0  # the page's full height in px, as loaded (collapsed parts closed)


_RUNNING: list = []  # [playwright, browser]: one Chromium per test process, started on first use, stopped at exit


def _browser():
    """The process's Chromium (starting Playwright's driver and the browser costs ~2 s; each page gets its own
    context, so sharing the process shares nothing a page can see)."""
    if not _RUNNING:
        from playwright.sync_api import sync_playwright

        pw = sync_playwright().start()
        _RUNNING.extend([pw, pw.chromium.launch(executable_path=require_browser(), headless=True, args=FLAGS)])
        atexit.register(_stop)
    return _RUNNING[1]


def _stop() -> None:
    pw, browser = _RUNNING
    browser.close()
    pw.stop()


def load_page(path: Path, screenshot: str | None = None, width: int = 1200, measure: str | None = None) -> PageLoad:
    """Open ``path`` in a fresh profile, wait for it to settle, record it, and keep a full-page screenshot.

    ``measure``: a JavaScript function evaluated as the page loads (``PageLoad.measured_closed``) and
    after every ``<details>`` is opened (so collapsed tables and plots are laid out too;
    ``PageLoad.measured``), and a second screenshot ``<screenshot>-open`` shows the page opened.
    """
    url = path.resolve().as_uri()
    # a new context is a fresh profile (its own cache, cookies and storage): nothing of one page reaches the next
    context = _browser().new_context(viewport={"width": width, "height": 900}, offline=True)
    try:
        page = context.new_page()
        load = PageLoad(url=url, title="", text="")
        page.on("console", lambda m: load.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: load.page_errors.append(str(e)))
        page.on("request", lambda r: load.requests.append(r.url) if r.url != url else None)
        page.on("dialog", lambda d: (load.dialogs.append(d.message), d.dismiss()))
        page.goto(url, wait_until="load")
        page.wait_for_timeout(300)  # anything a page would start after load (it should start nothing)
        load.title = page.title()
        load.text = page.inner_text("body")
        load.scripts = page.locator("script").count()
        load.images = page.locator("img").count()
        load.height = page.evaluate("document.documentElement.scrollHeight")
        if screenshot:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            load.screenshot = SCREENSHOTS / f"{screenshot}.png"
            page.screenshot(path=str(load.screenshot), full_page=True)
        if measure:
            load.measured_closed = page.evaluate(measure)
            page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
            load.measured = page.evaluate(measure)
            if screenshot:
                page.screenshot(path=str(SCREENSHOTS / f"{screenshot}-open.png"), full_page=True)
        return load
    finally:
        context.close()
