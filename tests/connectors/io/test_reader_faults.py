"""Fault injection: every reader either reads a row, counts it as skipped with its reason, counts it
as unread with its byte range, or refuses the file by name; never a short read that looks complete.

Fixtures are built here from the recipes of issue 13 (real Parquet, real CSV/TSV, real tar, real gzip).
"""
from __future__ import annotations

import bz2
import gzip
import io
import json
import os
import tarfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.benchmarks.read import iter_benchmark_batches, read_benchmark
from connectors.benchmarks.schema import BenchmarkError, FieldMapping
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.captions.corpus import CorpusError, plan_corpus
from connectors.captions.presets import ColumnMapping, CorpusSpec
from connectors.captions.read import read_shard
from connectors.coreset.predictions import PredictionColumns, read_predictions
from connectors.coreset.targets import TargetColumns, TargetError, plan_targets
from connectors.io import delimited
from connectors.io.fs import expand
from connectors.io.read_report import SKIP_REASONS, ReadIOError, ReadReport
from connectors.scorers import read_answers, read_gold_references

CSV = ColumnMapping(text="caption", url="url")


def scan(spec: CorpusSpec) -> tuple[pa.Table, ReadReport]:
    """Every shard of the corpus read into one table, with one merged report."""
    report = ReadReport(spec.name)
    batches = []
    for shard in plan_corpus(spec).shards:
        part = ReadReport(shard.source)
        batches.extend(read_shard(shard, spec, part))
        report.merge(part)
    return pa.Table.from_batches(batches), report


def usable_texts(table: pa.Table) -> list[str]:
    return [r["text"] for r in table.to_pylist() if r["skip_reason"] is None]


def csv_spec(path, fmt: str = "csv", **kw) -> CorpusSpec:
    return CorpusSpec(name="c", paths=(str(path),), format=fmt, mapping=CSV, **kw)


# ---- Parquet ------------------------------------------------------------------------------------
def test_invalid_utf8_in_a_parquet_string_column_costs_one_row_not_the_shard(tmp_path):
    raw = pa.array([b"Japan ok"] * 999 + ["Italy \ud800".encode("utf-8", "surrogatepass")], pa.binary())
    pq.write_table(pa.table({"text": raw.view(pa.string())}), tmp_path / "u.parquet")
    spec = CorpusSpec(name="u", paths=(str(tmp_path / "u.parquet"),), format="parquet", mapping=ColumnMapping(text="text"))
    table, report = scan(spec)
    assert report.rows_in == 1000 and report.skipped_by_reason == {"invalid_utf8": 1} and report.rows_usable == 999
    assert not report.partially_read and table.num_rows == 1000
    assert usable_texts(table) == ["Japan ok"] * 999
    assert table.column("skip_reason").to_pylist()[-1] == "invalid_utf8" and table.column("text").to_pylist()[-1] is None


def test_invalid_utf8_in_any_mapped_column_marks_the_row(tmp_path):
    bad = b"\xff\xfe"
    pq.write_table(pa.table({"text": pa.array([b"Peru", b"Chile", b"Chad"], pa.binary()),
                             "url": pa.array([b"u1", bad, b"u3"], pa.binary()), "uid": ["1", "2", "3"]}), tmp_path / "b.parquet")
    spec = CorpusSpec(name="b", paths=(str(tmp_path / "b.parquet"),), format="parquet",
                      mapping=ColumnMapping(text="text", url="url", id="uid"))
    table, report = scan(spec)
    assert table.column("skip_reason").to_pylist() == [None, "invalid_utf8", None]
    assert report.skipped_by_reason == {"invalid_utf8": 1} and usable_texts(table) == ["Peru", "Chad"]


def test_corrupt_parquet_page_is_an_unreadable_shard_named(tmp_path):
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"text": [f"caption {i}" for i in range(200)]}), path, compression="zstd")
    data = bytearray(path.read_bytes())
    data[40:60] = b"\x00" * 20  # inside the first data page, well before the footer
    path.write_bytes(bytes(data))
    spec = CorpusSpec(name="p", paths=(str(path),), format="parquet", mapping=ColumnMapping(text="text"))
    with pytest.raises(CorpusError, match=r"p\.parquet \(row groups \[0\]\): unreadable"):
        scan(spec)


# ---- CSV / TSV -----------------------------------------------------------------------------------
def stray_quote_csv(path, after: int = 10_000) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('caption,url\nA good row,u\n"A row starting with a quote that never closes,u\n')
        fh.writelines(f"row {i} in Kenya,u{i}\n" for i in range(after))


