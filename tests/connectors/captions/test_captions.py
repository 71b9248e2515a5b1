"""Caption connectors: every format, column mapping and projection, and bad input."""
from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.captions.corpus import MAX_TEXT_BYTES, CorpusError, plan_corpus
from connectors.captions.presets import ColumnMapping, CorpusSpec, spec_from_preset
from connectors.captions.read import read_shard
from tests.builders import write_tar


def read_all(spec: CorpusSpec, **kw) -> pa.Table:
    plan = plan_corpus(spec, **kw)
    return pa.Table.from_batches([b for s in plan.shards for b in read_shard(s, spec)])


def test_parquet_directory_shards_by_row_group_and_projects_columns(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    for i in range(3):
        pq.write_table(pa.table({"uid": [f"{i}-{j}" for j in range(10)], "text": [f"caption {i} {j}" for j in range(10)],
                                 "url": ["http://x.jp/a"] * 10, "unused": list(range(10))}), d / f"part-{i}.parquet", row_group_size=4)
    spec = spec_from_preset("dc", "datacomp", [str(d)])
    plan = plan_corpus(spec, shard_rows=4)
    assert len(plan.shards) == 9 and plan.expected_rows == 30  # 3 files × row groups of 4, 4, 2
    assert len({s.shard_id for s in plan.shards}) == 9
    t = read_all(spec, shard_rows=4)
    assert t.num_rows == 30 and t.column("record_id").to_pylist()[:2] == ["0-0", "0-1"]
    assert t.column("skip_reason").null_count == 30
    # glob form, and the same ids when planned again (resume depends on it)
    again = plan_corpus(spec_from_preset("dc", "datacomp", [str(d / "part-*.parquet")]), shard_rows=4)
    assert [s.shard_id for s in again.shards] == [s.shard_id for s in plan.shards]


def test_parquet_reads_only_mapped_columns(tmp_path, monkeypatch):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": ["Kenya"], "url": ["u"], "uid": ["1"], "big": ["x" * 100]}), path)
    seen = {}
    real = pq.ParquetFile.iter_batches

    def spy(self, *a, **kw):
        seen["columns"] = kw.get("columns")
        return real(self, *a, **kw)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    read_all(spec_from_preset("dc", "datacomp", [str(path)]))
    assert sorted(seen["columns"]) == ["text", "uid", "url"]


def test_tsv_without_header_and_gzip(tmp_path):
    rows = "a caption about Peru\thttp://example.pe/x\nsecond \"quoted\" caption\thttp://b.com\n"
    (tmp_path / "cc.tsv").write_text(rows, encoding="utf-8")
    with gzip.open(tmp_path / "cc2.tsv.gz", "wt", encoding="utf-8") as fh:
        fh.write(rows)
    spec = spec_from_preset("cc", "cc3m", [str(tmp_path / "cc.tsv"), str(tmp_path / "cc2.tsv.gz")])
    t = read_all(spec)
    assert t.column("text").to_pylist() == ["a caption about Peru", 'second "quoted" caption'] * 2
    assert t.column("url").to_pylist()[0] == "http://example.pe/x"
    assert t.column("record_id").to_pylist()[1].endswith("cc.tsv#1")


def test_cc12m_preset_is_url_then_caption(tmp_path):
    (tmp_path / "cc12m.tsv").write_text("http://a.de/1.jpg\tOktoberfest in Munich\n", encoding="utf-8")
    t = read_all(spec_from_preset("cc12m", "cc12m", [str(tmp_path / "cc12m.tsv")]))
    assert t.column("text").to_pylist() == ["Oktoberfest in Munich"] and t.column("url").to_pylist() == ["http://a.de/1.jpg"]


def test_wit_preset_joins_context_columns(tmp_path):
    header = "language\tpage_title\tsection_title\timage_url\tcaption_reference_description\tcontext_page_description\n"
    (tmp_path / "wit.tsv").write_text(header + "en\tNairobi\tHistory\thttp://u.ke/a.jpg\tA street\tCapital of Kenya\n", encoding="utf-8")
    spec = spec_from_preset("wit", "wit", [str(tmp_path / "wit.tsv")])
    t = read_all(spec)
    assert t.column("text").to_pylist() == ["A street"]
    assert t.column("context").to_pylist() == ["Capital of Kenya\nNairobi\nHistory"]


def test_csv_with_header_and_jsonl(tmp_path):
    (tmp_path / "c.csv").write_text('image_id,caption_id,caption\n1,10,"Snow, in Norway"\n', encoding="utf-8")
    t = read_all(spec_from_preset("coco", "coco", [str(tmp_path / "c.csv")]))
    assert t.column("text").to_pylist() == ["Snow, in Norway"] and t.column("record_id").to_pylist() == ["10"]
    record = {"image_id": "x1", "caption": "Tokyo at night", "url": "u", "subreddit": "itookapicture"}
    (tmp_path / "r.jsonl").write_text(json.dumps(record) + "\n")
    t = read_all(spec_from_preset("rc", "redcaps", [str(tmp_path / "r.jsonl")]))
    assert t.to_pylist()[0] == {"record_id": "x1", "text": "Tokyo at night", "context": None, "url": "u",
                                "group": "itookapicture", "skip_reason": None}


def test_webdataset_shards(tmp_path):
    write_tar(tmp_path / "00000.tar", [
        ("000000000", b"A beach in Brazil", {"url": "http://a.br/1.jpg", "key": "000000000"}),
        ("000000001", b"Mountains", {"url": "http://b.ch/2.jpg", "key": "000000001"}),
        ("000000002", b"\xff\xfe broken", {"url": "http://c.com"}),
        ("000000003", None, {"url": "http://d.com"}),
    ])
    spec = CorpusSpec(name="wds", paths=(str(tmp_path / "00000.tar"),), format="webdataset",
                      mapping=ColumnMapping(text="txt", url="url", id="key"))
    t = read_all(spec)
    assert t.column("text").to_pylist()[:2] == ["A beach in Brazil", "Mountains"]
    assert t.column("url").to_pylist()[1] == "http://b.ch/2.jpg"
    assert t.column("skip_reason").to_pylist() == [None, None, "invalid_utf8", "missing_field"]


def test_missing_mapped_column_fails_before_any_work(tmp_path):
    pq.write_table(pa.table({"caption": ["x"]}), tmp_path / "a.parquet")
    with pytest.raises(CorpusError, match=r"a\.parquet: mapped column\(s\) \['text', 'url', 'uid'\] not found"):
        plan_corpus(spec_from_preset("dc", "datacomp", [str(tmp_path / "a.parquet")]))
    (tmp_path / "w.tsv").write_text("language\tpage_title\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"w\.tsv: .*caption_reference_description"):
        plan_corpus(spec_from_preset("wit", "wit", [str(tmp_path / "w.tsv")]))


def test_non_string_caption_column_type_is_an_error(tmp_path):
    pq.write_table(pa.table({"text": [1, 2], "url": ["a", "b"], "uid": ["1", "2"]}), tmp_path / "n.parquet")
    with pytest.raises(CorpusError, match=r"n\.parquet: column 'text' has type int64"):
        plan_corpus(spec_from_preset("dc", "datacomp", [str(tmp_path / "n.parquet")]))


def test_bad_rows_are_marked_with_reasons(tmp_path):
    big = "Kenya " + "x" * (MAX_TEXT_BYTES + 1)
    pq.write_table(pa.table({
        "text": pa.array([b"ok Peru", None, b"   ", b"\xff\xfeinvalid", big.encode(), b"Chile " + b"y" * 1_000_000], pa.binary()),
        "url": ["a"] * 6, "uid": [str(i) for i in range(6)],
    }), tmp_path / "bad.parquet")
    t = read_all(spec_from_preset("dc", "datacomp", [str(tmp_path / "bad.parquet")]))
    assert t.column("skip_reason").to_pylist() == [None, "null_text", "empty_text", "invalid_utf8", "text_too_long", None]
    lines = [json.dumps({"caption": "fine"}), json.dumps({"caption": 42}), json.dumps({"caption": ["a"]}), "{not json",
             json.dumps({"other": "x"}), json.dumps([1, 2]), json.dumps({"caption": None})]
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = CorpusSpec(name="j", paths=(str(tmp_path / "bad.jsonl"),), format="jsonl", mapping=ColumnMapping(text="caption"))
    assert read_all(spec).column("skip_reason").to_pylist() == [
        None, "non_string_text", "non_string_text", "invalid_json", "missing_field", "not_an_object", "null_text"]


def test_malformed_csv_rows_and_invalid_utf8_are_counted(tmp_path):
    (tmp_path / "m.tsv").write_bytes(b"good caption\thttp://a\nno url column here\n\xff\xfe\thttp://b\n")
    t = read_all(spec_from_preset("cc", "cc3m", [str(tmp_path / "m.tsv")]))
    assert sorted(r for r in t.column("skip_reason").to_pylist() if r) == ["invalid_utf8", "malformed_row"]
    assert t.num_rows == 3


def test_unreadable_file_named_or_skipped(tmp_path):
    pq.write_table(pa.table({"text": ["Kenya"], "url": ["u"], "uid": ["1"]}), tmp_path / "good.parquet")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 this is not parquet")
    spec = spec_from_preset("dc", "datacomp", [str(tmp_path)])
    with pytest.raises(CorpusError, match=r"broken\.parquet: unreadable"):
        plan_corpus(spec)
    plan = plan_corpus(spec, on_error="skip")
    assert [u[0].rsplit("/", 1)[-1] for u in plan.unreadable] == ["broken.parquet"] and len(plan.shards) == 1


def test_nothing_matches_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no input files match"):
        plan_corpus(spec_from_preset("dc", "datacomp", [str(tmp_path / "*.parquet")]))
    with pytest.raises(FileNotFoundError, match="input not found"):
        plan_corpus(spec_from_preset("dc", "datacomp", [str(tmp_path / "nope.parquet")]))


def test_object_store_urls_through_fsspec(tmp_path):
    import fsspec

    fs = fsspec.filesystem("memory")
    with fs.open("/bucket/corpus/part-0.parquet", "wb") as fh:
        pq.write_table(pa.table({"text": ["Rome"], "url": ["http://a.it"], "uid": ["r"]}), fh)
    t = read_all(spec_from_preset("mem", "datacomp", ["memory://bucket/corpus/*.parquet"]))
    assert t.column("text").to_pylist() == ["Rome"]


def test_format_detected_from_files_of_a_directory_or_glob(tmp_path):
    from connectors.captions.corpus import detect_format

    (tmp_path / "a.tsv.gz").write_bytes(gzip.compress(b"x\ty\n"))
    (tmp_path / "b.parquet").write_bytes(b"")
    assert detect_format(str(tmp_path / "*.tsv.gz")) == "tsv"
    assert detect_format([str(tmp_path / "b.parquet")]) == "parquet"
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "c.jsonl").write_text("{}\n")
    assert detect_format(str(tmp_path / "d")) == "jsonl"


def test_the_empty_caption_check_is_trims_rule_on_every_code_point():
    """The reader's quick check for unusable captions (``utf8_is_space``) must say "whitespace" of
    exactly the characters that trimming removes, or a batch with an empty caption would pass it."""
    import pyarrow.compute as pc

    chars = pa.array([chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000])
    trimmed_away = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(chars)), 0)
    assert pc.all(pc.equal(pc.utf8_is_space(chars), trimmed_away)).as_py()
    assert 20 < pc.sum(trimmed_away).as_py() < 40  # the Unicode whitespace characters, not none of them


