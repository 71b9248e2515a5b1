"""Target tables for HT-Coreset: id, 0/1 label, one or more scorer probabilities, optional group.

Parquet, CSV and JSONL (also ``.gz``), local or any fsspec URL. ``plan_targets`` lists the files,
checks every mapped column against each file's schema (Parquet footer, CSV header, first JSON
record) and cuts the table into shards (``connectors.io.shards.Shard``: Parquet row-group ranges,
or whole text files) whose ids derive from the file URL, content checksum and row groups, so shard
boundaries never depend on Ray.
``read_target_shard`` reads only the mapped columns and checks the values (labels 0/1 on every row,
scores finite probabilities, ids present) with ``audit.coreset.validate``, so a message names the
file and the column before any sampling work starts.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.json as pjson
import pyarrow.parquet as pq

from audit.coreset.validate import binary_labels, binary_predictions, finite_scores
from connectors.io.fs import FileRef, expand, fingerprint
from connectors.io.read_report import InputError, ReadIOError, input_errors
from connectors.io.shards import Shard, shard_id

EXTENSIONS = {
    "parquet": (".parquet", ".pq"),
    "csv": (".csv", ".csv.gz"),
    "jsonl": (".jsonl", ".jsonl.gz", ".ndjson"),
}


class TargetError(InputError):
    """Bad target or prediction input; the message names the file and the column."""


@dataclass(frozen=True)
class TargetColumns:
    """Which source columns hold the id, the 0/1 label, the scorer probabilities and the group."""

    id: str = "id"
    label: str = "label"
    scores: tuple[str, ...] = ("score",)
    group: str | None = None

    def names(self) -> list[str]:
        return list(dict.fromkeys(c for c in (self.id, self.label, *self.scores, self.group) if c))


TARGETS = "targets"  # the input name of a target table's shards


def target_shard(ref: FileRef, fmt: str, row_groups: tuple[int, ...] = (), expected_rows: int | None = None) -> Shard:
    """One Parquet row-group range or one whole CSV/JSONL file of the target table."""
    return Shard(shard_id(TARGETS, ref.checksum, ref.url, row_groups), TARGETS, ref.url, fmt, row_groups,
                 expected_rows=expected_rows, size_bytes=ref.size)


@dataclass(frozen=True)
class TargetPlan:
    """The shards of a target table and the fingerprint of its files."""

    shards: list[Shard]
    fingerprint: str
    files: int

    @property
    def expected_rows(self) -> int | None:
        counts = [s.expected_rows for s in self.shards]
        return sum(c for c in counts if c is not None) if all(c is not None for c in counts) else None


@dataclass(frozen=True, eq=False)
class TargetBlock:
    """Validated rows of one shard: ids, labels (bool), scores (n, m) float64, groups or None."""

    ids: np.ndarray
    labels: np.ndarray
    scores: np.ndarray
    groups: np.ndarray | None
    source: str


def detect_format(url: str) -> str:
    lower = url.lower()
    for fmt, exts in EXTENSIONS.items():
        if lower.endswith(exts):
            return fmt
    raise TargetError(f"{url}: cannot tell the format from the extension; expected one of {sorted(EXTENSIONS)}")


def _schema_names(ref: FileRef, fmt: str) -> tuple[list[str], pa.Schema | None, pq.FileMetaData | None]:
    if fmt == "parquet":
        with ref.open(compression=None) as fh:
            meta = pq.ParquetFile(fh).metadata
        schema = meta.schema.to_arrow_schema()
        return schema.names, schema, meta
    with ref.open() as fh:
        first = fh.readline().decode("utf-8", errors="replace").rstrip("\r\n")
    if not first.strip():
        raise TargetError(f"{ref.url}: the file is empty" + (" (no header line)" if fmt == "csv" else " (no first record)"))
    if fmt == "csv":
        return pcsv.read_csv(pa.py_buffer(first.encode() + b"\n")).column_names, None, None
    try:
        record = json.loads(first) if first.strip() else {}
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, the int-digits limit, nesting too deep
        raise TargetError(f"{ref.url}: first record is not JSON ({exc})") from exc
    return list(record) if isinstance(record, dict) else [], None, None


def schema_names(ref: FileRef) -> list[str]:
    """Column names of one file (format from its extension)."""
    return _schema_names(ref, detect_format(ref.url))[0]


def check_columns(url: str, available: list[str], wanted: list[str], what: str = "column") -> None:
    """Raise naming the file and every missing column."""
    missing = [c for c in wanted if c not in available]
    if missing:
        raise TargetError(f"{url}: {what}(s) {missing} not found; available columns: {available}")


def _check_types(url: str, schema: pa.Schema, columns: TargetColumns) -> None:
    id_type = schema.field(columns.id).type
    if not (pa.types.is_integer(id_type) or pa.types.is_string(id_type) or pa.types.is_large_string(id_type)):
        raise TargetError(f"{url}: column {columns.id!r} has type {id_type}; expected integer or string ids")
    label_type = schema.field(columns.label).type
    if not (pa.types.is_integer(label_type) or pa.types.is_boolean(label_type) or pa.types.is_floating(label_type)):
        raise TargetError(f"{url}: column {columns.label!r} has type {label_type}; expected 0/1 labels (integer or boolean)")
    for name in columns.scores:
        score_type = schema.field(name).type
        if not (pa.types.is_floating(score_type) or pa.types.is_integer(score_type)):
            raise TargetError(f"{url}: column {name!r} has type {score_type}; expected a probability in [0, 1]")


def plan_targets(paths: list[str], columns: TargetColumns, shard_rows: int = 1_000_000, fmt: str | None = None) -> TargetPlan:
    """List the files, check the mapped columns in each, and cut the table into shards.

    Any problem is raised here, before Ray starts, naming the file (and column).
    """
    if not columns.scores:
        raise TargetError("at least one score column is required")
    formats = (fmt,) if fmt else tuple(EXTENSIONS)
    files = expand(list(paths), tuple(e for f in formats for e in EXTENSIONS[f]))
    shards: list[Shard] = []
    for ref in files:
        file_fmt = fmt or detect_format(ref.url)
        try:
            names, schema, meta = _schema_names(ref, file_fmt)
        except (TargetError, ReadIOError):
            raise
        except Exception as exc:  # any format error: name the file
            raise TargetError(f"{ref.url}: unreadable ({type(exc).__name__}: {exc})") from exc
        check_columns(ref.url, names, columns.names())
        if meta is None:
            shards.append(target_shard(ref, file_fmt))
            continue
        _check_types(ref.url, schema, columns)
        group: list[int] = []
        rows = 0
        for i in range(meta.num_row_groups):
            group.append(i)
            rows += meta.row_group(i).num_rows
            if rows >= shard_rows or i == meta.num_row_groups - 1:
                shards.append(target_shard(ref, file_fmt, tuple(group), rows))
                group, rows = [], 0
    return TargetPlan(shards=shards, fingerprint=fingerprint(files), files=len(files))


def read_columns(ref: FileRef, fmt: str, names: list[str], row_groups: tuple[int, ...] = (),
                 newlines_in_values: bool = False) -> pa.Table:
    """Only ``names`` from one file (or some of its row groups); a missing column names the file.

    ``newlines_in_values`` lets quoted CSV values span lines (raw LLM responses, reasoning traces);
    it is off by default because it slows the multi-threaded parse of large target tables.
    """
    with input_errors(ref.url, TargetError):  # a parse error (Arrow names the row) also names the file
        available, _, _ = _schema_names(ref, fmt)
        check_columns(ref.url, available, names)
        if fmt == "parquet":
            with ref.open(compression=None) as fh:
                pf = pq.ParquetFile(fh)
                groups = list(row_groups) or list(range(pf.num_row_groups))
                return pf.read_row_groups(groups, columns=names, use_threads=False)
        with ref.open() as fh:
            if fmt == "csv":
                return pcsv.read_csv(fh, parse_options=pcsv.ParseOptions(newlines_in_values=newlines_in_values),
                                     convert_options=pcsv.ConvertOptions(include_columns=names))
            return pjson.read_json(fh).select(names)


def _ids(column: pa.ChunkedArray, name: str, url: str) -> np.ndarray:
    if column.null_count:
        raise TargetError(f"{url}: column {name!r} has {column.null_count} missing id(s); expected an id on every row")
    if pa.types.is_integer(column.type):
        return column.to_numpy()
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return column.to_numpy(zero_copy_only=False).astype(object)
    raise TargetError(f"{url}: column {name!r} has type {column.type}; expected integer or string ids")


def _numbers(column: pa.ChunkedArray) -> np.ndarray:
    """A numeric column as numpy with nulls as NaN, so the value checks count them."""
    if pa.types.is_boolean(column.type):
        return column.to_numpy(zero_copy_only=False).astype(object) if column.null_count else column.to_numpy(zero_copy_only=False)
    if column.null_count:
        return column.cast(pa.float64()).to_numpy(zero_copy_only=False)
    return column.to_numpy()


def to_block(table: pa.Table, columns: TargetColumns, url: str) -> TargetBlock:
    """Check the values of one read table and return them as arrays."""
    ids = _ids(table.column(columns.id), columns.id, url)
    labels = binary_labels(_numbers(table.column(columns.label)), columns.label, url)
    scores = np.empty((table.num_rows, len(columns.scores)), dtype=np.float64)
    for j, name in enumerate(columns.scores):
        col = table.column(name)
        if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
            raise TargetError(f"{url}: column {name!r} has type {col.type}; expected a probability in [0, 1]")
        scores[:, j] = finite_scores(_numbers(col), name, url)
    groups = None
    if columns.group:
        groups = table.column(columns.group).to_numpy(zero_copy_only=False)
    return TargetBlock(ids=ids, labels=labels, scores=scores, groups=groups, source=url)


def read_target_shard(shard: Shard, columns: TargetColumns) -> TargetBlock:
    """Read and check one shard's mapped columns."""
    table = read_columns(FileRef(shard.source, shard.size_bytes or 0, ""), shard.format, columns.names(), shard.row_groups)
    return to_block(table, columns, shard.source)


