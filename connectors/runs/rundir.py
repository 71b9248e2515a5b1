"""Run directories: ``<out>/<job>/<run-id>/`` appears complete or not at all, owned by one process.

Work happens under ``<out>/<job>/.<run-id>.partial/``; finished units (shards) are written there
as they complete, so a crash loses nothing finished and ``--resume`` picks up where it stopped.
``commit`` writes ``_SUCCESS`` and renames the folder into place. Paths may be local or any
fsspec URL the workers can also reach (a shared filesystem or an object store) -- on a cluster the
workers write their shard outputs directly, nothing row-sized passes through the driver.

On an object store there is no rename: a "move" is a copy of every object and then a delete, so a
failure half way leaves two copies, or a complete-looking one (the ``.partial`` copy with its own
``_SUCCESS``). There the run is written under its final prefix ``<out>/<job>/<run-id>/`` from the
start, and the completion marker ``_SUCCESS`` is the last object written: a prefix without it is
an unfinished run (``--resume`` continues it), one with it is complete, and there is never a
second copy. Every object is written by one PUT of its whole content, which a store keeps whole
or not at all, so no reader meets half a file.

Why run ids carry milliseconds and a random suffix: two identical commands started in the same
second must get two runs, never one shared folder. Why a lock: a second process (a ``--resume``
aimed at a live run, a retried scheduler) must never write into a run another process owns. The
lock file is created with an exclusive create, holds the owner's PID and host, and is taken over
only when that process is gone (same host, PID no longer alive).

Nothing is written outside ``<out>``: the job and the run id must be path names
(``connectors.runs.paths.safe_name``), every path is joined by ``join_under``, an object store's
bucket must already exist (``connectors.runs.output.check_run_root``; it is never created), a
symbolic link below the run root on the way to the run (``<out>/<job>``, the run's folder or, on
resume, anything inside it) is refused naming it (``connectors.runs.output.refuse_links``: the run
makes no link, so one there was planted), and a failed write names the file it was writing.
"""
from __future__ import annotations

import json
import os
import posixpath
import secrets
import shutil
import socket
from datetime import datetime, timezone
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.core import url_to_fs

from connectors.runs.output import check_run_root, is_local, make_dirs, naming_output, refuse_links, write_whole
from connectors.runs.paths import join_under as join
from connectors.runs.paths import safe_name

CONFIG_FILE = "_config.json"
SUCCESS = "_SUCCESS"
LOCK_FILE = "_LOCK"
ERROR_LOG = "error.log"


class RunDirError(RuntimeError):
    """A run directory that cannot be created or resumed as asked; ``reason`` says which refusal it is
    (``config_mismatch``: a resume of a run started with another configuration), so callers never read the text."""

    def __init__(self, message: str, reason: str = "run_dir") -> None:
        super().__init__(message)
        self.reason = reason


