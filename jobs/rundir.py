"""Run directories: ``<out>/<job>/<run-id>/`` appears complete or not at all.

Work happens under ``<out>/<job>/.<run-id>.partial/``; finished units (shards) are written there
as they complete, so a crash loses nothing finished and ``--resume`` picks up where it stopped.
``commit`` writes ``_SUCCESS`` and renames the folder into place. Paths may be local or any
fsspec URL the workers can also reach (a shared filesystem or an object store) — on a cluster the
workers write their shard outputs directly, nothing row-sized passes through the driver.
"""
from __future__ import annotations

import json
import os
import posixpath
import uuid
from datetime import datetime, timezone
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.core import url_to_fs

CONFIG_FILE = "_config.json"


class RunDirError(RuntimeError):
    """A run directory that cannot be created or resumed as asked."""


def new_run_id(config_hash: str) -> str:
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{config_hash[:8]}"


def _join(base: str, *parts: str) -> str:
    return posixpath.join(base.rstrip("/"), *parts) if "://" in base else "/".join([base.rstrip("/"), *parts])


def _prepare(url: str):
    fs, path = url_to_fs(url)
    fs.makedirs(posixpath.dirname(path), exist_ok=True)
    return fs, path


def write_json(url: str, obj: Any) -> None:
    """Write JSON atomically where the filesystem allows (temporary name, then rename)."""
    fs, path = _prepare(url)
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    with fs.open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, sort_keys=False, default=_json_default)
    fs.mv(tmp, path)


def write_text(url: str, text: str) -> None:
    fs, path = _prepare(url)
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    with fs.open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    fs.mv(tmp, path)


def write_parquet(url: str, table: pa.Table) -> None:
    fs, path = _prepare(url)
    tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    with fs.open(tmp, "wb") as fh:
        pq.write_table(table, fh, compression="zstd")
    fs.mv(tmp, path)


def read_json(url: str) -> Any:
    with fsspec.open(url, "r", encoding="utf-8") as fh:
        return json.load(fh)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


class RunDir:
    """One run of one job. ``resume=True`` reopens the partial folder of the same run id."""

    def __init__(self, out: str, job: str, run_id: str | None, config: dict, config_hash: str, resume: bool):
        if "://" not in out:
            out = os.path.abspath(out)  # workers may not share the driver's working directory
        self.fs, _ = url_to_fs(out)
        self.job_dir = _join(out, job)
        if resume and run_id is None:
            run_id = self._latest_partial()
        self.run_id = run_id or new_run_id(config_hash)
        self.final = _join(self.job_dir, self.run_id)
        self.partial = _join(self.job_dir, f".{self.run_id}.partial")
        if self.fs.exists(url_to_fs(self.final)[1]):
            raise RunDirError(f"run directory {self.final} already exists; choose another --run-id")
        exists = self.fs.exists(url_to_fs(self.partial)[1])
        if exists and not resume:
            raise RunDirError(f"an unfinished run is at {self.partial}; pass --resume to continue it or choose another --run-id")
        if exists:
            saved = read_json(self.path(CONFIG_FILE))
            if saved.get("config_hash") != config_hash:
                raise RunDirError(
                    f"cannot resume {self.partial}: it was started with a different configuration "
                    f"(hash {saved.get('config_hash', '?')[:12]} vs {config_hash[:12]}); start a new run instead"
                )
        else:
            self.fs.makedirs(url_to_fs(self.partial)[1], exist_ok=True)
            write_json(self.path(CONFIG_FILE), {"config_hash": config_hash, "config": config})
        self.resumed = exists

    def _latest_partial(self) -> str:
        _, job_path = url_to_fs(self.job_dir)
        names = [posixpath.basename(p.rstrip("/")) for p in self.fs.ls(job_path, detail=False)] if self.fs.exists(job_path) else []
        partials = sorted(n[1:-len(".partial")] for n in names if n.startswith(".") and n.endswith(".partial"))
        if not partials:
            raise RunDirError(f"--resume: no unfinished run under {self.job_dir}")
        return partials[-1]

    def path(self, *parts: str) -> str:
        return _join(self.partial, *parts)

    def makedirs(self, *parts: str) -> str:
        url = self.path(*parts)
        self.fs.makedirs(url_to_fs(url)[1], exist_ok=True)
        return url

    def commit(self) -> str:
        """Mark complete and move into place; returns the final location."""
        write_text(self.path("_SUCCESS"), "")
        self.fs.rm(url_to_fs(self.path(CONFIG_FILE))[1])
        self.fs.mv(url_to_fs(self.partial)[1], url_to_fs(self.final)[1], recursive=True)
        return self.final
