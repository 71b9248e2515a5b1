"""Caption corpora: Parquet, JSONL, CSV/TSV and WebDataset tar shards, mapped to one item schema.

A corpus is split into *shards* (a Parquet row-group range, or one whole CSV/JSONL/tar file) whose
ids derive from the file URL, its size/stamp and the row range, never from Ray block indices, so a
resumed run recognises the shards it already finished. ``read_shard`` yields Arrow batches in the
item schema; rows that cannot be used are kept with a ``skip_reason`` so they are counted, not lost.
"""
from __future__ import annotations

import csv
import hashlib
import json
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from connectors.fs import FileRef, expand, fingerprint

Format = Literal["parquet", "jsonl", "csv", "tsv", "webdataset"]
EXTENSIONS: dict[Format, tuple[str, ...]] = {
    "parquet": (".parquet", ".pq"),
    "jsonl": (".jsonl", ".jsonl.gz", ".ndjson", ".json"),
    "csv": (".csv", ".csv.gz"),
    "tsv": (".tsv", ".tsv.gz", ".txt"),
    "webdataset": (".tar",),
}
ITEM_SCHEMA = pa.schema([
    ("record_id", pa.string()),
    ("text", pa.string()),  # the caption
    ("context", pa.string()),  # extra text metadata (page title, alt text …) joined by newlines
    ("url", pa.string()),
    ("group", pa.string()),
    ("skip_reason", pa.string()),  # null when the row is usable
])
BATCH_ROWS = 65_536
MAX_TEXT_BYTES = 4 * 1024 * 1024  # longer captions are counted as skipped, not resolved


class CorpusError(ValueError):
    """Bad corpus input, with the file (and row/column) in the message."""


@dataclass(frozen=True)
class ColumnMapping:
    """Which source columns hold the caption, extra text, URL, record id and grouping key."""

    text: str
    context: tuple[str, ...] = ()
    url: str | None = None
    id: str | None = None
    group: str | None = None

    def columns(self) -> list[str]:
        cols = [self.text, *self.context, self.url, self.id, self.group]
        return list(dict.fromkeys(c for c in cols if c))


@dataclass(frozen=True)
class CorpusSpec:
    """One corpus to scan: a name for the report, its paths, format and column mapping."""

    name: str
    paths: tuple[str, ...]
    format: Format
    mapping: ColumnMapping
    header: bool = True  # CSV/TSV: first line holds column names
    column_names: tuple[str, ...] = ()  # CSV/TSV without header

    def __post_init__(self) -> None:
        if self.format not in EXTENSIONS:
            raise ValueError(f"corpus {self.name}: unknown format {self.format!r}; expected one of {sorted(EXTENSIONS)}")
        if self.format in ("csv", "tsv") and not self.header and not self.column_names:
            raise ValueError(f"corpus {self.name}: a {self.format} without header needs column_names")


@dataclass(frozen=True)
class Preset:
    format: Format
    mapping: ColumnMapping
    header: bool = True
    column_names: tuple[str, ...] = ()
    note: str = ""


PRESETS: dict[str, Preset] = {
    "datacomp": Preset("parquet", ColumnMapping(text="text", url="url", id="uid"), note="DataComp metadata Parquet (uid, url, text)"),
    "coyo": Preset("parquet", ColumnMapping(text="text", url="url", id="id"), note="COYO-700M Parquet (id, url, text)"),
    "cc12m": Preset("tsv", ColumnMapping(text="caption", url="url"), header=False, column_names=("url", "caption"), note="cc12m.tsv: url<TAB>caption, no header"),
    "redcaps": Preset("jsonl", ColumnMapping(text="caption", url="url", id="image_id", group="subreddit"), note="RedCaps annotations flattened to JSONL/Parquet (image_id, caption, url, subreddit)"),
    "wit": Preset(
        "tsv",
        ColumnMapping(
            text="caption_reference_description",
            context=("context_page_description", "page_title", "section_title"),
            url="image_url",
        ),
        note="WIT tsv(.gz) with header; add --group-by language for per-language tables",
    ),
    "coco": Preset("csv", ColumnMapping(text="caption", id="caption_id"), note="COCO captions CSV (image_id, caption_id, caption)"),
    "cc3m": Preset("tsv", ColumnMapping(text="caption", url="url"), header=False, column_names=("caption", "url"), note="Conceptual Captions TSV: caption<TAB>url, no header"),
}


@dataclass(frozen=True)
class Shard:
    """A unit of work with a content-derived id: one Parquet row-group range or one whole file."""

    corpus: str
    file: FileRef
    format: Format
    row_groups: tuple[int, ...] = ()
    first_row: int = 0
    expected_rows: int | None = None
    shard_id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        key = f"{self.corpus}|{self.file.url}|{self.file.size}|{self.file.stamp}|{self.row_groups}"
        object.__setattr__(self, "shard_id", hashlib.sha256(key.encode()).hexdigest()[:20])


