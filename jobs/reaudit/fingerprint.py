"""What an audit reads, by content: a hash per benchmark item (of the fields the audit reads) and per input file.

Why content and not file times: a copied, re-downloaded or touched file has a new modification
time and the same content, and must not trigger a rerun; an edited item must, even when the file
keeps its size. Files are hashed by the store's content checksum where it has one (an S3 ETag, a
GCS md5) and otherwise by reading their bytes (``connectors.io.fs.FileRef.checksum``, the same
checksum the shard ids are made of).

Benchmark items are read through ``connectors.benchmarks`` (the same reader the jobs use), so an
item's id and fields are the ones the audit sees. A corpus is fingerprinted by file: its records
are read only by the audit itself, on the cluster, never on the driver.
"""
from __future__ import annotations

import hashlib
import json
import os
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import fsspec
import pyarrow as pa
from pydantic import BaseModel

from connectors.benchmarks.read import iter_benchmark_batches
from connectors.benchmarks.schema import ITEM_SCHEMA
from connectors.io.fs import FileRef, expand

ITEM_FIELDS = tuple(n for n in ITEM_SCHEMA.names if n not in ("id", "benchmark"))
FILES_SCHEMA = pa.schema([("input", pa.string()), ("url", pa.string()), ("size", pa.int64()), ("stamp", pa.string()),
                          ("sha256", pa.string())])
ITEMS_SCHEMA = pa.schema([("input", pa.string()), ("item_id", pa.string()), ("sha256", pa.string())])


@dataclass(frozen=True)
class Fingerprints:
    """An audit's inputs: their files (url, size, stamp, content hash) and their items (id, content hash)."""

    files: pa.Table
    items: pa.Table

    def digest(self) -> dict[str, str]:
        """One hash per input over its items' hashes, in id order."""
        out: dict[str, hashlib._Hash] = {}
        rows = sorted(zip(*(self.items.column(c).to_pylist() for c in ("input", "item_id", "sha256"))))
        for name, item, h in rows:
            out.setdefault(name, hashlib.sha256()).update(f"{item}\t{h}\n".encode())
        return {k: v.hexdigest() for k, v in out.items()}


def read_fields(job: str, config: BaseModel) -> tuple[str, ...]:
    """The item fields an audit reads: conventions scans its --fields; the others read every field."""
    if job == "conventions":
        return tuple(f for f in ITEM_FIELDS if f in getattr(config, "fields", ITEM_FIELDS))
    return ITEM_FIELDS


def _item_hash(row: dict, fields: tuple[str, ...]) -> str:
    return hashlib.sha256(json.dumps([row[f] for f in fields], ensure_ascii=False).encode("utf-8")).hexdigest()


def _paths_in(value: object) -> Iterator[str]:
    """Strings of a config that name files: existing local paths, or URLs."""
    if isinstance(value, str):
        url = "://" in value[:16] and not value.startswith(("http://", "https://"))
        if url or os.path.exists(value):
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _paths_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _paths_in(v)


def _as_given(given: str, ref: FileRef) -> str:
    """A file's id as the plan names it: the path given, or the path given plus the part below it (a folder or a
    glob), never the absolute location -- the same inputs on another machine (a cluster's working dir) keep their ids."""
    fs, base = fsspec.core.url_to_fs(given)
    _, path = fsspec.core.url_to_fs(ref.url)
    root = base.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
    root = root if root == base else posixpath.dirname(root)
    if path == base:
        return given
    if path.startswith(root.rstrip("/") + "/"):
        head = given.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
        head = head if root == base else posixpath.dirname(head)
        return f"{head.rstrip('/')}/{path[len(root.rstrip('/')) + 1:]}"
    return ref.url


def _given_items(name: str, given: str, rows: list[dict], refs: list[FileRef]) -> list[dict]:
    return [{"input": name, "item_id": _as_given(given, ref), "sha256": r["sha256"]} for r, ref in zip(rows, refs)]


def _file_rows(name: str, refs: Iterable[FileRef]) -> list[dict]:
    return [{"input": name, "url": r.url, "size": r.size, "stamp": r.stamp, "sha256": r.checksum} for r in refs]


def fingerprint(job: str, config: BaseModel, ignore: Iterable[str] = ()) -> Fingerprints:
    """The files and items ``config`` makes the audit read (benchmarks by item, corpora and other files by file);
    ``ignore``: paths the caller accounts for itself (the re-audit's own models file)."""
    files: list[dict] = []
    items: list[dict] = []
    seen: set[str] = set()
    fields = read_fields(job, config)
    for bench in getattr(config, "benchmark_configs", lambda: [])():
        spec = bench.to_spec()
        from connectors.benchmarks.read import benchmark_files
        from connectors.benchmarks.shards import file_ref

        refs = [file_ref(u) for u in benchmark_files(spec)]
        files += _file_rows(bench.name, refs)
        seen.update(r.url for r in refs)
        for batch in iter_benchmark_batches(spec):
            for row in batch.to_pylist():
                items.append({"input": bench.name, "item_id": row["id"], "sha256": _item_hash(row, fields)})
    if hasattr(config, "corpus_configs"):
        from connectors.captions.presets import EXTENSIONS

        for corpus in config.corpus_configs():
            spec = corpus.to_spec(None)
            for given in spec.paths:
                refs = expand(given, EXTENSIONS[spec.format])
                rows = _file_rows(corpus.name, refs)
                files += rows
                items += _given_items(corpus.name, given, rows, refs)
                seen.update(r.url for r in refs)
    for path in _paths_in(config.model_dump()):  # any other file the options name (a models YAML, a template, a table)
        if path in ignore:
            continue
        try:
            refs = [r for r in expand(path, ("",)) if r.url not in seen]
        except (FileNotFoundError, OSError, ValueError):
            continue
        seen.update(r.url for r in refs)
        rows = _file_rows(path, refs)
        files += rows
        items += _given_items(path, path, rows, refs)
    return Fingerprints(pa.Table.from_pylist(files, schema=FILES_SCHEMA), pa.Table.from_pylist(items, schema=ITEMS_SCHEMA))


def item_changes(old: pa.Table | None, new: pa.Table) -> dict[str, dict[str, list[str]]]:
    """Per input: the item ids added, removed and changed (same id, other content) from ``old`` to ``new``."""
    def index(t: pa.Table | None) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        if t is not None:
            for name, item, h in zip(*(t.column(c).to_pylist() for c in ("input", "item_id", "sha256"))):
                out.setdefault(name, {})[item] = h
        return out

    before, after = index(old), index(new)
    changes = {}
    for name in list(before) + [n for n in after if n not in before]:
        b, a = before.get(name, {}), after.get(name, {})
        changes[name] = {"added": sorted(set(a) - set(b)), "removed": sorted(set(b) - set(a)),
                         "changed": sorted(k for k in set(a) & set(b) if a[k] != b[k])}
    return changes
