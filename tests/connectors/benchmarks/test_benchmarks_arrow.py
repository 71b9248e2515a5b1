"""Parquet with a field mapping: the column path gives exactly the row path's items and errors."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.benchmarks.arrow import arrow_items
from connectors.benchmarks.read import iter_file_batches, read_benchmark
from connectors.benchmarks.schema import BenchmarkError, FieldMapping
from connectors.benchmarks.spec import BenchmarkSpec

ROWS = [
    {"qid": "a", "q": "Colour?", "ctx": "p1", "A": "red", "B": "grey", "opts": ["red", "grey"], "key": "red"},
    {"qid": "", "q": "Color?", "ctx": "p2", "A": "blue", "B": "gray", "opts": ["blue"], "key": "gray"},
    {"qid": "c", "q": "5 km?", "ctx": "p3", "A": "x", "B": "y", "opts": [], "key": "y"},
]
MAPPINGS = [
    FieldMapping(id="qid", question="q", passage="ctx", options=("A", "B"), gold="key"),
    FieldMapping(question="q", options="opts", gold=("key", "A")),
]


def write(tmp_path, rows: list[dict]) -> None:
    """The same records as JSON Lines (read row by row) and as Parquet (read by columns)."""
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "b.parquet", row_group_size=2)
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def both(tmp_path, rows: list[dict], mapping: FieldMapping) -> list[list[dict]]:
    write(tmp_path, rows)
    return [read_benchmark(BenchmarkSpec(str(tmp_path / f"b.{ext}"), mapping=mapping, name="t")).to_pylist()
            for ext in ("jsonl", "parquet")]


@pytest.mark.parametrize("mapping", MAPPINGS)
def test_same_items_as_the_row_path(tmp_path, mapping):
    rows, columns = both(tmp_path, ROWS, mapping)
    assert columns == rows
    assert columns[1]["id"] == "b:1"  # no id, or an empty one: file:row


def test_batches_are_columnar_and_ranges_keep_file_rows(tmp_path):
    pq.write_table(pa.Table.from_pylist(ROWS * 4).set_column(0, "qid", pa.array([str(i) for i in range(12)])), tmp_path / "r.parquet")
    spec = BenchmarkSpec(str(tmp_path / "r.parquet"), mapping=MAPPINGS[0], name="t")
    raw = pq.read_table(tmp_path / "r.parquet").to_batches()[0]
    assert arrow_items(raw, MAPPINGS[0], "t", "r", 0) is not None  # typed columns: no per-row conversion
    got = [r["id"] for b in iter_file_batches(spec, spec.inputs[0], batch_size=5, rows=(3, 9)) for r in b.to_pylist()]
    assert got == [str(i) for i in range(3, 9)]


def test_integer_ids_and_dictionary_strings(tmp_path):
    table = pa.table({"qid": pa.array([7, 8]), "q": pa.array(["x", "y"]).dictionary_encode()})
    pq.write_table(table, tmp_path / "d.parquet")
    items = read_benchmark(BenchmarkSpec(str(tmp_path / "d.parquet"), mapping=FieldMapping(id="qid", question="q"))).to_pylist()
    assert [(i["id"], i["question"], i["options"], i["gold"]) for i in items] == [("7", "x", [], []), ("8", "y", [], [])]


@pytest.mark.parametrize(("change", "message"), [
    ({"q": None}, r"row 1, field 'q': expected a string, got NoneType"),
    ({"opts": ["blue", None]}, r"row 1, field 'opts': element 1: expected a string, got NoneType"),
    ({"qid": "a"}, r"row 1, field 'id': duplicate id 'a' \(first seen in \S+ row 0\)"),
])
def test_bad_values_give_the_row_path_error(tmp_path, change, message):
    rows = [dict(ROWS[0]), {**ROWS[1], **change}, dict(ROWS[2])]
    mapping = FieldMapping(id="qid", question="q", options="opts", gold="key")
    write(tmp_path, rows)
    for ext in ("jsonl", "parquet"):
        with pytest.raises(BenchmarkError, match=rf"b\.{ext}: {message}"):
            read_benchmark(BenchmarkSpec(str(tmp_path / f"b.{ext}"), mapping=mapping))


def test_numbers_where_text_is_expected_name_the_row(tmp_path):
    pq.write_table(pa.table({"q": pa.array([1, 2])}), tmp_path / "n.parquet")
    with pytest.raises(BenchmarkError, match=r"n\.parquet: row 0, field 'q': expected a string, got int 1"):
        read_benchmark(BenchmarkSpec(str(tmp_path / "n.parquet"), mapping=FieldMapping(question="q")))
    pq.write_table(pa.table({"q": ["a"], "g": ["x; y"]}), tmp_path / "s.parquet")
    spec = BenchmarkSpec(str(tmp_path / "s.parquet"), mapping=FieldMapping(question="q", gold="g", list_sep="; "))
    assert read_benchmark(spec).to_pylist()[0]["gold"] == ["x", "y"]  # splitting: the row path's job
