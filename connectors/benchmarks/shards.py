"""Planning a benchmark scan as shards: one per input file, or per item range of a large Parquet file.

Why plan on the driver: every file's columns are checked against the preset or field mapping
before any task starts (a missing field names the file and the fields), an input without a single
item is an error before any work, and each shard (``connectors.io.shards.Shard``) gets an id derived
from the file's URL, content checksum and row range (never its time), so ``--resume`` skips exactly
the shards that are finished and reruns a file whose content changed. Row counts are known up front only for Parquet (its footer); a
Parquet file with more than ``shard_items`` rows is split into item ranges, any other file is one
shard (JSON arrays, HellaSwag's text release and HF folders are read whole by their format).
"""
from __future__ import annotations

from dataclasses import dataclass

import fsspec
import pyarrow.parquet as pq

from connectors.benchmarks.formats import guess_format
from connectors.benchmarks.read import benchmark_files, choose_layout
from connectors.benchmarks.schema import BenchmarkError
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.io.fs import FileRef, expand, fingerprint, open_input
from connectors.io.read_report import input_errors
from connectors.io.shards import Shard, shard_id


@dataclass(frozen=True)
class BenchmarkPlan:
    """The shards of one benchmark, its input fingerprint and the item count when known."""

    benchmark: str
    shards: tuple[Shard, ...]  # rows [start, stop) of one input file (stop None: to the end)
    files: tuple[str, ...]
    fingerprint: str
    expected_items: int | None


def file_ref(url: str) -> FileRef:
    """Size, stamp and checksum of a file; for a folder (an HF dataset), its checksum is a hash over its files' contents."""
    fs, path = fsspec.core.url_to_fs(url)
    if fs.isdir(path):
        content = fingerprint(expand(url, ("",)))
        return FileRef(url, 0, content, store_checksum=f"files:{content}")
    return expand(url, ())[0]


def _stored_bytes(url: str, ref: FileRef) -> int | None:
    """The stored size of a file; None for a folder (an HF dataset), whose ``FileRef`` has no one size."""
    fs, path = fsspec.core.url_to_fs(url)
    return None if fs.isdir(path) else ref.size


def _parquet_rows(url: str) -> int:
    with open_input(url, compression=None) as handle:
        return pq.ParquetFile(handle).metadata.num_rows


def plan_benchmark(spec: BenchmarkSpec, shard_items: int) -> BenchmarkPlan:
    """Check every file's fields and plan the shards; raises ``BenchmarkError`` on bad input.

    Empty files are skipped (they have no rows to check); an input whose files hold no item at
    all is an error naming the inputs, and a file unreadable as a whole names the file.
    """
    if shard_items < 1:
        raise ValueError(f"shard_items must be >= 1, got {shard_items}")
    name = spec.benchmark_name()
    spec_key = repr((name, spec.preset, spec.mapping, spec.split, spec.format, spec.encoding))
    shards: list[Shard] = []
    refs: list[FileRef] = []
    expected: int | None = 0
    for path in benchmark_files(spec):
        with input_errors(path, BenchmarkError):
            columns, records = spec.read_records(path)
            ref = file_ref(path)
            refs.append(ref)
            if not columns:
                continue
            choose_layout(spec.layouts(), columns, path)
            if next(records, None) is None:
                continue
        fmt = spec.format or guess_format(path)
        rows = _parquet_rows(path) if fmt == "parquet" else None
        if rows is None:
            expected = None
            shards.append(Shard(shard_id(name, ref.checksum, path, spec_key), name, path, fmt,
                                size_bytes=_stored_bytes(path, ref)))
            continue
        expected = None if expected is None else expected + rows
        for start in range(0, rows, shard_items):
            stop = min(start + shard_items, rows)
            shards.append(Shard(shard_id(name, ref.checksum, path, spec_key, start, stop), name, path, "parquet",
                                start=start, stop=stop, expected_rows=stop - start))
    if not shards:
        raise BenchmarkError(f"{', '.join(spec.inputs)}: benchmark {name!r} has no items")
    return BenchmarkPlan(name, tuple(shards), tuple(r.url for r in refs), fingerprint(refs), expected)