def test_a_stray_quote_does_not_swallow_the_rest_of_the_file(tmp_path):
    stray_quote_csv(tmp_path / "q.csv")
    table, report = scan(csv_spec(tmp_path / "q.csv"))
    assert report.rows_in == 10_002 and report.skipped_by_reason == {"malformed_row": 1}
    assert report.rows_usable == 10_001 and not report.partially_read
    texts = usable_texts(table)
    assert texts[0] == "A good row" and texts[1:] == [f"row {i} in Kenya" for i in range(10_000)]


def test_a_stray_quote_longer_than_the_quoted_span_limit_resynchronises(tmp_path, monkeypatch):
    monkeypatch.setattr(delimited, "PIECE_BYTES", 4096)
    monkeypatch.setattr(delimited, "MAX_QUOTED_BYTES", 16 << 10)  # the span runs ~200 KB, so pieces are cut inside it
    stray_quote_csv(tmp_path / "q.csv")
    table, report = scan(csv_spec(tmp_path / "q.csv"))
    assert report.rows_in + report.unread_rows == 10_002
    assert report.skipped_by_reason == {"malformed_row": 1} and report.rows_usable == 10_001
    assert usable_texts(table)[1:] == [f"row {i} in Kenya" for i in range(10_000)]


def test_quotes_that_do_not_pair_up_are_resolved_line_by_line(tmp_path):
    # three quotes: the parse cannot end outside a quote, so the lines holding unpaired quotes are
    # malformed and every other line is read
    (tmp_path / "o.csv").write_bytes(b'caption,url\ngood,u\n"bad,u\nr1,u\nr2,u\nr3,"q",z\nafter,u\n')
    table, report = scan(csv_spec(tmp_path / "o.csv"))
    assert usable_texts(table) == ["good", "r1", "r2", "after"]
    assert report.skipped_by_reason == {"malformed_row": 2} and report.rows_in == 6 and not report.partially_read


def test_small_pieces_give_the_same_rows_as_one_piece(tmp_path, monkeypatch):
    lines = ["caption,url"] + [f'"cap {i}, with a comma",u{i}' if i % 3 else f"cap {i},u{i}" for i in range(3000)]
    lines[100] = '"a caption\nover two lines",u'
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole, _ = scan(csv_spec(tmp_path / "m.csv"))
    monkeypatch.setattr(delimited, "PIECE_BYTES", 1000)
    pieces, report = scan(csv_spec(tmp_path / "m.csv"))
    assert usable_texts(pieces) == usable_texts(whole) and len(usable_texts(whole)) == 3000
    assert usable_texts(whole)[99] == "a caption\nover two lines" and report.rows_in == 3000


def test_ids_are_read_as_written_whatever_each_piece_looks_like(tmp_path, monkeypatch):
    monkeypatch.setattr(delimited, "PIECE_BYTES", 256)  # early pieces hold only numeric ids
    ids = [str(i) for i in range(60)] + ["x60", "1.50"]
    (tmp_path / "c.csv").write_text("image_id,caption_id,caption\n" + "".join(f"7,{i},caption {i}\n" for i in ids), encoding="utf-8")
    spec = CorpusSpec(name="c", paths=(str(tmp_path / "c.csv"),), format="csv", mapping=ColumnMapping(text="caption", id="caption_id"))
    table, report = scan(spec)
    assert table.column("record_id").to_pylist() == ids and report.skipped_by_reason == {}


def test_a_quote_closed_on_a_row_of_the_wrong_width_is_counted_unread_with_its_byte_range(tmp_path):
    head = b'caption,url\ngood,u\n'
    span = b'"bad,u\nr1,u\nr2,u\nr3",z,w'  # the quote closes after r3: one value over 4 lines, then 2 fields too many
    (tmp_path / "w.csv").write_bytes(head + span + b"\nafter,u\n")
    table, report = scan(csv_spec(tmp_path / "w.csv"))
    assert usable_texts(table) == ["good", "after"] and report.rows_in == 2 and report.skipped_by_reason == {}
    assert report.partially_read and report.unread_rows == 4
    assert report.unread_byte_ranges == [(len(head), len(head) + len(span))]
    assert report.to_json()["unread"][0] == {"file": str(tmp_path / "w.csv"), "bytes": [len(head), len(head) + len(span)],
                                             "lines": 4, "why": report.unread[0].why}
    assert ReadReport.from_json(json.loads(json.dumps(report.to_json()))) == report  # what a shard result carries


