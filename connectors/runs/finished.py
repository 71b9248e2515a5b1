"""Reading finished run directories (their summary.json) back, for jobs that build on other runs."""
from __future__ import annotations

import json
import logging

import fsspec
from fsspec.core import url_to_fs

log = logging.getLogger(__name__)


def read_run_summary(run: str, job: str) -> dict:
    """summary.json of a finished run of ``job``; another job's run is an error, not a silent mix-up."""
    url = f"{run.rstrip('/')}/summary.json"
    fs, path = url_to_fs(url)
    if not fs.exists(path):
        raise FileNotFoundError(f"{run}: no summary.json (not a finished benchaudit run directory)")
    with fsspec.open(url, "r", encoding="utf-8") as fh:
        summary = json.load(fh)
    if summary.get("job") != job:
        raise ValueError(f"{run}: a {summary.get('job')!r} run, expected a {job!r} run")
    return summary


def read_run_dirs(root: str) -> list:
    """Every finished run directory ``<root>/<job>/<run-id>/`` (manifest + summary) as run-store entries.

    Why beside the run store (``connectors.runs.store``): runs written before the store existed, or a
    run root copied without its ``_runs/``, still list; a run the store also holds is the store's.
    Unfinished runs (``.<id>.partial``) are the store's to report.
    """
    from connectors.runs.store import STORE_DIR, RunEntry

    fs, base = url_to_fs(root)
    if not fs.exists(base):
        return []
    out = []
    for job_dir in sorted(fs.ls(base, detail=False)):
        name = job_dir.rstrip("/").rsplit("/", 1)[-1]
        if name.startswith((".", "_")) or name == STORE_DIR or not fs.isdir(job_dir):
            continue
        for run_dir in sorted(fs.ls(job_dir, detail=False)):
            run_id = run_dir.rstrip("/").rsplit("/", 1)[-1]
            if run_id.startswith(".") or not fs.exists(f"{run_dir}/_SUCCESS"):
                continue
            try:
                manifest = _object(json.loads(fs.cat_file(f"{run_dir}/manifest.json")), "manifest.json")
                summary = (_object(json.loads(fs.cat_file(f"{run_dir}/summary.json")), "summary.json")
                           if fs.exists(f"{run_dir}/summary.json") else {})
                out.append(RunEntry(run_id=run_id, job=manifest.get("job", name), status="complete", path=run_dir,
                                    started_at=manifest.get("started_at"), finished_at=manifest.get("finished_at"),
                                    config_hash=manifest.get("config_hash"), config=manifest.get("config_non_default"),
                                    inputs=manifest.get("inputs") or {},
                                    headline=summary.get("headline") or []))
            except (OSError, ValueError) as exc:  # a run directory edited by hand: left out, never fatal
                log.warning("runs: skipping %s (%s)", run_dir, " ".join(str(exc).split()))
    return out


def _object(data: object, name: str) -> dict:
    if not isinstance(data, dict):
        raise ValueError(f"{name} is not a JSON object")
    return data


def list_all_runs(root: str) -> list:
    """The runs of a run root: the run store's entries (``<root>/_runs``), plus finished run
    directories it does not list; oldest first."""
    from connectors.runs.store import list_runs, store_of

    stored = list_runs(store_of(root))
    seen = {(e.job, e.run_id) for e in stored}
    found = stored + [e for e in read_run_dirs(root) if (e.job, e.run_id) not in seen]
    return sorted(found, key=lambda e: (e.started_at or "", e.run_id))
