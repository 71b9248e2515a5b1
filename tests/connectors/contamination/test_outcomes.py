"""Outcome tables from Parquet and CSV: round trips, the same statistics as in process, and every bad input."""
from __future__ import annotations

import gzip

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.contamination.analysis import analyse
from audit.contamination.outcomes import OutcomeError, check_outcomes
from connectors.contamination.outcomes import OutcomeColumns, read_outcomes, write_outcomes
from tests.fixtures.contamination.reference_study import reference_outcomes, write_reference_outcomes

HEADER = "question_id,model,condition,r,correct"


def csv(tmp_path, name: str, lines: list[str]) -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", ["ref.parquet", "ref.csv"])
def test_reference_table_round_trips_and_gives_the_in_process_statistics(tmp_path, name):
    url = write_reference_outcomes(str(tmp_path / "out" / name))
    table = read_outcomes(url)
    expected = check_outcomes(reference_outcomes())
    pd.testing.assert_frame_equal(table.frame, expected)
    from_file, in_process = analyse(table.frame), analyse(reference_outcomes())
    assert from_file.to_dict() == in_process.to_dict()
    assert table.files[0].url.endswith(name) and len(table.fingerprint) == 64
    assert not list((tmp_path / "out").glob("*.tmp"))


def test_directory_of_parts_is_one_table_and_a_duplicate_across_files_names_both(tmp_path):
    frame = reference_outcomes()
    first, second = frame[frame["model"] < "model_06"], frame[frame["model"] >= "model_06"]
    write_outcomes(first, str(tmp_path / "parts" / "a.parquet"))
    write_outcomes(second, str(tmp_path / "parts" / "b.parquet"))
    assert len(read_outcomes(str(tmp_path / "parts")).frame) == len(frame)
    write_outcomes(frame.iloc[[5]], str(tmp_path / "parts" / "c.parquet"))
    with pytest.raises(OutcomeError, match=r"a\.parquet: data row 6 and .*c\.parquet: data row 1: both hold"):
        read_outcomes(str(tmp_path / "parts"))


def test_csv_keeps_id_text_multiline_answers_and_gzip(tmp_path):
    lines = [HEADER + ",status,answer", '007,m,forward_full,1,1,answered,"B"', '007,m,noisy_rewrite,1,,unparsable,"I think\nit is B"',
             "7,m,forward_full,1,0,answered,A"]
    path = tmp_path / "t.csv.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    frame = read_outcomes(str(path)).frame
    assert frame["question_id"].tolist() == ["007", "007", "7"]
    assert frame["answer"].tolist() == ["B", "I think\nit is B", "A"]
    assert frame["correct"].tolist() == [1, 0, 0]  # unparsable without a value scores 0


def test_mapped_column_names_and_typed_parquet(tmp_path):
    table = pa.table({"id": pa.array([1, 2], pa.int64()), "llm": ["m", "m"], "cond": ["forward_full", "noisy_rewrite"],
                      "routers": pa.array([None, 3], pa.int32()), "ok": [True, False]})
    pq.write_table(table, tmp_path / "t.parquet")
    columns = OutcomeColumns(question_id="id", model="llm", condition="cond", r="routers", correct="ok")
    frame = read_outcomes(str(tmp_path / "t.parquet"), columns).frame
    assert frame[["question_id", "r", "correct", "status"]].values.tolist() == [["1", 1, 1, "answered"], ["2", 3, 0, "answered"]]
    with pytest.raises(OutcomeError, match=r"t\.parquet: missing column\(s\) \['question_id', 'condition', 'correct'\]"):
        read_outcomes(str(tmp_path / "t.parquet"), OutcomeColumns(model="llm", r="routers"))


@pytest.mark.parametrize("row,message", [
    ("q1,m,forward_full,1,yes", r"data row 2, field 'correct': expected 0 or 1, got 'yes'"),
    ("q1,m,forward_full,1,", r"data row 2, field 'correct': missing; expected 0 or 1 \(without a status column"),
    ("q1,m,forward_full,2,1", r"data row 2, field 'r': the clean condition 'forward_full' has r = 1, got 2"),
    ("q1,m,noisy_rewrite,,1", r"data row 2, field 'r': missing; expected the number of routers"),
    ("q1,m,noisy_rewrite,0,1", r"data row 2, field 'r': expected an integer >= 1, got '0'"),
    ("q1,m,noisy_rewrite,1.5,1", r"data row 2, field 'r': expected an integer >= 1, got '1.5'"),
    ("q1,m,noisy,1,1", r"data row 2, field 'condition': expected one of \['forward_full', 'noisy_rewrite'\]"),
    (",m,forward_full,1,1", r"data row 2, field 'question_id': missing"),
    ("q1, ,forward_full,1,1", r"data row 2, field 'model': expected a model name"),
    ("q0,m,forward_full,1,1",
     r"data row 1 and .* data row 2: both hold \(question_id, model, condition, r\) = \('q0', 'm', 'forward_full', 1\)"),
])
def test_bad_values_name_file_row_and_field(tmp_path, row, message):
    path = csv(tmp_path, "bad.csv", [HEADER, "q0,m,forward_full,1,1", row])
    with pytest.raises(OutcomeError, match=message) as info:
        read_outcomes(path)
    assert str(info.value).startswith(path)


@pytest.mark.parametrize("row,message", [
    ("q1,m,forward_full,1,1,unparsable", r"data row 2, field 'correct': is 1 but the status is 'unparsable'"),
    ("q1,m,forward_full,1,,answered", r"data row 2, field 'correct': missing; expected 0 or 1$"),
    ("q1,m,forward_full,1,0,crashed", r"data row 2, field 'status': expected one of \['answered'"),
    ("q1,m,forward_full,1,0,", r"data row 2, field 'status': missing"),
])
def test_status_rules(tmp_path, row, message):
    path = csv(tmp_path, "bad.csv", [HEADER + ",status", "q0,m,forward_full,1,1,answered", row])
    with pytest.raises(OutcomeError, match=message):
        read_outcomes(path)


def test_unscored_categories_ignore_correct(tmp_path):
    path = csv(tmp_path, "t.csv", [HEADER + ",status", "q0,m,forward_full,1,0,timeout", "q1,m,forward_full,1,,failed",
                                   "q2,m,noisy_rewrite,2,1,empty_router", "q3,m,noisy_rewrite,2,,no_options"])
    frame = read_outcomes(path).frame
    assert frame["correct"].isna().all()
    assert frame["status"].tolist() == ["timeout", "failed", "empty_router", "no_options"]


def test_file_level_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.csv"):
        read_outcomes(str(tmp_path / "absent.csv"))
    header_only = csv(tmp_path, "empty.csv", [HEADER])
    with pytest.raises(OutcomeError, match="empty.csv: no outcome rows"):
        read_outcomes(header_only)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(OutcomeError, match="broken.parquet: unreadable as an outcome table"):
        read_outcomes(str(broken))
    (tmp_path / "mixed").mkdir()
    csv(tmp_path / "mixed", "a.csv", [HEADER + ",status", "q0,m,forward_full,1,1,answered"])
    csv(tmp_path / "mixed", "b.csv", [HEADER, "q1,m,forward_full,1,1"])
    with pytest.raises(OutcomeError, match=r"b\.csv: column 'status' not found, but other outcome files have it"):
        read_outcomes(str(tmp_path / "mixed"))
    with pytest.raises(OutcomeError, match="write outcomes as .parquet, .pq or .csv"):
        write_outcomes(reference_outcomes(), str(tmp_path / "out.json"))
