"""The run store: one small JSON entry per run, under a local directory or an object-store prefix.

    <store>/entries/<job>/<run-id>.json      one entry per run (RunEntry), rewritten as the run moves on

Why one file per run and no shared index file: two runs that finish at once each write their own
entry, so neither can lose the other's (a shared index rewritten by two writers keeps only the
last one's view). The index *is* the listing: ``list_runs`` reads every entry. Each entry is
written whole or not at all -- locally under a temporary name and renamed, on an object store by
one PUT, which stores an object whole -- so a reader never meets half an entry; names starting
with ``.`` (temporaries) are never read. An entry that is not what ``record_run`` writes (edited
by hand, truncated, a JSON array, a field of the wrong type) is left out with a one-line warning
naming its file: one odd file never hides the history.

An entry is written when a run starts (``incomplete``), when it stops (``failed`` when a rerun
would meet the same error, else ``incomplete``: ``--resume`` can finish it) and when it commits
(``complete``). A run killed outright stays ``incomplete``, which is what it is.

``code_version`` says which code produced a run: the package version plus a hash of the source
and data files a job can reach through its imports, so a change to code a job never imports does
not make its old runs look stale.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import posixpath
from dataclasses import MISSING, asdict, dataclass, field, fields
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from fsspec.core import url_to_fs

from connectors.runs.code_graph import module_files, module_imports
from connectors.runs.output import is_local, refuse_links, write_whole
from connectors.runs.paths import join_under, safe_name

Status = Literal["complete", "incomplete", "failed"]
STATUSES = ("complete", "incomplete", "failed")
ENTRIES = "entries"
STORE_DIR = "_runs"  # the store of a run root: <out>/_runs
log = logging.getLogger(__name__)


class RunStoreError(ValueError):
    """A run id that names no run, or names several."""


@dataclass(frozen=True)
class RunEntry:
    """What the history keeps of one run (the index row)."""

    run_id: str
    job: str
    status: Status
    path: str  # the run directory (complete: it holds _SUCCESS)
    started_at: str | None = None
    finished_at: str | None = None
    config_hash: str | None = None
    config: dict[str, Any] | None = None  # the options that differ from the job's defaults (None: recorded before this field)
    code_version: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)  # name -> {fingerprint, files, ...} as the manifest has them
    headline: list[dict] = field(default_factory=list)  # summary.json's tidy rows {input, metric, value, ci_low, ci_high}
    error: str | None = None  # the one-line error of a run that stopped
    resumable: bool = False

    def __post_init__(self) -> None:
        """Refuse an entry every reader could not use as it is (``runs show`` formats the headline
        values, ``list_runs`` sorts by id and start time): a wrong type fails here, by field name."""
        for name in ("run_id", "job", "path"):
            _expect(name, getattr(self, name), str)
        for name in ("started_at", "finished_at", "config_hash", "code_version", "error"):
            _expect(name, getattr(self, name), (str, type(None)))
        if self.status not in STATUSES:
            raise ValueError(f"run {self.run_id}: status {self.status!r} is not one of {STATUSES}")
        _expect("inputs", self.inputs, dict)
        _expect("headline", self.headline, list)
        _expect("resumable", self.resumable, bool)
        for i, row in enumerate(self.headline):
            _expect(f"headline[{i}]", row, dict)
            for key in ("input", "metric"):
                _expect(f"headline[{i}].{key}", row.get(key), str)
            for key in ("value", "ci_low", "ci_high"):
                _expect(f"headline[{i}].{key}", row.get(key), (int, float, type(None)))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> RunEntry:
        """The entry ``data`` (a parsed JSON object) holds; ``ValueError`` naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {_json_kind(data)}")
        known = {f.name for f in fields(cls)}
        missing = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING and f.name not in data]
        if missing:
            raise ValueError(f"missing field(s) {missing}")
        return cls(**{k: v for k, v in data.items() if k in known})


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _expect(name: str, value: Any, kind: type | tuple[type, ...]) -> None:
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,))):
        raise ValueError(f"field {name!r}: expected {_names(kind)}, got {_json_kind(value)}")


def _names(kind: type | tuple[type, ...]) -> str:
    words = {str: "a string", dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number",
             type(None): "null"}
    return " or ".join(dict.fromkeys(words[k] for k in (kind if isinstance(kind, tuple) else (kind,))))


def store_of(out: str) -> str:
    """The run store of a run root (``--out``): ``<out>/_runs``."""
    out = out if "://" in out else os.path.abspath(out)
    return join_under(out, STORE_DIR)


