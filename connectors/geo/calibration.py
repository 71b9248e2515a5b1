"""A calibration sample for ``benchaudit geo --calibration``: captions a person placed, read and checked.

One schema, whatever the format (CSV with a header, JSON Lines, Parquet): ``caption`` (a non-empty
string) and ``country`` (an ISO 3166-1 alpha-2 code, or empty / null / absent from a JSON record for
a caption that names no country), and optionally ``weight`` (a positive number: the inverse of the
caption's inclusion probability when the sample over-represents some captions; 1 when absent); other
columns are kept out. Every row is checked on read; a bad one stops the run with a
message naming the file, the row (1-based, header not counted) and the field, because a calibration
sample silently read short would change every corrected share.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from audit.geo.sources import country_codes
from connectors.io.read_report import InputError

COLUMNS = ("caption", "country")
WEIGHT = "weight"  # optional
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


class CalibrationError(InputError):
    """Bad calibration sample; the message names the file and, where known, the row and field."""


@dataclass(frozen=True)
class CalibrationSample:
    """Captions and their labelled countries (None: names no country), with the file's identity."""

    path: str
    sha256: str
    captions: list[str]
    countries: list[str | None]
    weights: list[float]


def shipped_path() -> Path:
    """The hand-labelled sample shipped with the demo captions (connectors/samples/README.md)."""
    return Path(__file__).resolve().parents[1] / "samples" / "geo_calibration.csv"


def read_calibration(path: str | Path) -> CalibrationSample:
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CalibrationError(f"{path}: a calibration sample is CSV, JSON Lines or Parquet ({', '.join(FORMATS)}), "
                               f"got {path.suffix or 'no extension'!r}")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CalibrationError(f"{path}: cannot read the calibration sample: {e.strerror or e}") from e
    rows = _rows(path, raw, fmt)
    if not rows:
        raise CalibrationError(f"{path}: the calibration sample has no rows")
    known = country_codes()
    captions, countries, weights = [], [], []
    for i, row in enumerate(rows, start=1):
        caption = row.get("caption")
        if not isinstance(caption, str) or not caption.strip():
            raise CalibrationError(f"{path}: row {i}, field 'caption': expected a non-empty string, got {caption!r}")
        country = row.get("country")
        if country is not None and not isinstance(country, str):
            raise CalibrationError(f"{path}: row {i}, field 'country': expected an ISO 3166-1 alpha-2 code or empty, "
                                   f"got {country!r}")
        country = (country or "").strip().upper() or None
        if country is not None and country not in known:
            raise CalibrationError(f"{path}: row {i}, field 'country': {row.get('country')!r} is no ISO 3166-1 alpha-2 "
                                   "code (leave it empty for a caption that names no country)")
        captions.append(caption)
        countries.append(country)
        weights.append(_weight(path, i, row.get(WEIGHT)))
    return CalibrationSample(str(path), hashlib.sha256(raw).hexdigest(), captions, countries, weights)


def _weight(path: Path, row: int, value: object) -> float:
    if value is None or value == "":
        return 1.0
    try:
        weight = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        weight = math.nan
    if isinstance(value, bool) or not math.isfinite(weight) or weight <= 0:
        raise CalibrationError(f"{path}: row {row}, field 'weight': expected a positive number, got {value!r}")
    return weight


def _rows(path: Path, raw: bytes, fmt: str) -> list[dict]:
    if fmt == "parquet":
        try:
            table = pq.read_table(io.BytesIO(raw))
        except Exception as e:  # pyarrow raises several types for a file that is not Parquet
            raise CalibrationError(f"{path}: not a readable Parquet file: {e}") from e
        _require(path, table.column_names)
        return table.select([c for c in (*COLUMNS, WEIGHT) if c in table.column_names]).to_pylist()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CalibrationError(f"{path}: not UTF-8 (byte {e.start})") from e
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        _require(path, reader.fieldnames or [])
        rows = []
        for i, row in enumerate(reader, start=1):
            if None in row or None in row.values():
                raise CalibrationError(f"{path}: row {i}: expected {len(reader.fieldnames or [])} fields, got a row of "
                                       "another width")
            rows.append(row)
        return rows
    rows = []
    for i, line in enumerate((ln for ln in text.splitlines() if ln.strip()), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise CalibrationError(f"{path}: row {i}: not valid JSON ({e.msg})") from e
        if not isinstance(record, dict):
            raise CalibrationError(f"{path}: row {i}: expected an object, got {type(record).__name__}")
        rows.append(record)
    return rows


def _require(path: Path, columns: Sequence[str]) -> None:
    missing = [c for c in COLUMNS if c not in columns]
    if missing:
        raise CalibrationError(f"{path}: the calibration sample lacks column(s) {missing}; expected {list(COLUMNS)}")
