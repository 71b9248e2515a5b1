"""The index of runs: ``<run-root>/index.html``, every run by job with its headline, and trends.

Written after every run (``JobRun.commit``) and by ``benchaudit report index``. Runs come from the
run store (``connectors.runs.store``) and, for runs it does not hold, from the run directories
themselves (``connectors.runs.finished.list_all_runs``). Each run is one line (its options, inputs and
first headline metric; the rest of its headline and a stopped run's error behind it), a job's
older runs and its trends one click away, so a root of 20 runs reads in about one screen. A trend
plot is drawn per job and headline metric with one line per input (benchmark, corpus, model) and
configuration, over the complete runs that report it.
"""
from __future__ import annotations

import logging
import os
import re
from collections import defaultdict
from urllib.parse import quote

from connectors.runs.finished import list_all_runs
from connectors.runs.rundir import join, write_text
from jobs.common.pages.history import config_groups, inputs_text, options_text
from jobs.common.pages.html import esc, fmt, interval, line_chart, note, page, table

log = logging.getLogger(__name__)
SHOWN_RUNS = 8  # newest runs per job in the open table; the older ones are one click away
HEADLINE_SHOWN = 12  # headline rows behind a run's first one (all of them are in summary.json)


def _when(stamp: str | None) -> str:
    return (stamp or "")[:19].replace("T", " ") or "–"


def breakable(name: str) -> str:
    """A metric or input name that may wrap only after its ``.``/``_``/``-`` separators, never mid-word."""
    return re.sub(r"([._/-])", r"\1<wbr>", esc(name))


def _clip(text: str, html: str | None = None) -> str:
    """One line, cut with "…" where the column ends; the whole text in the tooltip."""
    return f'<span class="clip" title="{esc(text)}">{html if html is not None else esc(text)}</span>' if text else "–"


def _headline_row(r: dict, name=breakable) -> str:
    ci = f" {interval(r['ci_low'], r['ci_high'])}" if r.get("ci_low") is not None else ""
    return f"{name(str(r['input']))} · {name(str(r['metric']))} = {fmt(r['value'])}{ci}"


def _first_headline(r: dict, more: str = "") -> str:
    """The first headline row on one line: its name cut with "…" where the column ends, its value (and
    interval) never: the number is what the line is for (Chromium wraps at ``<wbr>`` even in a line that
    must not wrap, so this one has none)."""
    ci = f" {interval(r['ci_low'], r['ci_high'])}" if r.get("ci_low") is not None else ""
    name = f"{r['input']} · {r['metric']}"
    return (f'<span class="hl"><span class="clip" title="{esc(name)}">{esc(name)}</span>'
            f'<span class="v">&nbsp;= {fmt(r["value"])}{ci}{more}</span></span>')


def _headline_cell(rows: list[dict]) -> str:
    """The first headline row on the line; the others behind it, one click away."""
    if not rows:
        return "–"
    if len(rows) == 1:
        return _first_headline(rows[0])
    rest = "<br>".join(_headline_row(r) for r in rows[1:HEADLINE_SHOWN + 1])
    more = f"<br>… {len(rows) - 1 - HEADLINE_SHOWN} more in summary.json" if len(rows) > HEADLINE_SHOWN + 1 else ""
    return (f'<details class="cell"><summary>{_first_headline(rows[0], f" (+{len(rows) - 1})")}</summary>'
            f'<span class="rows">{rest}{more}</span></details>')


def _status(r) -> str:
    """The status, a run that did not complete marked (✗ failed in red, ⚠ incomplete: stopped or still running); a
    stopped run's error behind it, so a long message never squeezes the other columns."""
    mark = {"failed": ("bad", "✗ "), "incomplete": ("unfinished", "⚠ ")}.get(r.status)
    status = f'<span class="{mark[0]}">{mark[1]}{esc(r.status)}</span>' if mark else esc(r.status)
    if not r.error:
        return status
    return f'<details class="cell"><summary>{status}</summary><span class="long">{esc(r.error)}</span></details>'


# What each run links: a job's page for people (a re-audit writes its diff, not a report).
MAIN_FILE = {"reaudit": "diff.md"}


def _scheme(path: str) -> str:
    return path.split("://", 1)[0] if "://" in path else ""


_SAFE_PART = re.compile(r"[\w][\w.=@+-]*")  # a job or run folder name; no ":" (no scheme), no "..", no markup


def link_target(root: str, path: str) -> str | None:
    """The relative href of a run directory under the run root, or None: a run-store entry is data (a shared
    ``s3://`` root is written by many people), and an entry whose path is not a plain folder under the root
    (``javascript:…``, ``../elsewhere``, another bucket) is shown as text, never as a link."""
    root_path = root.split("://", 1)[-1].rstrip("/")
    if _scheme(path) != _scheme(root):
        return None
    inner = path.split("://", 1)[-1].rstrip("/")
    if not inner.startswith(root_path + "/"):
        return None
    parts = inner[len(root_path) + 1:].split("/")
    if not all(_SAFE_PART.fullmatch(p) and p not in (".", "..") for p in parts):
        return None
    return "/".join(quote(p) for p in parts)