def test_a_malformed_row_that_is_not_utf8_costs_that_row(tmp_path):
    # Arrow cannot hand such a row to its invalid-row handler and failed the whole read
    body = b"".join(b"row %d,u\n" % i for i in range(50))
    (tmp_path / "x.csv").write_bytes(b"caption,url\n" + body + b"\xff\xfe broken\n" + body)
    table, report = scan(csv_spec(tmp_path / "x.csv"))
    assert report.rows_in == 101 and report.skipped_by_reason == {"malformed_row": 1} and len(usable_texts(table)) == 100


def test_invalid_utf8_in_a_csv_value_is_counted_per_row(tmp_path):
    (tmp_path / "v.tsv").write_bytes(b"ok one\thttp://a\n\xff\xfe\thttp://b\nok two\thttp://c\n")
    spec = CorpusSpec(name="t", paths=(str(tmp_path / "v.tsv"),), format="tsv", mapping=CSV, header=False,
                      column_names=("caption", "url"))
    table, report = scan(spec)
    assert usable_texts(table) == ["ok one", "ok two"] and report.skipped_by_reason == {"invalid_utf8": 1}


def test_a_utf8_bom_is_not_part_of_a_column_name_or_a_value(tmp_path):
    (tmp_path / "b.csv").write_bytes(b"\xef\xbb\xbfcaption,url\nSnow in Norway,u\n")
    table, _ = scan(csv_spec(tmp_path / "b.csv"))
    assert usable_texts(table) == ["Snow in Norway"]
    (tmp_path / "h.tsv").write_bytes(b"\xef\xbb\xbfLima at dawn\thttp://a.pe\n")
    spec = CorpusSpec(name="t", paths=(str(tmp_path / "h.tsv"),), format="tsv", mapping=CSV, header=False,
                      column_names=("caption", "url"))
    assert usable_texts(scan(spec)[0]) == ["Lima at dawn"]


def test_a_utf8_bom_is_not_part_of_a_benchmark_or_target_column_name(tmp_path):
    (tmp_path / "b.csv").write_bytes(b"\xef\xbb\xbfquestion,answer\nWhy?,Because\n")
    items = read_benchmark(BenchmarkSpec(str(tmp_path / "b.csv"), mapping=FieldMapping(question="question", gold="answer")))
    assert items.column("question").to_pylist() == ["Why?"] and items.column("gold").to_pylist() == [["Because"]]
    (tmp_path / "t.csv").write_bytes(b"\xef\xbb\xbfid,label,score\n1,0,0.5\n")
    assert plan_targets([str(tmp_path / "t.csv")], TargetColumns()).files == 1


@pytest.mark.parametrize(("suffix", "compress"), [(".csv.gz", gzip.compress), (".jsonl.gz", gzip.compress),
                                                  (".tsv.gz", gzip.compress)])
def test_a_truncated_compressed_stream_is_an_unreadable_shard(tmp_path, suffix, compress):
    fmt = {".csv.gz": "csv", ".jsonl.gz": "jsonl", ".tsv.gz": "tsv"}[suffix]
    if fmt == "jsonl":
        text = "".join(json.dumps({"caption": f"caption {i}", "url": "u"}) + "\n" for i in range(5000))
    else:
        sep = "," if fmt == "csv" else "\t"
        text = f"caption{sep}url\n" + "".join(f"caption {i}{sep}u\n" for i in range(5000))
    data = compress(text.encode())
    path = tmp_path / f"c{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match=rf"c{suffix.replace('.', '[.]')}: unreadable: compressed stream cut short"):
        scan(csv_spec(path, fmt))