@dataclass(frozen=True)
class Plan:
    """The shards of one corpus, plus files that could not even be opened for planning."""

    spec: CorpusSpec
    shards: list[Shard]
    unreadable: list[tuple[str, str]]  # (file url, error)
    fingerprint: str

    @property
    def expected_rows(self) -> int | None:
        counts = [s.expected_rows for s in self.shards]
        return None if any(c is None for c in counts) else sum(counts)


def detect_format(paths: list[str] | str) -> Format:
    """The format of a corpus from its files' extensions (directories and globs are listed)."""
    first = paths if isinstance(paths, str) else paths[0]
    every = tuple(e for exts in EXTENSIONS.values() for e in exts if e != ".txt")
    files = expand(first, every)
    for fmt, exts in EXTENSIONS.items():
        if files[0].url.lower().endswith(exts):
            return fmt
    raise CorpusError(f"{first}: cannot tell the format from the extension; pass --format")


def plan_corpus(spec: CorpusSpec, shard_rows: int = 500_000, on_error: str = "fail") -> Plan:
    """List the corpus files, check the mapped columns exist, and cut the work into shards.

    Column problems are raised here, before any work starts, naming the column and the file. A file
    that cannot be opened is raised too, or (``on_error="skip"``) listed in ``Plan.unreadable``.
    """
    files = expand(list(spec.paths), EXTENSIONS[spec.format])
    shards: list[Shard] = []
    unreadable: list[tuple[str, str]] = []
    for ref in files:
        try:
            shards.extend(_plan_file(spec, ref, shard_rows))
        except CorpusError:
            raise
        except Exception as exc:  # noqa: BLE001 — any I/O or format error makes the file unreadable
            if on_error != "skip":
                raise CorpusError(f"{ref.url}: unreadable ({type(exc).__name__}: {exc})") from exc
            unreadable.append((ref.url, f"{type(exc).__name__}: {exc}"))
    return Plan(spec=spec, shards=shards, unreadable=unreadable, fingerprint=fingerprint(files))


def _check_columns(spec: CorpusSpec, available: list[str], url: str) -> None:
    missing = [c for c in spec.mapping.columns() if c not in available]
    if missing:
        raise CorpusError(
            f"{url}: mapped column(s) {missing} not found (corpus {spec.name}); available columns: {available}"
        )


def _plan_file(spec: CorpusSpec, ref: FileRef, shard_rows: int) -> list[Shard]:
    if spec.format == "parquet":
        with ref.open(compression=None) as fh:
            meta = pq.ParquetFile(fh).metadata
            schema = meta.schema.to_arrow_schema()
        _check_columns(spec, schema.names, ref.url)
        text_type = schema.field(spec.mapping.text).type
        if not (pa.types.is_string(text_type) or pa.types.is_large_string(text_type) or pa.types.is_binary(text_type)
                or pa.types.is_large_binary(text_type)):
            raise CorpusError(f"{ref.url}: column {spec.mapping.text!r} has type {text_type}; expected a string column")
        out, group, rows, first = [], [], 0, 0
        for i in range(meta.num_row_groups):
            n = meta.row_group(i).num_rows
            group.append(i)
            rows += n
            if rows >= shard_rows or i == meta.num_row_groups - 1:
                out.append(Shard(spec.name, ref, "parquet", tuple(group), first, rows))
                first += rows
                group, rows = [], 0
        return out or [Shard(spec.name, ref, "parquet", (), 0, 0)]
    if spec.format in ("csv", "tsv"):
        if spec.header:
            with ref.open() as fh:
                first_line = fh.readline().decode("utf-8", errors="replace").rstrip("\r\n")
            names = next(csv.reader([first_line])) if spec.format == "csv" else first_line.split("\t")
            _check_columns(spec, names, ref.url)
        else:
            _check_columns(spec, list(spec.column_names), ref.url)
    elif spec.format == "jsonl":
        with ref.open() as fh:
            for line in fh:
                if line.strip():
                    try:
                        first = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise CorpusError(f"{ref.url}: first record is not JSON ({exc})") from exc
                    if isinstance(first, dict):
                        _check_columns(spec, list(first), ref.url)
                    break
    return [Shard(spec.name, ref, spec.format)]


def read_shard(shard: Shard, spec: CorpusSpec) -> Iterator[pa.RecordBatch]:
    """Yield the shard's rows in ITEM_SCHEMA, at most BATCH_ROWS per batch."""
    readers = {"parquet": _read_parquet, "csv": _read_delimited, "tsv": _read_delimited, "jsonl": _read_jsonl, "webdataset": _read_webdataset}
    yield from readers[shard.format](shard, spec)


