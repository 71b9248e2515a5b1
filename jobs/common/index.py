"""The index of runs: ``<run-root>/index.html``, every run by job with its headline, and trends.

Written after every run (``JobRun.commit``) and by ``benchaudit report index``. Runs come from the
run store (``connectors.runs.store``) and, for runs it does not hold, from the run directories
themselves (``connectors.runs.finished.list_all_runs``). A trend plot is drawn per job and headline metric
with one line per input (benchmark, corpus, model), over the complete runs that report it.
"""
from __future__ import annotations

import logging
import os
import posixpath
from collections import defaultdict

from connectors.runs.finished import list_all_runs
from connectors.runs.rundir import join, write_text
from jobs.common.html import esc, fmt, interval, line_chart, note, page, table

log = logging.getLogger(__name__)
HEADLINE_SHOWN = 6  # headline rows shown per run in the table (all of them are in summary.json)


def _when(stamp: str | None) -> str:
    return (stamp or "")[:19].replace("T", " ") or "–"


def _inputs(run) -> str:
    """The run's inputs as its headline names them (benchmarks, corpora, models), else the manifest's keys."""
    names = list(dict.fromkeys(h["input"] for h in run.headline)) or (list(run.inputs) if isinstance(run.inputs, dict) else [])
    shown = ", ".join(names[:4]) + (f" (+{len(names) - 4})" if len(names) > 4 else "")
    return f'<span class="long">{esc(shown)}</span>' if shown else "–"


def _headline_cell(rows: list[dict]) -> str:
    parts = [f"{esc(r['input'])} · {esc(r['metric'])} = {fmt(r['value'])}"
             + (f" {interval(r['ci_low'], r['ci_high'])}" if r.get("ci_low") is not None else "") for r in rows[:HEADLINE_SHOWN]]
    more = f"<br>… {len(rows) - HEADLINE_SHOWN} more in summary.json" if len(rows) > HEADLINE_SHOWN else ""
    return f'<span class="long">{"<br>".join(parts)}{more}</span>' if parts else "–"


def _relative(root: str, path: str) -> str:
    root_path = root.split("://", 1)[-1].rstrip("/")
    path = path.split("://", 1)[-1]
    return posixpath.relpath(path, root_path) if path.startswith(root_path) else path


def _x_labels(runs: list) -> dict[str, str]:
    """Each run's place on a trend's x axis: its start time (to the second), its id too when two share one."""
    when = {r.run_id: _when(r.started_at)[5:19] for r in runs}
    shared = {t for t in when.values() if list(when.values()).count(t) > 1}
    return {rid: f"{t} {rid}" if t in shared else t for rid, t in when.items()}


def _trends(job: str, runs: list) -> list[str]:
    series: dict[str, dict[str, list[tuple[str, float]]]] = defaultdict(lambda: defaultdict(list))
    done = sorted((r for r in runs if r.status == "complete"), key=lambda e: (e.started_at or "", e.run_id))
    x = _x_labels(done)
    for r in done:
        for h in r.headline:
            if isinstance(h.get("value"), (int, float)) and not isinstance(h.get("value"), bool):
                series[h["metric"]][h["input"]].append((x[r.run_id], h["value"]))
    charts = []
    for metric, by_input in series.items():
        if max(len(v) for v in by_input.values()) < 2:
            continue  # a trend needs two runs
        charts.append(line_chart(dict(by_input), f"{job} · {metric}", width=500))
    return charts


def render_index(root: str, runs: list) -> str:
    by_job: dict[str, list] = defaultdict(list)
    for r in runs:
        by_job[r.job].append(r)
    body = [note(f"Run root {root}: {len(runs):,} run(s) of {len(by_job)} job(s). Each row links its report; headline "
                 "metrics are the few numbers a job's summary.json tracks across runs (intervals in brackets).")]
    if not runs:
        body.append("<p>No runs yet.</p>")
    for job, rows in sorted(by_job.items()):
        body.append(f"<section><h2>{esc(job)}</h2>")
        newest = sorted(rows, key=lambda e: (e.started_at or "", e.run_id), reverse=True)
        cells = []
        for r in newest:
            rel = _relative(root, r.path)
            link = f'<a href="{esc(rel)}/report.html">{esc(r.run_id)}</a>' if r.status == "complete" else esc(r.run_id)
            status = esc(r.status) + (f": {esc(r.error)}" if r.error else "")
            cells.append([link, status, esc(_when(r.started_at)), esc(_when(r.finished_at)), _inputs(r),
                          _headline_cell(r.headline)])
        body.append(table(["run", "status", "started (UTC)", "finished (UTC)", "inputs", "headline"], cells,
                          collapse_after=40, what="runs"))
        charts = _trends(job, rows)
        if charts:
            body.append('<h3>Trends across runs</h3><div class="flex">' + "".join(charts) + "</div>")
        body.append("</section>")
    return page("benchaudit runs", "".join(body))


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