def test_a_scan_without_records_reads_no_ids_but_still_marks_bad_ones(tmp_path):
    """``with_ids=False`` (a scan writing no records): no ``<file>#<row>`` ids are made, while a mapped
    id column is still read, so a row whose id is not UTF-8 is skipped as it is with ids."""
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": ["a cat", "a dog", "   "], "uid": pa.array([b"u1", b"\xff", b"u3"], pa.binary())}), path)
    no_id = CorpusSpec("c", (str(path),), "parquet", ColumnMapping(text="text"))
    with_id = CorpusSpec("c", (str(path),), "parquet", ColumnMapping(text="text", id="uid"))
    for spec in (no_id, with_id):
        (shard,) = plan_corpus(spec).shards
        full = pa.Table.from_batches(list(read_shard(shard, spec)))
        lean = pa.Table.from_batches(list(read_shard(shard, spec, with_ids=False)))
        assert lean.column("skip_reason").to_pylist() == full.column("skip_reason").to_pylist()
        assert lean.drop_columns("record_id").equals(full.drop_columns("record_id"))
    assert lean.column("record_id").to_pylist() == ["u1", None, "u3"]
    assert lean.column("skip_reason").to_pylist() == [None, "invalid_utf8", "empty_text"]
    assert pa.Table.from_batches(list(read_shard(plan_corpus(no_id).shards[0], no_id, with_ids=False))).column(
        "record_id").null_count == 3
