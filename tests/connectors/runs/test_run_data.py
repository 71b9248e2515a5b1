"""The run-data convention: Hive partitions every reader decodes, no SQL keywords, ids relative to the input."""
from __future__ import annotations

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pytest

from connectors.io.fs import expand
from connectors.runs.tables import (
    SQL_RESERVED,
    describe_tables,
    input_root,
    part_url,
    read_parts,
    read_table,
    relative_source,
    relativize_ids,
    write_table,
)

NAMES = ["coco", "cc 3m", "a/b", "<b>x</b>", "ünï"]


def test_partition_values_round_trip_through_pandas_duckdb_and_pyarrow(tmp_path):
    run = str(tmp_path / "run")
    for i, name in enumerate(NAMES):
        write_table(run, "records", pa.table({"record_id": [f"f.csv#{i}", f"f.csv#{i + 10}"], "n": [i, i]}), "s1", ("corpus", name))
    frame = pd.read_parquet(f"{run}/data/records")
    assert sorted(set(frame["corpus"].astype(str))) == sorted(NAMES) and len(frame) == 10
    db = duckdb.sql(f"SELECT corpus, count(*) AS n FROM read_parquet('{run}/data/records/**/*.parquet', hive_partitioning=true) "
                    "GROUP BY corpus ORDER BY corpus").fetchall()
    assert db == sorted((n, 2) for n in NAMES)
    table = pads.dataset(f"{run}/data/records", format="parquet", partitioning="hive").to_table()
    assert table.schema.field("corpus").type == pa.string() and sorted(set(table.column("corpus").to_pylist())) == sorted(NAMES)
    assert read_table(run, "records").num_rows == 10 and read_table(run, "absent") is None
    assert describe_tables(run) == {"records": {"path": "data/records/", "partitioning": ["corpus"], "files": 5, "rows": 10}}


def test_a_part_never_holds_its_partition_key_or_an_sql_keyword(tmp_path):
    with pytest.raises(ValueError, match=r"\['group'\] are SQL reserved words"):
        write_table(str(tmp_path), "t", pa.table({"group": ["a"]}))
    with pytest.raises(ValueError, match="column 'corpus' is the partition key"):
        write_table(str(tmp_path), "t", pa.table({"corpus": ["a"]}), partition=("corpus", "a"))
    assert {"group", "end", "order", "select", "table"} <= SQL_RESERVED  # the names that bit users


def test_read_parts_adds_the_partition_back_and_skips_parts_never_written(tmp_path):
    run = str(tmp_path)
    write_table(run, "items", pa.table({"item_id": ["q1"]}), "s1", ("benchmark", "tqa"))
    parts = read_parts(run, "items", [("s1", ("benchmark", "tqa")), ("s2", ("benchmark", "tqa"))])
    assert [p for p, _ in parts] == ["s1"] and parts[0][1].to_pylist() == [{"item_id": "q1", "benchmark": "tqa"}]
    assert part_url(run, "items", "s1", ("benchmark", "a b")).endswith("data/items/benchmark=a%20b/s1.parquet")
    empty = write_table(run, "none", pa.table({"x": pa.array([], pa.int64())}))
    assert pd.read_parquet(empty).columns.tolist() == ["x"]  # an empty table keeps its columns


def test_ids_are_relative_to_the_input_root(tmp_path):
    (tmp_path / "corpus" / "sub").mkdir(parents=True)
    for name in ("a.csv", "sub/b.csv"):
        (tmp_path / "corpus" / name).write_text("caption\nx\n")
    files = [f.url for f in expand(str(tmp_path / "corpus"), (".csv",))]
    for spec in (str(tmp_path / "corpus"), str(tmp_path / "corpus" / "**" / "*.csv")):
        assert [relative_source(u, [input_root(spec)]) for u in files] == ["a.csv", "sub/b.csv"], spec
    assert relative_source(files[0], [input_root(files[0])]) == "a.csv"
    ids = pa.array([f"{files[0]}#0", f"{files[0]}#17", "mapped-id"])
    assert relativize_ids(ids, files[0], "a.csv").to_pylist() == ["a.csv#0", "a.csv#17", "mapped-id"]
