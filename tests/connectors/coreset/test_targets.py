"""Target tables, prediction files and saved designs: shards, formats, and errors naming file and column."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.coreset.design import DesignConfig, build_design
from connectors.coreset.designs import read_design
from connectors.coreset.predictions import PredictionColumns, read_predictions
from connectors.coreset.targets import (
    TargetColumns,
    TargetError,
    plan_targets,
    read_full_table,
    read_target_shard,
)
from connectors.io.shards import Shard

COLS = TargetColumns(id="id", label="y", scores=("s1", "s2"), group="g")


def frame(n: int = 1_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": np.arange(n) * 2, "y": (rng.random(n) < 0.1).astype(int), "s1": rng.random(n),
                         "s2": rng.random(n), "g": rng.choice(["a", "b"], n)})


def test_parquet_shards_are_row_group_ranges_with_stable_ids(tmp_path):
    pq.write_table(pa.Table.from_pandas(frame(), preserve_index=False), tmp_path / "t.parquet", row_group_size=100)
    plan = plan_targets([str(tmp_path)], COLS, shard_rows=250)
    assert [s.row_groups for s in plan.shards] == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9,)]
    assert [s.expected_rows for s in plan.shards] == [300, 300, 300, 100] and plan.expected_rows == 1_000
    assert [s.shard_id for s in plan_targets([str(tmp_path)], COLS, 250).shards] == [s.shard_id for s in plan.shards]
    assert Shard.from_json(plan.shards[1].to_json()) == plan.shards[1]
    block = read_target_shard(plan.shards[1], COLS)
    assert block.ids.tolist() == list(range(600, 1200, 2)) and block.scores.shape == (300, 2)
    assert block.labels.dtype == bool and set(block.groups) <= {"a", "b"}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_text_formats_read_whole_files(tmp_path, fmt):
    f = frame(50)
    path = tmp_path / f"t.{fmt}"
    f.to_csv(path, index=False) if fmt == "csv" else f.to_json(path, orient="records", lines=True)
    plan = plan_targets([str(path)], COLS)
    assert len(plan.shards) == 1 and plan.shards[0].expected_rows is None
    block = read_target_shard(plan.shards[0], COLS)
    assert np.array_equal(block.ids, f["id"]) and np.allclose(block.scores[:, 1], f["s2"])


def test_schema_errors_name_file_and_column(tmp_path):
    f = frame(20)
    pq.write_table(pa.Table.from_pandas(f.drop(columns="s2"), preserve_index=False), tmp_path / "a.parquet")
    with pytest.raises(TargetError, match=r"a\.parquet: column\(s\) \['s2'\] not found"):
        plan_targets([str(tmp_path / "a.parquet")], COLS)
    pq.write_table(pa.Table.from_pandas(f.assign(y=f["y"].map({0: "no", 1: "yes"})), preserve_index=False), tmp_path / "b.parquet")
    with pytest.raises(TargetError, match=r"b\.parquet: column 'y' has type (large_)?string; expected 0/1 labels"):
        plan_targets([str(tmp_path / "b.parquet")], COLS)
    pq.write_table(pa.Table.from_pandas(f.assign(id=f["id"] + 0.5), preserve_index=False), tmp_path / "c.parquet")
    with pytest.raises(TargetError, match=r"c\.parquet: column 'id' has type double"):
        plan_targets([str(tmp_path / "c.parquet")], COLS)
    (tmp_path / "d.parquet").write_bytes(b"PAR1 not parquet")
    with pytest.raises(TargetError, match=r"d\.parquet: unreadable"):
        plan_targets([str(tmp_path / "d.parquet")], COLS)


def test_value_errors_name_file_and_column(tmp_path):
    f = frame(20)
    f.loc[3, "id"] = None
    f.to_csv(tmp_path / "ids.csv", index=False)
    with pytest.raises(TargetError, match=r"ids\.csv: column 'id' has 1 missing id"):
        read_target_shard(plan_targets([str(tmp_path / "ids.csv")], COLS).shards[0], COLS)
    g = frame(20)
    g.loc[4, "s1"] = 1.5
    g.to_json(tmp_path / "s.jsonl", orient="records", lines=True)
    with pytest.raises(ValueError, match=r"s\.jsonl: column 's1' has 1 score\(s\) outside \[0, 1\]"):
        read_target_shard(plan_targets([str(tmp_path / "s.jsonl")], COLS).shards[0], COLS)


def test_full_table_is_checked_file_by_file(tmp_path):
    f = frame(40).assign(pred=lambda d: (d["s1"] > 0.5).astype(int))
    f.iloc[:20].to_parquet(tmp_path / "a.parquet")
    f.iloc[20:].assign(pred=2).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(ValueError, match=r"b\.parquet: column 'pred' is not binary"):
        read_full_table([str(tmp_path)], "y", ["s1"], ["pred"])
    f.iloc[20:].to_parquet(tmp_path / "b.parquet")
    table = read_full_table([str(tmp_path)], "y", ["s1"], ["pred"])
    assert np.array_equal(table.labels, f["y"] == 1) and np.array_equal(table.predictions["pred"], f["pred"] == 1)
    assert len(table.files) == 2 and len(table.fingerprint) == 64


def test_prediction_runs_become_columns_and_must_cover_the_same_ids(tmp_path):
    long = pd.DataFrame({"id": [1, 2, 3, 1, 2, 3], "pred": [1, 0, 0, 1, 1, 0], "seed": [7, 7, 7, 8, 8, 8]})
    long.iloc[:4].to_csv(tmp_path / "p1.csv", index=False)
    long.iloc[4:].to_csv(tmp_path / "p2.csv", index=False)  # sharded output of one model
    cols = PredictionColumns("id", "pred", "seed")
    p = read_predictions("m", [str(tmp_path / "p1.csv"), str(tmp_path / "p2.csv")], cols)
    assert p.runs == ("7", "8") and p.ids.tolist() == [1, 2, 3]
    assert p.values.tolist() == [[True, True], [False, True], [False, False]]
    long.iloc[:5].to_csv(tmp_path / "short.csv", index=False)
    with pytest.raises(TargetError, match=r"short\.csv: column 'seed': run\(s\) \['8'\] cover \[2\] of the 3 ids"):
        read_predictions("m", [str(tmp_path / "short.csv")], cols)
    pd.concat([long, long.iloc[:1]]).to_csv(tmp_path / "dup.csv", index=False)
    with pytest.raises(TargetError, match=r"dup\.csv: columns 'id' and 'seed' repeat 1 \(id, run\) pair"):
        read_predictions("m", [str(tmp_path / "dup.csv")], cols)
    long.drop(columns="seed").iloc[:3].to_json(tmp_path / "one.jsonl", orient="records", lines=True)
    assert read_predictions("m", [str(tmp_path / "one.jsonl")], cols).runs == ("pred",)  # no run column: one run
    with pytest.raises(TargetError, match=r"one\.jsonl: column 'seed' not found, but other files"):
        read_predictions("m", [str(tmp_path / "p1.csv"), str(tmp_path / "one.jsonl")], cols)


def test_missing_predictions_error_or_count_as_negative(tmp_path):
    pd.DataFrame({"id": ["a", "b", "c"], "pred": [1, None, 0]}).to_parquet(tmp_path / "m.parquet")
    cols = PredictionColumns("id", "pred")
    with pytest.raises(ValueError, match=r"m\.parquet: column 'pred' has 1 missing value"):
        read_predictions("m", [str(tmp_path / "m.parquet")], cols)
    p = read_predictions("m", [str(tmp_path / "m.parquet")], cols, missing="negative")
    assert p.missing_as_negative == 1 and p.values[:, 0].tolist() == [True, False, False]


def test_saved_design_reads_back_and_a_wrong_directory_is_named(tmp_path):
    ids = np.arange(300)
    labels = ids % 30 == 0
    design, manifest = build_design(ids, labels, np.where(labels, 0.9, (ids % 7) / 70), DesignConfig(tau=0.5, seed=0))
    pq.write_table(pa.Table.from_pandas(design, preserve_index=False), tmp_path / "design.parquet")
    (tmp_path / "design.json").write_text(json.dumps(manifest.to_dict()))
    got, got_manifest, files = read_design(str(tmp_path))
    assert got.equals(design) and got_manifest == manifest and len(files) == 2
    with pytest.raises(TargetError, match=r"nowhere/design\.json: not found"):
        read_design(str(tmp_path / "nowhere"))