def _x_labels(runs: list) -> dict[str, str]:
    """Each run's place on a trend's x axis: its start time to the second, to the millisecond when two
    runs share a second (the id too if they share that)."""
    when = {r.run_id: _when(r.started_at)[5:19] for r in runs}
    if len(set(when.values())) < len(when):
        when = {r.run_id: (r.started_at or "")[5:23].replace("T", " ") for r in runs}
    shared = {t for t in when.values() if list(when.values()).count(t) > 1}
    return {rid: f"{t} {rid}" if t in shared else t for rid, t in when.items()}


def _trends(job: str, runs: list) -> list[str]:
    """A plot per headline metric, one line per input *and config*: runs with other options measure
    something else, so their points are never joined into one line."""
    series: dict[str, dict[str, list[tuple[str, float | None]]]] = defaultdict(lambda: defaultdict(list))
    done = sorted((r for r in runs if r.status == "complete"), key=lambda e: (e.started_at or "", e.run_id))
    x, configs = _x_labels(done), config_groups(done)
    for r in done:
        for h in r.headline:
            if isinstance(h.get("value"), (int, float)) and not isinstance(h.get("value"), bool):
                name = f"{h['input']} · {configs[r.run_id]}" if configs[r.run_id] else str(h["input"])
                series[h["metric"]][name].append((x[r.run_id], h["value"]))
    charts = []
    for metric, by_input in series.items():
        if max(len(v) for v in by_input.values()) < 2:
            continue  # a trend needs two runs
        charts.append(line_chart(dict(by_input), f"{job} · {metric}", width=520, x_order=[x[r.run_id] for r in done]))
    return charts


def _runs_table(root: str, rows: list) -> str:
    cells = []
    for r in rows:
        rel = link_target(root, r.path)
        page = MAIN_FILE.get(r.job, "report.html")
        link = f'<a href="{esc(rel)}/{page}">{esc(r.run_id)}</a>' if r.status == "complete" and rel else esc(r.run_id)
        cells.append([link, _status(r), esc(_when(r.started_at)), _clip(options_text(r.config)), _clip(inputs_text(r, 8)),
                      _headline_cell(r.headline)])
    return table(["run", "status", "started (UTC)", "options", "inputs", "headline"], cells, "runs",
                 collapse_after=len(cells))


def render_index(root: str, runs: list) -> str:
    by_job: dict[str, list] = defaultdict(list)
    for r in runs:
        by_job[r.job].append(r)
    body = [note(f"Run root {root}: {len(runs):,} run(s) of {len(by_job)} job(s), newest first. Each run links its "
                 "report; options are those that differ from the job's defaults; a run's first headline metric is on "
                 "its line, the others (and a stopped run's error) one click away.")]
    if not runs:
        body.append("<p>No runs yet.</p>")
    for job, rows in sorted(by_job.items()):
        newest = sorted(rows, key=lambda e: (e.started_at or "", e.run_id), reverse=True)
        body.append(f"<section><h2>{esc(job)} <small>{len(rows):,} run(s)</small></h2>")
        body.append(_runs_table(root, newest[:SHOWN_RUNS]))
        if len(newest) > SHOWN_RUNS:
            body.append(f"<details><summary>Show {len(newest) - SHOWN_RUNS:,} older {esc(job)} run(s)</summary>"
                        f"{_runs_table(root, newest[SHOWN_RUNS:])}</details>")
        charts = _trends(job, rows)
        if charts:
            body.append(f'<details class="trends"><summary>Trends across runs: {len(charts)} plot(s), one line per input '
                        f'and configuration</summary><div class="flex">{"".join(charts)}</div></details>')
        body.append("</section>")
    return page("benchaudit runs", "".join(body), wide=True)


def write_index(root: str, to: str | None = None) -> tuple[str, int]:
    """Write the index page (``<root>/index.html`` unless ``to``); returns where and how many runs."""
    root = root if "://" in root else os.path.abspath(root)
    target = to or join(root, "index.html")
    runs = list_all_runs(root)
    write_text(target, render_index(root, runs))
    return target, len(runs)


def refresh_index(root: str, quiet: bool = False) -> None:
    """``write_index`` after a run: a failure here is logged, never the run's failure."""
    try:
        write_index(root)
    except Exception as exc:  # noqa: BLE001 -- the run is committed; the index is a convenience
        if not quiet:
            log.warning("could not update %s/index.html: %s", root, exc)
