"""Hostile JSON Lines lines cost their row, never the file, the run or the machine's memory.

A line of 64 MiB in a gzip of ~70 KB is skipped as it is read (``text_too_long``) with memory far below
the line's size; a line nested 100,000 deep or holding a 5,000-digit integer is one ``invalid_json``
row (``RecursionError`` and Python's int-digits ``ValueError`` used to end the whole file's read).
"""
from __future__ import annotations

import gzip
import tracemalloc

import pyarrow as pa

from connectors.benchmarks.formats import json_records
from connectors.benchmarks.schema import BadRecord
from connectors.captions.corpus import MAX_LINE_BYTES, plan_corpus
from connectors.captions.presets import ColumnMapping, CorpusSpec
from connectors.captions.read import read_shard
from connectors.io.read_report import ReadReport

LONG_LINE = 64 << 20
HOSTILE = ['{"caption": [' + "[" * 100_000 + "]" * 100_000 + "]}",  # RecursionError in the parser
           '{"caption": "x", "n": ' + "7" * 5_000 + "}"]  # ValueError: exceeds the limit for integer string conversion


def read_table(spec: CorpusSpec) -> tuple[pa.Table, ReadReport]:
    report = ReadReport()
    plan = plan_corpus(spec)
    return pa.Table.from_batches([b for s in plan.shards for b in read_shard(s, spec, report)]), report


def test_a_huge_line_in_a_small_gzip_is_skipped_within_bounded_memory(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(b'{"caption": "a first caption from Kenya"}\n')
        fh.write(b'{"caption": "' + b"a" * LONG_LINE + b'"}\n')
        fh.write(b'{"caption": "a last caption from Peru"}\n')
    assert path.stat().st_size < 1 << 20 and LONG_LINE > 3 * MAX_LINE_BYTES
    spec = CorpusSpec(name="c", paths=(str(path),), format="jsonl", mapping=ColumnMapping(text="caption"))
    tracemalloc.start()
    try:
        table, report = read_table(spec)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table.column("text").to_pylist() == ["a first caption from Kenya", None, "a last caption from Peru"]
    assert table.column("skip_reason").to_pylist() == [None, "text_too_long", None]
    # the line is never held whole: at most a limit's worth read at once (twice, as readline joins its chunks);
    # today's reader held the 64 MiB line, then its decoded and parsed copies
    assert peak < 2 * MAX_LINE_BYTES + (8 << 20), f"peak {peak / 2**20:.0f} MiB"


def test_a_line_too_deep_or_with_a_huge_integer_is_one_invalid_json_row(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(['{"caption": "one"}', *HOSTILE, '{"caption": "two"}']) + "\n")
    spec = CorpusSpec(name="c", paths=(str(path),), format="jsonl", mapping=ColumnMapping(text="caption"))
    table, _ = read_table(spec)
    assert table.column("text").to_pylist() == ["one", None, None, "two"]
    assert table.column("skip_reason").to_pylist() == [None, "invalid_json", "invalid_json", None]
    # the planner's look at the first lines (for the columns) takes them in its stride too
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join([*HOSTILE, '{"caption": "three"}']) + "\n")
    table, _ = read_table(CorpusSpec(name="f", paths=(str(first),), format="jsonl", mapping=ColumnMapping(text="caption")))
    assert table.column("skip_reason").to_pylist() == ["invalid_json", "invalid_json", None]


def test_benchmark_json_lines_count_the_hostile_lines_and_keep_the_rest(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(['{"q": "one"}', *HOSTILE, '{"q": "two"}']) + "\n")
    columns, records = json_records(str(path), "utf-8")
    records = list(records)
    assert columns == ["q"] and [r for r in records if not isinstance(r, BadRecord)] == [{"q": "one"}, {"q": "two"}]
    bad = [r.error for r in records if isinstance(r, BadRecord)]
    assert [e.reason for e in bad] == ["invalid_json", "invalid_json"]
    assert "b.jsonl: line 2: invalid JSON (nested too deep)" in str(bad[0]) and "b.jsonl: line 3: invalid JSON" in str(bad[1])
