"""The one shard descriptor: a unit of a sharded scan as a planner describes it, the runner ships it
to a worker and a reader reads it.

Why one type: the planners (``connectors.captions.corpus``, ``connectors.benchmarks.shards``, a
job's own inputs) and the runner (``jobs.common.runtime.shards``) hand the same object along; it crosses to
a Ray worker as JSON (``to_json``/``from_json``) and comes back as itself, typed, with nothing
rebuilt by hand.

Why ``shard_id`` keys on content: ``--resume`` and the re-audit's reuse of an earlier run's shards
skip a shard whose id they have finished. An id made from the file's size and modification time
would reuse the old counts of a file edited in place at equal size and time (``cp -p``, ``rsync
-t``, a restore); an id made from the content checksum (the store's, or the bytes' sha256) reruns
exactly the shards whose content changed, and nothing for a copied or touched file.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shard:
    """One unit of work: where it comes from and which part of it, what it is expected to hold.

    A file range (``start``/``stop``, Parquet ``row_groups``), a whole file (the defaults), or a set
    of items named by id (``items``: an answer set's questions).
    """

    shard_id: str  # ``shard_id(...)`` of the fields below and the source's content
    input: str  # the benchmark / corpus / answer set it belongs to
    source: str  # file URL or other origin, named in every error
    format: str = ""  # the reader's format ("parquet", "jsonl", ...); "" where the reader decides
    row_groups: tuple[int, ...] = ()  # Parquet row groups to read; () for all of them
    start: int = 0  # the shard's first row in its file (record ids count from it)
    stop: int | None = None  # the row after its last, None: to the end of the file
    items: tuple[str, ...] = ()  # the ids of the items it holds, when a shard is a set of items
    expected_rows: int | None = None
    limit: int | None = None  # --limit: read at most this many rows of the shard
    estimated: bool = False  # expected_rows is an expectation from the bytes (lines, tar samples), not a footer count
    size_bytes: int | None = None  # the stored size of its file: what sizes a shard whose rows are unknown up front

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Shard:
        data = json.loads(text)
        return cls(**{**data, "row_groups": tuple(data["row_groups"]), "items": tuple(data["items"])})

    def limited(self, limit: int) -> Shard:
        return dataclasses.replace(self, limit=limit)


def shard_id(input: str, content: str, *selection: Any) -> str:
    """The id of a shard of ``input``: a hash of its name, the content checksum of what it reads
    (a file's ``FileRef.checksum``, a hash of its rows) and what it selects of it (row range, row
    groups, the configuration its results depend on), never a file time."""
    text = json.dumps([input, content, [repr(s) for s in selection]], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