def record_run(root: str, entry: RunEntry) -> str:
    """Write (or rewrite) the entry of ``entry.run_id``; returns its URL."""
    refuse_links(posixpath.dirname(root.rstrip("/")), entry_url(root, entry.job, entry.run_id))  # the run root: <root>/..
    data = json.dumps(entry.to_json(), indent=1, default=str).encode("utf-8")
    write_whole(entry_url(root, entry.job, entry.run_id), lambda fh: fh.write(data))
    return entry_url(root, entry.job, entry.run_id)


def entry_url(root: str, job: str, run_id: str) -> str:
    """Where the entry of ``run_id`` lives: ``<root>/entries/<job>/<run-id>.json`` (both path names)."""
    return join_under(root, ENTRIES, safe_name(job, "job"), f"{safe_name(run_id, '--run-id')}.json")


def drop_run(root: str, job: str, run_id: str) -> None:
    """Remove the entry of a run that left nothing behind (it failed before any work)."""
    fs, path = url_to_fs(entry_url(root, job, run_id))
    if fs.exists(path):
        fs.rm(path)


def list_runs(root: str, job: str | None = None) -> list[RunEntry]:
    """Every run recorded under ``root`` (of ``job`` when given), oldest first.

    An entry that cannot be parsed (edited by hand) is left out with a warning naming it, so one
    bad file never hides the history.
    """
    fs, base = url_to_fs(join_under(root, ENTRIES, job) if job else join_under(root, ENTRIES))
    if not fs.exists(base):
        return []
    paths = [p for p in fs.find(base) if p.endswith(".json") and not posixpath.basename(p).startswith(".")]
    blobs = fs.cat(paths, on_error="return") if paths else {}
    if not isinstance(blobs, dict):  # one path: fsspec returns its bytes, not a mapping
        blobs = {paths[0]: blobs}
    out = []
    for path in paths:
        try:
            if isinstance(blobs[path], Exception):
                raise blobs[path]
            out.append(RunEntry.from_json(json.loads(blobs[path])))
        except (OSError, ValueError, TypeError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            where = path if is_local(fs) else fs.unstrip_protocol(path)
            log.warning("run store: skipping unreadable entry %s (%s)", where, " ".join(str(exc).split()) or type(exc).__name__)
    return sorted(out, key=lambda e: (e.started_at or "", e.run_id))


def get_run(root: str, run_id: str, job: str | None = None) -> RunEntry:
    """The run whose id is ``run_id`` or starts with it (a unique prefix is enough)."""
    runs = list_runs(root, job)
    exact = [e for e in runs if e.run_id == run_id]
    found = exact or [e for e in runs if e.run_id.startswith(run_id)]
    if len(found) == 1:
        return found[0]
    where = f" of job {job}" if job else ""
    if not found:
        latest = ", ".join(e.run_id for e in runs[-3:]) or "none"
        raise RunStoreError(f"no run {run_id!r}{where} in {root} (latest: {latest})")
    raise RunStoreError(f"run id {run_id!r}{where} is ambiguous in {root}: {', '.join(e.run_id for e in found[:5])}")


# -- code version ---------------------------------------------------------------------------------
def _project_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _data_files(directory: Path) -> list[Path]:
    """Non-Python files of a package folder and of its data folders (sub-folders that are not packages)."""
    out = [p for p in directory.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")]
    for sub in directory.iterdir():
        if sub.is_dir() and sub.name != "__pycache__" and not (sub / "__init__.py").exists():
            out += [p for p in sub.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return out


@lru_cache(maxsize=64)
def code_version(package: str) -> str:
    """``<version>+<sha256[:12]>`` of the code ``package`` (e.g. ``jobs.geo``) can run.

    The hash covers every project module reachable from the package's modules through their
    imports, and the data files of the folders those modules live in (lexicons, inventories,
    templates), read as bytes: content, never file times.
    """
    root = _project_root()
    files = module_files(root)
    known = set(files)
    todo = [m for m in known if m == package or m.startswith(package + ".")]
    if not todo:
        raise ValueError(f"code_version: no project package {package!r} under {root}")
    seen: set[str] = set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += [i for i in module_imports(m, files[m], known) if i not in seen]
    paths = {files[m] for m in seen}
    for directory in {p.parent for p in list(paths)}:
        paths.update(_data_files(directory))
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    try:
        version = metadata.version("benchaudit")
    except metadata.PackageNotFoundError:
        version = "0"
    return f"{version}+{h.hexdigest()[:12]}"