def test_a_truncated_bz2_benchmark_is_named(tmp_path):
    text = "".join(json.dumps({"q": f"question {i}"}) + "\n" for i in range(3000))
    data = bz2.compress(text.encode())
    (tmp_path / "b.jsonl.bz2").write_bytes(data[: len(data) // 2])
    with pytest.raises(BenchmarkError, match=r"b\.jsonl\.bz2: unreadable: compressed stream cut short"):
        read_benchmark(BenchmarkSpec(str(tmp_path / "b.jsonl.bz2"), mapping=FieldMapping(question="q")))


# ---- JSONL -----------------------------------------------------------------------------------------
def test_jsonl_bad_lines_are_counted_per_row_by_reason(tmp_path):
    lines = [json.dumps({"caption": "fine"}).encode(), b'{"caption": "Italy \\ud800"}', b'{"caption": "\xff\xfe"}',
             b"{not json", json.dumps({"caption": "also fine"}).encode()]
    (tmp_path / "j.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    spec = CorpusSpec(name="j", paths=(str(tmp_path / "j.jsonl"),), format="jsonl", mapping=ColumnMapping(text="caption"))
    table, report = scan(spec)
    assert table.column("skip_reason").to_pylist() == [None, "invalid_utf8", "invalid_utf8", "invalid_json", None]
    assert report.rows_in == 5 and report.skipped_by_reason == {"invalid_utf8": 2, "invalid_json": 1}


def test_jsonl_whose_first_line_is_broken_is_planned_from_the_first_record(tmp_path):
    (tmp_path / "f.jsonl").write_text("{broken\n" + json.dumps({"caption": "Accra"}) + "\n", encoding="utf-8")
    spec = CorpusSpec(name="f", paths=(str(tmp_path / "f.jsonl"),), format="jsonl", mapping=ColumnMapping(text="caption"))
    table, report = scan(spec)
    assert usable_texts(table) == ["Accra"] and report.skipped_by_reason == {"invalid_json": 1}


# ---- WebDataset tar ---------------------------------------------------------------------------------
def write_samples(path, n: int = 20) -> None:
    with tarfile.open(path, "w") as tar:
        for i in range(n):
            for ext, payload in (("txt", f"caption {i} in Ghana".encode()), ("json", json.dumps({"key": f"{i:03d}"}).encode())):
                info = tarfile.TarInfo(f"{i:03d}.{ext}")
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))


def wds_spec(path) -> CorpusSpec:
    return CorpusSpec(name="w", paths=(str(path),), format="webdataset", mapping=ColumnMapping(text="txt", id="key"))


def test_a_complete_tar_reads_every_sample(tmp_path):
    write_samples(tmp_path / "ok.tar")
    table, report = scan(wds_spec(tmp_path / "ok.tar"))
    assert report.rows_in == 20 and table.column("record_id").to_pylist() == [f"{i:03d}" for i in range(20)]


def test_a_tar_cut_at_a_member_boundary_is_never_read_as_complete(tmp_path):
    path = tmp_path / "cut.tar"
    write_samples(path)
    os.truncate(path, 20480)  # `truncate -s 20480`: 10 whole samples, no end-of-archive marker
    with pytest.raises(CorpusError, match=r"cut\.tar: tar cut short: it ends at byte 20480 after 10 samples"):
        scan(wds_spec(path))


def test_a_tar_cut_inside_a_member_is_a_clean_error(tmp_path):
    path = tmp_path / "mid.tar"
    write_samples(path)
    os.truncate(path, 20480 + 512 + 10)  # inside the data of 010.txt
    with pytest.raises(CorpusError, match=r"mid\.tar: tar cut inside member '010\.txt'"):
        scan(wds_spec(path))


def test_a_damaged_tar_header_is_not_taken_for_the_end_of_the_archive(tmp_path):
    path = tmp_path / "bad.tar"
    write_samples(path)
    data = bytearray(path.read_bytes())
    data[12 * 1024 + 3] ^= 0x20  # a letter of the name of member 6 (006.txt): its header checksum no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(CorpusError, match=r"bad\.tar: tar damaged: the header at byte 12288 \(after 6 samples\)"):
        scan(wds_spec(path))


# ---- I/O errors are not bad input ------------------------------------------------------------------
def test_a_file_gone_between_planning_and_reading_is_a_transient_io_error(tmp_path):
    pq.write_table(pa.table({"text": ["Oslo"]}), tmp_path / "g.parquet")
    spec = CorpusSpec(name="g", paths=(str(tmp_path / "g.parquet"),), format="parquet", mapping=ColumnMapping(text="text"))
    shard = plan_corpus(spec).shards[0]
    os.remove(tmp_path / "g.parquet")
    with pytest.raises(ReadIOError, match=r"g\.parquet: cannot open") as info:
        list(read_shard(shard, spec))
    assert not isinstance(info.value, ValueError)  # never mistaken for bad input (CorpusError is a ValueError)


# ---- paths -------------------------------------------------------------------------------------------
def test_a_literal_path_with_glob_characters_is_that_file(tmp_path):
    pq.write_table(pa.table({"text": ["Quito"]}), tmp_path / "data[1].parquet")
    assert [f.url for f in expand(str(tmp_path / "data[1].parquet"), (".parquet",))] == [str(tmp_path / "data[1].parquet")]
    spec = CorpusSpec(name="g", paths=(str(tmp_path / "data[1].parquet"),), format="parquet", mapping=ColumnMapping(text="text"))
    assert usable_texts(scan(spec)[0]) == ["Quito"]
    pq.write_table(pa.table({"text": ["Lima"]}), tmp_path / "data2.parquet")  # a path that does not exist still globs
    assert [f.url.rsplit("/", 1)[-1] for f in expand(str(tmp_path / "data[0-9].parquet"), (".parquet",))] == ["data2.parquet"]


# ---- benchmarks ---------------------------------------------------------------------------------------
def bench_jsonl(tmp_path, bad_line: str = "{not json") -> str:
    lines = [json.dumps({"id": f"q{i}", "q": f"Question {i}?"}) for i in range(5)]
    lines.insert(2, bad_line)
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_a_benchmark_line_that_is_not_json_raises_with_file_and_line_by_default(tmp_path):
    with pytest.raises(BenchmarkError, match=r"b\.jsonl: line 3: invalid JSON"):
        read_benchmark(BenchmarkSpec(bench_jsonl(tmp_path), mapping=FieldMapping(question="q", id="id")))


def test_a_benchmark_line_that_is_not_json_is_counted_under_the_skip_policy(tmp_path):
    spec = BenchmarkSpec(bench_jsonl(tmp_path), mapping=FieldMapping(question="q", id="id"))
    report = ReadReport(spec.inputs[0])
    items = pa.Table.from_batches(list(iter_benchmark_batches(spec, on_bad_row="skip", report=report)))
    assert items.column("id").to_pylist() == ["q0", "q1", "q2", "q3", "q4"]
    assert report.rows_in == 6 and report.skipped_by_reason == {"invalid_json": 1} and report.rows_usable == 5
    assert report.examples and "b.jsonl: line 3: invalid JSON" in report.examples[0]


def test_benchmark_row_faults_by_reason_under_the_skip_policy(tmp_path):
    rows = [{"id": "a", "q": "fine?"}, {"id": "b", "q": 7}, {"id": "a", "q": "again?"}, [1, 2], {"id": "c"},
            {"id": "d", "q": "Italy \ud800"}, {"id": "e", "q": "last?"}]
    (tmp_path / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    spec = BenchmarkSpec(str(tmp_path / "r.jsonl"), mapping=FieldMapping(question="q", id="id"))
    report = ReadReport()
    items = pa.Table.from_batches(list(iter_benchmark_batches(spec, on_bad_row="skip", report=report)))
    assert items.column("id").to_pylist() == ["a", "e"]
    assert report.skipped_by_reason == {"invalid_field": 1, "duplicate_id": 1, "not_an_object": 1, "missing_field": 1,
                                        "invalid_utf8": 1}
    assert report.rows_in == 7 and set(report.skipped_by_reason) <= set(SKIP_REASONS)


def test_the_skip_policy_needs_a_report(tmp_path):
    spec = BenchmarkSpec(bench_jsonl(tmp_path), mapping=FieldMapping(question="q", id="id"))
    with pytest.raises(ValueError, match="needs a ReadReport"):
        list(iter_benchmark_batches(spec, on_bad_row="skip"))


def test_a_benchmark_csv_with_a_stray_quote(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text('question,answer\nFirst?,a\n"Stray quote?,b\n' + "".join(f"Q{i}?,c\n" for i in range(200)), encoding="utf-8")
    spec = BenchmarkSpec(str(path), mapping=FieldMapping(question="question", gold="answer"))
    with pytest.raises(BenchmarkError, match=r"s\.csv: row 1 \(line 3\): a quote that never closes"):
        read_benchmark(spec)
    report = ReadReport()
    items = pa.Table.from_batches(list(iter_benchmark_batches(spec, on_bad_row="skip", report=report)))
    assert items.column("question").to_pylist() == ["First?"] + [f"Q{i}?" for i in range(200)]
    assert report.skipped_by_reason == {"malformed_row": 1} and report.rows_in == 202
    # in the last column the swallowed record has the header's width: still not taken for a row
    path.write_text('question,answer\nFirst?,a\nStray?,"b\n' + "".join(f"Q{i}?,c\n" for i in range(200)), encoding="utf-8")
    report = ReadReport()
    items = pa.Table.from_batches(list(iter_benchmark_batches(spec, on_bad_row="skip", report=report)))
    assert items.column("question").to_pylist() == ["First?"] + [f"Q{i}?" for i in range(200)]
    assert report.skipped_by_reason == {"malformed_row": 1}


def test_a_benchmark_csv_span_closed_on_a_row_of_the_wrong_width_is_unread(tmp_path):
    head = b"question,answer\nFirst?,a\n"
    span = b'"Stray?,b\nQ1?,c\nQ2?,"d",e,f'
    (tmp_path / "u.csv").write_bytes(head + span + b"\nLast?,f\n")
    spec = BenchmarkSpec(str(tmp_path / "u.csv"), mapping=FieldMapping(question="question", gold="answer"))
    report = ReadReport()
    items = pa.Table.from_batches(list(iter_benchmark_batches(spec, on_bad_row="skip", report=report)))
    assert items.column("question").to_pylist() == ["First?", "Last?"]
    assert report.partially_read and report.unread_rows == 3 and report.unread_byte_ranges == [(len(head), len(head) + len(span) + 1)]


def test_a_benchmark_parquet_string_that_is_not_utf8(tmp_path):
    raw = pa.array([b"Fine?", b"Bad \xff?", b"Also fine?"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"q": raw, "id": ["a", "b", "c"]}), tmp_path / "p.parquet")
    spec = BenchmarkSpec(str(tmp_path / "p.parquet"), mapping=FieldMapping(question="q", id="id"))
    with pytest.raises(BenchmarkError, match=r"p\.parquet: row 1: a string that is not UTF-8"):
        read_benchmark(spec)
    report = ReadReport()
    items = pa.Table.from_batches(list(iter_benchmark_batches(spec, on_bad_row="skip", report=report)))
    assert items.column("id").to_pylist() == ["a", "c"] and report.skipped_by_reason == {"invalid_utf8": 1}


DROP = {"nfl_1": {"passage": "The Bears scored twice.", "qa_pairs": [
    {"question": "How many times?", "query_id": "q1", "answer": {"number": "2", "spans": [], "date": {}},
     "validated_answers": [{"number": "2", "spans": [], "date": {}}]}]}}


def test_drop_json_on_one_line_reads_like_the_pretty_printed_file_in_every_reader(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps(DROP), encoding="utf-8")
    (tmp_path / "pretty.json").write_text(json.dumps(DROP, indent=2), encoding="utf-8")
    one = read_benchmark(BenchmarkSpec(str(tmp_path / "one.json"), preset="drop", name="drop")).to_pylist()
    pretty = read_benchmark(BenchmarkSpec(str(tmp_path / "pretty.json"), preset="drop", name="drop")).to_pylist()
    assert one == pretty and one[0]["id"] == "q1" and one[0]["gold"] == ["2"]
    golds = read_gold_references(BenchmarkSpec(str(tmp_path / "one.json"), preset="drop"))
    assert golds.keys() == {"q1"}
    assert golds == read_gold_references(BenchmarkSpec(str(tmp_path / "pretty.json"), preset="drop"))


def test_a_truncated_drop_json_names_the_file(tmp_path):
    text = json.dumps(DROP, indent=2)
    (tmp_path / "cut.json").write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"cut\.json: not valid JSON .*cut short"):
        read_benchmark(BenchmarkSpec(str(tmp_path / "cut.json"), preset="drop"))
    with pytest.raises(BenchmarkError, match=r"cut\.json: not valid JSON"):
        read_gold_references(BenchmarkSpec(str(tmp_path / "cut.json"), preset="drop"))


def test_duplicate_question_ids_in_answers_name_file_and_rows(tmp_path):
    (tmp_path / "a.csv").write_text("question_id,answer\nq1,two\nq2,three\nq1,2\n", encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"a\.csv: field 'question_id': 'q1' on data rows \[1, 3\]"):
        read_answers(str(tmp_path / "a.csv"))


def test_prediction_jsonl_errors_name_the_file_and_the_row(tmp_path):
    (tmp_path / "p.jsonl").write_text('{"id": 1, "prediction": 1}\n{"id": 2, "prediction": }\n', encoding="utf-8")
    with pytest.raises(TargetError, match=r"p\.jsonl: unreadable: .*row"):
        read_predictions("m", [str(tmp_path / "p.jsonl")], PredictionColumns())