def _to_items(table: pa.Table, spec: CorpusSpec, url: str, first_row: int) -> pa.RecordBatch:
    """Map source columns to ITEM_SCHEMA and mark unusable rows; vectorised over the batch."""
    m = spec.mapping
    n = table.num_rows
    text, reason = _as_text(table.column(m.text))
    if m.context:
        ctx = [(_as_text(table.column(c))[0]) for c in m.context]
        context = pc.binary_join_element_wise(*ctx, "\n", null_handling="skip")
    else:
        context = pa.nulls(n, pa.string())
    if m.id:
        record_id = pc.cast(table.column(m.id), pa.string())
    else:
        record_id = pc.binary_join_element_wise(url, pc.cast(pa.array(range(first_row, first_row + n)), pa.string()), "#")
    url_col = _as_text(table.column(m.url))[0] if m.url else pa.nulls(n, pa.string())
    group = pc.cast(table.column(m.group), pa.string()) if m.group else pa.nulls(n, pa.string())
    stripped = pc.utf8_trim_whitespace(text)
    reason = pc.if_else(pc.and_(pc.is_valid(reason), pa.scalar(True)), reason, pc.if_else(
        pc.is_null(text), pa.scalar("null_text"), pc.if_else(
            pc.equal(pc.utf8_length(stripped), 0), pa.scalar("empty_text"), pc.if_else(
                pc.greater(pc.binary_length(text), MAX_TEXT_BYTES), pa.scalar("text_too_long"), pa.scalar(None, pa.string())))))
    return pa.RecordBatch.from_arrays(
        [_flat(record_id), _flat(text), _flat(context), _flat(url_col), _flat(group), _flat(reason)], schema=ITEM_SCHEMA
    )