def new_run_id(at: datetime | None = None) -> str:
    """Sortable and unique per invocation: UTC time to the millisecond plus 6 random hex digits.

    ``at``: the moment the run started (a job passes its start, so the id and the recorded start
    time agree even when planning took a while); now when not given.
    """
    now = (at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{now:%Y%m%dT%H%M%S}.{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"


def _prepare(url: str):
    fs, path = url_to_fs(url)
    make_dirs(fs, posixpath.dirname(path))
    return fs, path


def work_dir(out: str, job: str, run_id: str) -> str:
    """Where an unfinished run of ``job`` lives: ``.<run-id>.partial`` locally, its final prefix on an object store."""
    if "://" not in out:
        out = os.path.abspath(out)
    base = join(out, job)
    return join(base, f".{run_id}.partial") if is_local(url_to_fs(out)[0]) else join(base, run_id)


def is_complete(run: str) -> bool:
    """Whether the run directory or prefix ``run`` holds its completion marker."""
    fs, path = url_to_fs(join(run, SUCCESS))
    return fs.exists(path)


def write_json(url: str, obj: Any) -> None:
    """Write JSON whole or not at all (``connectors.runs.output.WholeFile``)."""
    write_whole(url, lambda fh: json.dump(obj, fh, indent=2, sort_keys=False, default=_json_default), "w")


def write_text(url: str, text: str) -> None:
    write_whole(url, lambda fh: fh.write(text), "w")


def write_parquet(url: str, table: pa.Table) -> None:
    write_whole(url, lambda fh: pq.write_table(table, fh, compression="zstd"))


def read_json(url: str) -> Any:
    with fsspec.open(url, "r", encoding="utf-8") as fh:
        return json.load(fh)


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _partials(fs, job_dir: str, local: bool) -> list[str]:
    """Run ids of the unfinished runs: ``.<id>.partial`` folders, or (object store) prefixes without ``_SUCCESS``."""
    _, job_path = url_to_fs(job_dir)
    names = [posixpath.basename(p.rstrip("/")) for p in fs.ls(job_path, detail=False)] if fs.exists(job_path) else []
    if local:
        return sorted(n[1:-len(".partial")] for n in names if n.startswith(".") and n.endswith(".partial"))
    return sorted(n for n in names if not n.startswith((".", "_")) and not is_complete(join(job_dir, n)))


def resumable_run(out: str, job: str, run_id: str | None) -> str:
    """The run ``--resume`` continues: ``run_id`` when it is unfinished under ``<out>/<job>``, else the
    latest unfinished one; a ``RunDirError`` naming the runs there otherwise. Reads only the job's
    folder listing, so a job can call it before planning or reading any input (``coreset build``
    refuses an unknown id at once, not after reading the whole table)."""
    if "://" not in out:
        out = os.path.abspath(out)
    safe_name(job, "job")
    if run_id is not None:
        safe_name(run_id, "--run-id")
    fs, _ = url_to_fs(out)
    local, job_dir = is_local(fs), join(out, job)
    partials = _partials(fs, job_dir, local)
    if run_id is None:
        if not partials:
            raise RunDirError(f"--resume: no unfinished run under {job_dir}")
        return partials[-1]
    if run_id not in partials:
        if is_complete(join(job_dir, run_id)) or (local and fs.exists(url_to_fs(join(job_dir, run_id))[1])):
            raise RunDirError(f"--resume: run {run_id} is already complete ({join(job_dir, run_id)})")
        known = ", ".join(partials[-5:]) or "none"
        raise RunDirError(f"--resume: no unfinished run {run_id!r} under {job_dir}; resumable runs: {known}")
    return run_id


def remove_if_only_folders(path: str) -> None:
    """Remove the local folder ``path`` when it holds no file at any depth (only empty folders): what a run that
    did no work leaves of a run root it made."""
    if any(files for _, _, files in os.walk(path)):
        return
    shutil.rmtree(path, ignore_errors=True)


class RunDir:
    """One run of one job, owned by this process until ``commit`` or ``release``.

    ``resume=True`` reopens the partial folder of ``run_id`` (or of the latest unfinished run),
    which must exist, have been started with the same configuration and not be owned by a live
    process.
    """

    def __init__(self, out: str, job: str, run_id: str | None, config: dict, config_hash: str, resume: bool):
        if "://" not in out:
            out = os.path.abspath(out)  # workers may not share the driver's working directory
        safe_name(job, "job")
        if run_id is not None:
            safe_name(run_id, "--run-id")
        check_run_root(out)
        self.fs, _ = url_to_fs(out)
        self.local = is_local(self.fs)  # else an object store: no rename, the marker is written last
        self.job_dir = join(out, job)
        if resume:
            run_id = resumable_run(out, job, run_id)
        self.run_id = run_id or new_run_id()
        self.final = join(self.job_dir, self.run_id)
        self.partial = work_dir(out, job, self.run_id)
        self.out = out
        for url in (self.partial, self.final):
            refuse_links(out, url)
        if is_complete(self.final) or (self.local and self.fs.exists(url_to_fs(self.final)[1])):
            raise RunDirError(f"run directory {self.final} already exists; choose another --run-id")
        exists = self.fs.exists(url_to_fs(self.partial)[1])
        if exists and not resume:
            raise RunDirError(f"an unfinished run is at {self.partial}; pass --resume to continue it or choose another --run-id")
        self.resumed = exists
        if exists:
            self._refuse_links_inside()
            self._lock()
            saved = read_json(self.path(CONFIG_FILE))
            if saved.get("config_hash") != config_hash:
                self.release()
                raise RunDirError(
                    f"cannot resume {self.partial}: it was started with a different configuration "
                    f"(hash {saved.get('config_hash', '?')[:12]} vs {config_hash[:12]}); start a new run instead",
                    reason="config_mismatch")
            return
        make_dirs(self.fs, url_to_fs(self.partial)[1])
        try:
            self._lock()
            write_json(self.path(CONFIG_FILE), {"config_hash": config_hash, "config": config})
        except BaseException:  # a disk full here leaves no folder behind that holds nothing
            self._remove_partial()
            raise

    def _refuse_links_inside(self) -> None:
        """A resumed run's own folder holds no link either (one planted there since, say ``data -> /elsewhere``)."""
        if not self.local:
            return
        for folder, dirs, files in os.walk(url_to_fs(self.partial)[1]):
            for name in dirs + files:
                if os.path.islink(os.path.join(folder, name)):
                    refuse_links(self.out, os.path.join(folder, name))


    # -- ownership ----------------------------------------------------------------------------
    def _lock(self) -> None:
        """Take the run's lock, or fail naming the process that holds it."""
        owner = {"pid": os.getpid(), "host": socket.gethostname(), "run_id": self.run_id,
                 "since": datetime.now(timezone.utc).isoformat()}
        url = self.path(LOCK_FILE)
        fs, path = url_to_fs(url)
        for _ in range(2):
            try:
                with naming_output(url), fs.open(path, "xb") as fh:
                    fh.write(json.dumps(owner).encode())
                self._owner = owner
                return
            except FileExistsError:
                holder = self._holder()
                if holder and holder.get("host") == owner["host"] and not _pid_alive(int(holder.get("pid", -1))):
                    fs.rm(path)  # stale: its process is gone (a crash or kill -9)
                    continue
                where = f"process {holder.get('pid')} on {holder.get('host')}" if holder else "another process"
                raise RunDirError(f"run {self.run_id} is in use by {where} (lock {url}); wait for it to finish, "
                                  "or delete the lock if that process is gone") from None
        raise RunDirError(f"could not take the lock {url}")

    def _holder(self) -> dict | None:
        try:
            return read_json(self.path(LOCK_FILE))
        except (OSError, ValueError):
            return None

    def release(self) -> None:
        """Give up ownership (the partial folder stays for --resume)."""
        fs, path = url_to_fs(self.path(LOCK_FILE))
        holder = self._holder()
        if holder and holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
            fs.rm(path)

    # -- paths and commit -----------------------------------------------------------------------
    def path(self, *parts: str) -> str:
        return join(self.partial, *parts)

    def write_error_log(self, text: str) -> str:
        write_text(self.path(ERROR_LOG), text)
        return self.path(ERROR_LOG)

    def holds_finished_work(self) -> bool:
        """Whether the run holds work worth resuming: it was resumed, or a shard has finished."""
        fs, shards = url_to_fs(self.path("shards"))
        return self.resumed or (fs.exists(shards) and any(p.endswith(".json") for p in fs.ls(shards, detail=False)))

    def discard(self) -> None:
        """Remove the unfinished run: for a run that failed before doing any work (``holds_finished_work``
        is false; Ray did not start), so it leaves no empty unfinished run behind."""
        self.release()
        self._remove_partial()

    def _remove_partial(self) -> None:
        fs, path = url_to_fs(self.partial)
        if fs.exists(path):
            fs.rm(path, recursive=True)

    def _remove(self, name: str) -> None:
        fs, path = url_to_fs(self.path(name))
        if fs.exists(path):
            fs.rm(path)

    def commit(self) -> str:
        """Mark complete and move into place; returns the final location.

        Object store: nothing moves. The lock goes first and ``_SUCCESS`` is written last, so a
        commit cut short leaves an unlocked, unfinished run that ``--resume`` completes (its
        ``_config.json`` is removed only after the marker, for that resume).
        """
        self._remove(ERROR_LOG)
        if not self.local:
            self._remove(LOCK_FILE)
            write_text(self.path(SUCCESS), "")
            self._remove(CONFIG_FILE)
            return self.final
        self._remove(CONFIG_FILE)
        write_text(self.path(SUCCESS), "")
        self.fs.mv(url_to_fs(self.partial)[1], url_to_fs(self.final)[1], recursive=True)
        fs, lock = url_to_fs(join(self.final, LOCK_FILE))  # held until the partial folder is gone
        if fs.exists(lock):
            fs.rm(lock)
        return self.final
