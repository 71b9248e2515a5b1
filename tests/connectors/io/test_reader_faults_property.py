"""Random corruptions of small corpora (truncate, flip a byte, insert a quote or a NUL) never make a
caption reader report a complete read whose rows in + unread differ from the rows really there, and
never raise anything but a ``CorpusError`` naming the file.

A seeded loop, so every case is reproducible from its seed. What "really there" means per format:
a line format holds one row per non-empty line after the header (so a flipped byte that makes or
removes a line break, which changes the true count itself, is not drawn); a compressed file holds
the rows of what it decompresses to; Parquet and tar hold what was written, and a read that cannot
give all of it must fail.
"""
from __future__ import annotations

import gzip
import io
import json
import random
import tarfile
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.benchmarks.read import iter_benchmark_batches
from connectors.benchmarks.schema import BenchmarkError, FieldMapping
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.captions.corpus import CorpusError, plan_corpus
from connectors.captions.presets import ColumnMapping, CorpusSpec
from connectors.captions.read import read_shard
from connectors.io.read_report import ReadReport

ROWS = 40
SEEDS = range(60)
LINE_BREAKS = b"\r\n"


def csv_bytes() -> bytes:
    return ("caption,url\n" + "".join(f"caption {i} in Kenya,http://x{i}.ke/\n" for i in range(ROWS))).encode()


def jsonl_bytes() -> bytes:
    return "".join(json.dumps({"caption": f"caption {i} in Chile", "url": f"http://x{i}.cl/"}) + "\n" for i in range(ROWS)).encode()


def parquet_bytes() -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"caption": [f"caption {i} in Peru" for i in range(ROWS)], "url": [f"u{i}" for i in range(ROWS)]}),
                   sink, row_group_size=ROWS // 2)
    return sink.getvalue()


def tar_bytes() -> bytes:
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w") as tar:
        for i in range(ROWS // 2):
            for ext, payload in (("txt", f"caption {i} in Ghana".encode()), ("json", json.dumps({"key": f"{i:03d}"}).encode())):
                info = tarfile.TarInfo(f"{i:03d}.{ext}")
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
    return sink.getvalue()


def lines_after_header(text: bytes, header: bool) -> int:
    lines = [line for line in text.split(b"\n") if line.strip()]
    return max(len(lines) - (1 if header else 0), 0)


def gz_rows(data: bytes) -> int | None:
    try:
        return lines_after_header(gzip.decompress(data), header=True)
    except (OSError, EOFError, zlib.error):
        return None


CORPORA = {
    # name: (file name, format, mapping, clean bytes, rows really there in corrupted bytes (None: none can be read))
    "csv": ("c.csv", "csv", ColumnMapping(text="caption", url="url"), csv_bytes, lambda d: lines_after_header(d, True)),
    "csv.gz": ("c.csv.gz", "csv", ColumnMapping(text="caption", url="url"), lambda: gzip.compress(csv_bytes(), mtime=0), gz_rows),
    "jsonl": ("j.jsonl", "jsonl", ColumnMapping(text="caption", url="url"), jsonl_bytes, lambda d: lines_after_header(d, False)),
    "parquet": ("p.parquet", "parquet", ColumnMapping(text="caption", url="url"), parquet_bytes, lambda d: ROWS),
    "tar": ("w.tar", "webdataset", ColumnMapping(text="txt", id="key"), tar_bytes, lambda d: ROWS // 2),
}


def corrupt(data: bytes, op: str, rng: random.Random, line_format: bool) -> bytes:
    if op == "truncate":
        return data[: rng.randrange(len(data))]
    if op == "flip":
        while True:
            pos = rng.randrange(len(data))
            new = data[pos] ^ (1 << rng.randrange(8))
            if not line_format or (data[pos] not in LINE_BREAKS and new not in LINE_BREAKS):
                return data[:pos] + bytes([new]) + data[pos + 1:]
    pos = rng.randrange(len(data) + 1)
    return data[:pos] + (b'"' if op == "quote" else b"\x00") + data[pos:]


def read_count(spec: CorpusSpec) -> int | None:
    """rows in + unread rows of a complete read, or None when the reader refused the file."""
    try:
        total = 0
        for shard in plan_corpus(spec).shards:
            report = ReadReport(shard.source)
            rows = sum(batch.num_rows for batch in read_shard(shard, spec, report))
            assert report.rows_in == rows
            total += report.rows_in + report.unread_rows
        return total
    except CorpusError as exc:
        assert spec.paths[0] in str(exc), f"error does not name the file: {exc}"
        return None


@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("op", ["truncate", "flip", "quote", "nul"])
def test_corruptions_are_counted_or_refused_never_read_short(tmp_path, corpus, op):
    name, fmt, mapping, make, really_there = CORPORA[corpus]
    clean = make()
    path = tmp_path / name
    spec = CorpusSpec(name=corpus, paths=(str(path),), format=fmt, mapping=mapping)
    path.write_bytes(clean)
    assert read_count(spec) == really_there(clean)  # the clean corpus reads completely
    refused = 0
    for seed in SEEDS:
        data = corrupt(clean, op, random.Random(f"{corpus}/{op}/{seed}"), line_format=corpus in ("csv", "jsonl"))
        path.write_bytes(data)
        count, expected = read_count(spec), really_there(data)
        if count is None:
            refused += 1
            continue
        assert expected is not None and count == expected, f"seed {seed}: read {count} rows, {expected} really there"
    if corpus in ("parquet", "tar", "csv.gz") and op in ("truncate", "quote", "nul"):
        assert refused > 0  # these corruptions must be caught, not only tolerated


BENCHMARKS = {
    "csv": ("b.csv", lambda: ("q,a\n" + "".join(f"Question {i}?,answer {i}\n" for i in range(ROWS))).encode(), True),
    "jsonl": ("b.jsonl", lambda: "".join(json.dumps({"q": f"Question {i}?", "a": f"answer {i}"}) + "\n"
                                         for i in range(ROWS)).encode(), False),
}


def benchmark_count(spec: BenchmarkSpec) -> int | None:
    """rows in + unread rows read under the skip policy, or None when the reader refused the file."""
    report = ReadReport(spec.inputs[0])
    try:
        items = sum(batch.num_rows for batch in iter_benchmark_batches(spec, on_bad_row="skip", report=report))
    except BenchmarkError as exc:
        assert spec.inputs[0] in str(exc), f"error does not name the file: {exc}"
        return None
    assert items == report.rows_usable
    return report.rows_in + report.unread_rows


@pytest.mark.parametrize("corpus", sorted(BENCHMARKS))
@pytest.mark.parametrize("op", ["truncate", "flip", "quote", "nul"])
def test_benchmark_corruptions_are_counted_or_refused_under_the_skip_policy(tmp_path, corpus, op):
    name, make, header = BENCHMARKS[corpus]
    clean = make()
    path = tmp_path / name
    spec = BenchmarkSpec(str(path), mapping=FieldMapping(question="q", gold="a"))
    path.write_bytes(clean)
    assert benchmark_count(spec) == ROWS
    for seed in SEEDS:
        data = corrupt(clean, op, random.Random(f"bench/{corpus}/{op}/{seed}"), line_format=True)
        path.write_bytes(data)
        count = benchmark_count(spec)
        assert count is None or count == lines_after_header(data, header), f"seed {seed}: read {count} rows"