def _flat(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _as_text(col: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """(string array, skip reason array): binary columns are decoded, invalid UTF-8 rows nulled."""
    col = _flat(col)
    n = len(col)
    none = pa.nulls(n, pa.string())
    if pa.types.is_string(col.type):
        return col, none
    if pa.types.is_large_string(col.type):
        return col.cast(pa.string()), none
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        try:
            return col.cast(pa.string()), none
        except pa.ArrowInvalid:
            values, reasons = [], []
            for raw in col.to_pylist():
                try:
                    values.append(None if raw is None else raw.decode("utf-8"))
                    reasons.append(None)
                except UnicodeDecodeError:
                    values.append(None)
                    reasons.append("invalid_utf8")
            return pa.array(values, pa.string()), pa.array(reasons, pa.string())
    if pa.types.is_null(col.type):
        return none, none
    # Numbers, lists, structs where text was expected: counted, never coerced into fake captions.
    return none, pc.if_else(pc.is_valid(col), pa.scalar("non_string_text"), pa.scalar(None, pa.string()))


def _read_parquet(shard: Shard, spec: CorpusSpec) -> Iterator[pa.RecordBatch]:
    with shard.file.open(compression=None) as fh:
        pf = pq.ParquetFile(fh)
        row = shard.first_row
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=list(shard.row_groups), columns=spec.mapping.columns()):
            yield _to_items(pa.Table.from_batches([batch]), spec, shard.file.url, row)
            row += batch.num_rows


def _read_delimited(shard: Shard, spec: CorpusSpec) -> Iterator[pa.RecordBatch]:
    malformed: list[int] = []

    def on_invalid(row: pcsv.InvalidRow) -> str:
        malformed.append(row.number or -1)
        return "skip"

    tsv = spec.format == "tsv"
    read = pcsv.ReadOptions(block_size=16 << 20, column_names=None if spec.header else list(spec.column_names))
    parse = pcsv.ParseOptions(delimiter="\t" if tsv else ",", quote_char=False if tsv else '"', newlines_in_values=not tsv,
                              invalid_row_handler=on_invalid)
    text_cols = [spec.mapping.text, *spec.mapping.context, *( [spec.mapping.url] if spec.mapping.url else [])]
    convert = pcsv.ConvertOptions(include_columns=spec.mapping.columns(), column_types={c: pa.binary() for c in text_cols},
                                  strings_can_be_null=False, quoted_strings_can_be_null=False)
    row = 0
    with shard.file.open() as fh:
        reader = pcsv.open_csv(fh, read_options=read, parse_options=parse, convert_options=convert)
        for batch in reader:
            yield _to_items(pa.Table.from_batches([batch]), spec, shard.file.url, row)
            row += batch.num_rows
    if malformed:
        yield _skipped_rows(len(malformed), "malformed_row", shard.file.url, "malformed")


def _skipped_rows(n: int, reason: str, url: str, tag: str) -> pa.RecordBatch:
    ids = pa.array([f"{url}#{tag}{i}" for i in range(n)], pa.string())
    nulls = pa.nulls(n, pa.string())
    return pa.RecordBatch.from_arrays([ids, nulls, nulls, nulls, nulls, pa.array([reason] * n, pa.string())], schema=ITEM_SCHEMA)


def _rows_to_items(rows: list[dict], spec: CorpusSpec, url: str, first_row: int, reasons: list[str | None]) -> pa.RecordBatch:
    """Python rows (JSONL, WebDataset) → ITEM_SCHEMA, typing each value by hand so one bad value
    marks one row instead of failing the batch."""
    m = spec.mapping

    def text_of(value):
        return value if isinstance(value, str) else None

    cols = {c: [r.get(c) for r in rows] for c in m.columns()}
    for i, r in enumerate(rows):
        if reasons[i] is None:
            value = r.get(m.text, _MISSING)
            if value is _MISSING:
                reasons[i] = "missing_field"
            elif value is not None and not isinstance(value, str):
                reasons[i] = "non_string_text"
    table = pa.table({
        m.text: pa.array([text_of(v) for v in cols[m.text]], pa.string()),
        **{c: pa.array([text_of(v) for v in cols[c]], pa.string()) for c in m.context if c != m.text},
        **({m.url: pa.array([text_of(v) for v in cols[m.url]], pa.string())} if m.url else {}),
        **({m.id: pa.array([None if v is None else str(v) for v in cols[m.id]], pa.string())} if m.id else {}),
        **({m.group: pa.array([None if v is None else str(v) for v in cols[m.group]], pa.string())} if m.group else {}),
    })
    batch = _to_items(table, spec, url, first_row)
    explicit = pa.array(reasons, pa.string())
    return batch.set_column(5, "skip_reason", pc.coalesce(explicit, batch.column(5)))


_MISSING = object()


def _read_jsonl(shard: Shard, spec: CorpusSpec) -> Iterator[pa.RecordBatch]:
    rows: list[dict] = []
    reasons: list[str | None] = []
    row = 0
    with shard.file.open() as fh:
        for raw in fh:
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
                rows.append(value if isinstance(value, dict) else {})
                reasons.append(None if isinstance(value, dict) else "not_an_object")
            except (json.JSONDecodeError, UnicodeDecodeError):
                rows.append({})
                reasons.append("invalid_json")
            if len(rows) == BATCH_ROWS:
                yield _rows_to_items(rows, spec, shard.file.url, row, reasons)
                row += len(rows)
                rows, reasons = [], []
    if rows:
        yield _rows_to_items(rows, spec, shard.file.url, row, reasons)


def _read_webdataset(shard: Shard, spec: CorpusSpec) -> Iterator[pa.RecordBatch]:
    """img2dataset / WebDataset shards: members grouped by key; ``.txt`` is the caption, ``.json``
    the metadata. The mapping's text column ``txt`` means the .txt member; any other name is a key
    of the .json member (so ``caption``, ``url``, ``key`` work as img2dataset writes them)."""
    rows: list[dict] = []
    reasons: list[str | None] = []
    row = 0
    current_key, sample = None, {}

    def flush():
        nonlocal sample
        if current_key is not None:
            rows.append(sample)
            reasons.append(sample.pop("__reason__", None))
        sample = {}

    with shard.file.open(compression=None) as fh, tarfile.open(fileobj=fh, mode="r|*") as tar:
        for member in tar:
            if not member.isfile():
                continue
            name = member.name.rsplit("/", 1)[-1]
            key, _, ext = name.partition(".")
            if key != current_key:
                flush()
                current_key = key
                if len(rows) >= BATCH_ROWS:
                    yield _rows_to_items(rows, spec, shard.file.url, row, reasons)
                    row += len(rows)
                    rows, reasons = [], []
            payload = tar.extractfile(member).read()
            if ext == "txt":
                try:
                    sample["txt"] = payload.decode("utf-8")
                except UnicodeDecodeError:
                    sample["__reason__"] = "invalid_utf8"
            elif ext == "json":
                try:
                    meta = json.loads(payload)
                    sample.update({k: v for k, v in meta.items() if k != "txt"} if isinstance(meta, dict) else {})
                except (json.JSONDecodeError, UnicodeDecodeError):
                    sample["__reason__"] = "invalid_json"
        flush()
    if rows:
        yield _rows_to_items(rows, spec, shard.file.url, row, reasons)


def spec_from_preset(name: str, preset: str, paths: list[str]) -> CorpusSpec:
    if preset not in PRESETS:
        raise ValueError(f"unknown corpus preset {preset!r}; known: {sorted(PRESETS)}")
    p = PRESETS[preset]
    return CorpusSpec(name=name, paths=tuple(paths), format=p.format, mapping=p.mapping, header=p.header, column_names=p.column_names)