@dataclass(frozen=True, eq=False)
class FullTable:
    """A whole target table in memory (the sampler study needs every row): checked columns as arrays."""

    labels: np.ndarray
    scores: dict[str, np.ndarray]
    predictions: dict[str, np.ndarray]
    files: list[FileRef]
    fingerprint: str


def read_full_table(paths: list[str], label: str, scores: list[str], predictions: list[str],
                    fmt: str | None = None) -> FullTable:
    """Labels, score columns (finite probabilities) and 0/1 prediction columns of every file.

    Each file is checked on its own, so a message names the file and column at fault.
    """
    formats = (fmt,) if fmt else tuple(EXTENSIONS)
    files = expand(list(paths), tuple(e for f in formats for e in EXTENSIONS[f]))
    names = list(dict.fromkeys([label, *scores, *predictions]))
    parts: list[tuple[np.ndarray, dict, dict]] = []
    for ref in files:
        table = read_columns(ref, fmt or detect_format(ref.url), names)
        parts.append((
            binary_labels(_numbers(table.column(label)), label, ref.url),
            {c: finite_scores(_numbers(table.column(c)), c, ref.url) for c in scores},
            {c: binary_predictions(_numbers(table.column(c)), c, ref.url) for c in predictions},
        ))
    return FullTable(
        labels=np.concatenate([p[0] for p in parts]),
        scores={c: np.concatenate([p[1][c] for p in parts]) for c in scores},
        predictions={c: np.concatenate([p[2][c] for p in parts]) for c in predictions},
        files=files,
        fingerprint=fingerprint(files),
    )
