"""No dead link (issue 34): every link of the index of runs and of every report points at a file or folder
that exists, and none leaves the run root (re-audit rows linked a ``report.html`` re-audits never write)."""
from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from jobs.common.cli.config import RunOptions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def links(page: Path) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*)"', page.read_text(encoding="utf-8"))]


def reports(root: Path) -> list[Path]:
    """The reports of finished runs (a stopped run's ``.<id>.partial/`` has no manifest yet: it is no run's page)."""
    return sorted(p for p in root.glob("*/*/report.html") if not p.parent.name.startswith("."))


def dead_links(root: Path) -> list[tuple[str, str]]:
    """``(page, href)`` of every link of the index and the reports under ``root`` that leads nowhere."""
    pages = [root / "index.html", *reports(root)]
    dead = []
    for page in pages:
        for href in links(page):
            if href.startswith("#"):
                continue
            target = (page.parent / unquote(href.split("#", 1)[0])).resolve()
            if urlparse(href).scheme or not target.exists() or not target.is_relative_to(root.resolve()):
                dead.append((str(page.relative_to(root)), href))
    return dead


def _followed(root: Path) -> int:
    return sum(len(links(p)) for p in [root / "index.html", *reports(root)])


def test_no_dead_link_in_a_root_with_a_history_and_a_reaudit(history_runs, tmp_path):
    assert dead_links(history_runs) == []
    assert _followed(history_runs) > 100

    from jobs.reaudit.config import ReauditConfig
    from jobs.reaudit.run import reaudit

    (tmp_path / "plan.yaml").write_text(f"name: cards\naudits:\n  - {{job: docs, options: {{cards: ['{FIXTURES}/docs/cards']}}}}\n")
    out = tmp_path / "runs"
    for _ in range(2):  # a first run, then a reuse
        reaudit(ReauditConfig(plan=str(tmp_path / "plan.yaml")), RunOptions(out=str(out), executor="local", log_level="warning"))
    index = (out / "index.html").read_text()
    assert index.count("/diff.md") == 2 and "reaudit/" in index
    assert dead_links(out) == []


@pytest.mark.ray
def test_no_dead_link_in_the_sample_runs_of_every_job(sample_runs):
    root = sample_runs["geo"].parents[1]
    assert dead_links(root) == []
    assert _followed(root) > 50
