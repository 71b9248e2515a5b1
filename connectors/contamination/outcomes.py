"""Per-question outcome tables of the contamination audit, from Parquet or CSV, validated on read.

One row per (question, worker model, condition, r): ``question_id``, ``model``, ``condition``,
``r``, ``correct`` (0/1), optional ``status`` and ``answer`` (the worker's raw reply); the rules
are ``audit.contamination.outcomes.check_outcomes``. Files, directories (every ``.parquet``/``.csv``
under them, e.g. a run's parts) and globs, local or any fsspec URL; several files are concatenated
and checked as one table, so a duplicate across files names both. CSV is read as text (ids such
as ``007`` keep their zeros; values may span lines) and converted by the same checks as Parquet.
Every error names the file, the 1-based data row (the header is not a data row) and the field.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from audit.contamination.outcomes import COLUMNS, REQUIRED, ROW, SOURCE, OutcomeError, check_outcomes
from connectors.io.fs import FileRef, describe, expand, fingerprint
from connectors.runs.output import write_whole

PARQUET = (".parquet", ".pq")
CSV = (".csv", ".csv.gz")


@dataclass(frozen=True)
class OutcomeColumns:
    """The file's column name for each field (hand-built tables may say ``id`` or ``is_correct``)."""

    question_id: str = "question_id"
    model: str = "model"
    condition: str = "condition"
    r: str = "r"
    correct: str = "correct"
    status: str = "status"
    answer: str = "answer"

    def mapping(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, eq=False)
class OutcomeTable:
    """The checked table (canonical columns), the files it came from and their fingerprint."""

    frame: pd.DataFrame
    files: list[FileRef]

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.files)

    @property
    def source(self) -> str:
        return describe(self.files)


def _header(ref: FileRef) -> list[str]:
    if ref.url.lower().endswith(PARQUET):
        with ref.open(compression=None) as fh:
            return pq.ParquetFile(fh).schema_arrow.names
    with ref.open() as fh:
        first = fh.readline()
    return pcsv.read_csv(pa.py_buffer(first + b"\n" if not first.endswith(b"\n") else first)).column_names


def _read_file(ref: FileRef, columns: OutcomeColumns) -> pd.DataFrame:
    """The mapped columns of one file, renamed to the canonical names, with file and data-row provenance."""
    try:
        names = _header(ref)
    except Exception as exc:  # any format error: name the file
        raise OutcomeError(f"{ref.url}: unreadable as an outcome table ({type(exc).__name__}: {exc})") from exc
    mapping = columns.mapping()
    missing = [mapping[c] for c in REQUIRED if mapping[c] not in names]
    if missing:
        raise OutcomeError(f"{ref.url}: missing column(s) {missing}; file has columns {names}")
    wanted = {mapping[c]: c for c in COLUMNS if mapping[c] in names}
    try:
        if ref.url.lower().endswith(PARQUET):
            with ref.open(compression=None) as fh:
                table = pq.read_table(fh, columns=list(wanted))
        else:
            with ref.open() as fh:
                table = pcsv.read_csv(fh, parse_options=pcsv.ParseOptions(newlines_in_values=True),
                                      convert_options=pcsv.ConvertOptions(
                                          include_columns=list(wanted), column_types={n: pa.string() for n in wanted},
                                          strings_can_be_null=True))
    except Exception as exc:  # as above
        raise OutcomeError(f"{ref.url}: unreadable as an outcome table ({type(exc).__name__}: {exc})") from exc
    frame = pd.DataFrame({wanted[name]: table.column(name).to_pylist() for name in table.column_names}, dtype=object)
    frame[SOURCE] = ref.url
    frame[ROW] = range(1, len(frame) + 1)
    return frame


def read_outcomes(paths: str | list[str], columns: OutcomeColumns = OutcomeColumns()) -> OutcomeTable:
    """Read and check outcome files; an optional column must be in every file or in none."""
    files = expand(paths, PARQUET + CSV)
    frames = [_read_file(ref, columns) for ref in files]
    for optional in ("status", "answer"):
        has = [optional in f.columns for f in frames]
        if any(has) and not all(has):
            lacking = next(ref.url for ref, h in zip(files, has) if not h)
            raise OutcomeError(f"{lacking}: column {columns.mapping()[optional]!r} not found, but other outcome files "
                               "have it; expected it in every file or in none")
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        raise OutcomeError(f"{describe(files)}: no outcome rows")
    return OutcomeTable(frame=check_outcomes(frame, describe(files), columns.mapping()), files=files)


def write_outcomes(frame: pd.DataFrame, url: str) -> None:
    """Write a checked outcome table as Parquet or CSV (by extension), whole or not at all."""
    lower = url.lower()
    if not lower.endswith(PARQUET + (".csv",)):
        raise OutcomeError(f"{url}: write outcomes as .parquet, .pq or .csv")
    table = check_outcomes(frame, url)
    arrow = pa.Table.from_pandas(table, preserve_index=False, schema=pa.schema([
        ("question_id", pa.string()), ("model", pa.string()), ("condition", pa.string()), ("r", pa.int64()),
        ("correct", pa.int8()), ("status", pa.string()), ("answer", pa.string())]))
    write_whole(url, (lambda fh: pq.write_table(arrow, fh)) if lower.endswith(PARQUET) else (lambda fh: pcsv.write_csv(arrow, fh)))
