"""Reading a calibration sample: one schema in CSV, JSON Lines and Parquet; bad rows named by file, row and field."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.geo.calibration import CalibrationError, read_calibration, shipped_path

ROWS = [{"caption": "Ferry in Norway", "country": "NO"}, {"caption": "a dog on a sofa", "country": ""},
        {"caption": "Big Ben, London", "country": "gb", "weight": 2.5}]


def _csv(path, rows, columns=("caption", "country", "weight")):
    import csv

    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, columns)
        w.writeheader()
        w.writerows(rows)
    return path


def test_the_three_formats_read_the_same(tmp_path):
    csv_file = _csv(tmp_path / "s.csv", ROWS)
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("\n".join(json.dumps({**r, "country": r["country"] or None}) for r in ROWS) + "\n")
    parquet = tmp_path / "s.parquet"
    pq.write_table(pa.table({"caption": [r["caption"] for r in ROWS], "country": ["NO", None, "GB"],
                             "weight": [None, None, 2.5]}), parquet)
    for path in (csv_file, jsonl, parquet):
        s = read_calibration(path)
        assert s.captions == [r["caption"] for r in ROWS], path
        assert s.countries == ["NO", None, "GB"], path  # empty and null are "none"; codes are upper-cased
        assert s.weights == [1.0, 1.0, 2.5], path
        assert len(s.sha256) == 64


@pytest.mark.parametrize(("rows", "message"), [
    ([{"caption": "Lyon", "country": "XX"}], r"s\.csv: row 1, field 'country': 'XX' is no ISO 3166-1 alpha-2 code"),
    ([{"caption": "ok", "country": ""}, {"caption": "  ", "country": "FR"}], r"s\.csv: row 2, field 'caption'"),
    ([{"caption": "ok", "country": "FR", "weight": "-1"}], r"s\.csv: row 1, field 'weight': expected a positive number"),
    ([], r"s\.csv: the calibration sample has no rows"),
])
def test_a_bad_csv_row_is_named_by_file_row_and_field(tmp_path, rows, message):
    with pytest.raises(CalibrationError, match=message):
        read_calibration(_csv(tmp_path / "s.csv", rows))


def test_bad_json_lines_and_missing_columns_are_named(tmp_path):
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"caption": "ok", "country": "FR"}\n{"caption": "x", "country": 7}\n')
    with pytest.raises(CalibrationError, match=r"s\.jsonl: row 2, field 'country': expected an ISO 3166-1 alpha-2 code"):
        read_calibration(bad)
    bad.write_text('{"caption": "ok"}\n[1]\n')
    with pytest.raises(CalibrationError, match=r"s\.jsonl: row 2: expected an object, got list"):
        read_calibration(bad)
    parquet = tmp_path / "s.parquet"
    pq.write_table(pa.table({"text": ["a"], "country": ["FR"]}), parquet)
    with pytest.raises(CalibrationError, match=r"s\.parquet: the calibration sample lacks column\(s\) \['caption'\]"):
        read_calibration(parquet)
    with pytest.raises(CalibrationError, match=r"s\.txt: a calibration sample is CSV, JSON Lines or Parquet"):
        read_calibration(tmp_path / "s.txt")


def test_the_shipped_sample_reads_and_holds_places_and_non_places():
    s = read_calibration(shipped_path())
    assert len(s.captions) == 231 and sum(c is not None for c in s.countries) == 38
    assert {"US", "GB", "FR", "CN", "IN", "AU", "NO"} == {c for c in s.countries if c}
    assert min(s.weights) == 1.0 and max(s.weights) > 1000  # the strata's inverse inclusion probabilities
