"""Reuse an earlier run's finished shards in a new run: the re-audit's way of not paying twice.

The shard runner already skips a shard whose done-marker (``shards/<id>.json``) is in the run it
resumes, and shard ids come from the file's URL, content checksum and row range. So a new run
started as a *resume* of a folder holding the earlier run's markers and per-shard tables recomputes
only shards whose file's content changed (or that are new). Only shards whose file is unchanged --
same URL and content checksum as recorded when the earlier run was fingerprinted, whatever its size
and modification time say -- are copied: anything else would leave tables of a shard the new run
does not have.

The copy carries the earlier run's configuration hash; when the new configuration differs, the
job refuses to resume it (``RunDirError``), and the caller removes the seed and starts afresh.
"""
from __future__ import annotations

import posixpath

import fsspec
import pyarrow as pa

from connectors.runs.output import make_dirs
from connectors.runs.paths import join_under
from connectors.runs.rundir import CONFIG_FILE, read_json, work_dir, write_json


def unchanged_files(recorded: pa.Table | None, current: pa.Table) -> set[str]:
    """URLs whose content checksum now is the one recorded for the earlier run (file times play no part)."""
    if recorded is None:
        return set()
    key = lambda t: set(zip(*(t.column(c).to_pylist() for c in ("url", "sha256"))))  # noqa: E731
    return {url for url, _ in key(recorded) & key(current)}


def seed_run(previous: str, out: str, job: str, run_id: str, files: set[str]) -> int:
    """Copy ``previous``'s done-markers and per-shard tables of shards over ``files`` into the new run
    ``run_id``'s work folder, with the earlier configuration hash; returns the shards seeded (0: nothing written)."""
    fs, prev = fsspec.core.url_to_fs(previous)
    markers_dir = posixpath.join(prev, "shards")
    if not files or not fs.exists(markers_dir):
        return 0
    keep = {}
    for path in fs.ls(markers_dir, detail=False):
        if path.endswith(".json"):
            marker = read_json(_url(previous, path, prev))
            if marker.get("status") == "ok" and marker.get("file") in files:
                keep[marker["shard_id"]] = path
    if not keep:
        return 0
    target = work_dir(out, job, run_id)
    tfs, tpath = fsspec.core.url_to_fs(target)
    manifest = read_json(posixpath.join(previous, "manifest.json") if "://" in previous else f"{previous}/manifest.json")
    for path in fs.find(prev):
        rel = posixpath.relpath(path, prev)
        stem = posixpath.basename(rel).split(".", 1)[0]
        if stem in keep and rel.split("/", 1)[0] not in ("_runs",):
            dest = join_under(tpath, rel)
            make_dirs(tfs, posixpath.dirname(dest))
            tfs.pipe_file(dest, fs.cat_file(path))
    write_json(_url(target, posixpath.join(tpath, CONFIG_FILE), tpath),
               {"config_hash": manifest["config_hash"], "config": manifest.get("config"), "seeded_from": previous})
    return len(keep)


def _url(base_url: str, path: str, base_path: str) -> str:
    """``path`` (a filesystem path under ``base_path``) as a URL under ``base_url``."""
    return base_url.rstrip("/") + "/" + posixpath.relpath(path, base_path) if "://" in base_url else path


def drop_seed(out: str, job: str, run_id: str) -> None:
    fs, path = fsspec.core.url_to_fs(work_dir(out, job, run_id))
    if fs.exists(path):
        fs.rm(path, recursive=True)
