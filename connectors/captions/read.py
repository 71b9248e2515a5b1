"""Reading caption shards into the item schema, one format per reader, bad rows counted not lost.

Every reader isolates faults to the row: a bad value is a row kept with its ``skip_reason`` (see
``connectors.io.read_report.SKIP_REASONS``), a CSV span the parser gave up on is reported as unread
(``connectors.io.delimited``), and each read fills a ``ReadReport``. Bytes broken as a whole (a tar cut
short or damaged, a compressed stream cut short, a corrupt Parquet page, fewer Parquet rows than its
footer promises) make the shard unreadable: a ``CorpusError`` naming the file and what was cut,
never a short read that looks complete. Failures of the byte source itself are ``ReadIOError``.
"""
from __future__ import annotations

import json
import tarfile
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from connectors.captions.corpus import (
    BATCH_ROWS,
    ITEM_SCHEMA,
    MAX_LINE_BYTES,
    MAX_TEXT_BYTES,
    CorpusError,
)
from connectors.captions.presets import CorpusSpec
from connectors.io.delimited import Dialect, header_names, read_pieces
from connectors.io.fs import open_input
from connectors.io.lines import bounded_lines
from connectors.io.read_report import ReadReport, input_errors
from connectors.io.shards import Shard
from connectors.io.utf8 import encodable, valid_strings


def read_shard(shard: Shard, spec: CorpusSpec, report: ReadReport | None = None,
               with_ids: bool = True) -> Iterator[pa.RecordBatch]:
    """Yield the shard's rows in ITEM_SCHEMA, at most BATCH_ROWS per batch, counting them in ``report``.

    ``with_ids=False``: a corpus without an id column gets null record ids instead of
    ``<file>#<row>`` strings, which cost more than reading the captions (~0.3 µs a row); for a scan
    that writes no per-record output. A mapped id column is read either way: its invalid values mark rows.

    ``report.rows_in`` and ``report.skipped_by_reason`` equal the batches' row count and their
    ``skip_reason`` counts; ``report.unread`` holds what no row came from. Raises ``CorpusError``
    (unreadable shard) or ``ReadIOError`` (transient), both naming the file.
    """
    report = ReadReport(shard.source) if report is None else report
    where = f"row groups {list(shard.row_groups)}" if shard.format == "parquet" else ""
    with input_errors(shard.source, CorpusError, where):
        for batch in _READERS[shard.format](shard, spec, report, with_ids):
            _count(batch, report)
            yield batch


def _count(batch: pa.RecordBatch, report: ReadReport) -> None:
    report.rows_in += batch.num_rows
    reasons = batch.column("skip_reason")
    if reasons.null_count < len(reasons):
        for entry in pc.value_counts(reasons.drop_null()).to_pylist():
            report.skip(entry["values"], entry["counts"])


def _flat(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array; a column of one chunk (every batch a reader yields) is that chunk, not a copy."""
    if isinstance(arr, pa.ChunkedArray):
        return arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()
    return arr


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _as_text(col: pa.Array | pa.ChunkedArray, invalid: np.ndarray) -> pa.Array:
    """A mapped column as ``string``: text validated per row (invalid UTF-8 nulled and marked in
    ``invalid``), numbers (ids, groups) cast, anything else null."""
    col = _flat(col)
    if _is_text(col.type):
        values, bad = valid_strings(col)
        if bad is not None:
            invalid |= bad
        return values
    if pa.types.is_integer(col.type) or pa.types.is_boolean(col.type) or pa.types.is_floating(col.type):
        return pc.cast(col, pa.string())
    return pa.nulls(len(col), pa.string())


def _any_unusable(text: pa.Array) -> bool:
    """Is any caption of a null-free column empty once trimmed, or too long? Cheaply: utf8_is_space
    is trim's own per-character rule (checked on every code point) and stops at the first other
    character, where trimming copies the column."""
    size = pc.binary_length(text)
    return bool(pc.any(pc.or_(pc.equal(size, 0), pc.utf8_is_space(text))).as_py()
                or pc.any(pc.greater(size, MAX_TEXT_BYTES)).as_py())


def _to_items(table: pa.Table, spec: CorpusSpec, url: str, first_row: int, with_ids: bool) -> pa.RecordBatch:
    """Map source columns to ITEM_SCHEMA and mark unusable rows; vectorised over the batch."""
    m = spec.mapping
    n = table.num_rows
    invalid = np.zeros(n, dtype=bool)
    raw_text = _flat(table.column(m.text))
    text = _as_text(raw_text, invalid)
    if m.context:
        ctx = [_as_text(table.column(c), invalid) for c in m.context]
        context = pc.binary_join_element_wise(*ctx, "\n", null_handling="skip")
    else:
        context = pa.nulls(n, pa.string())
    if m.id:
        record_id = _as_text(table.column(m.id), invalid)
    elif not with_ids:
        record_id = pa.nulls(n, pa.string())
    else:
        record_id = pc.binary_join_element_wise(url, pc.cast(pa.array(range(first_row, first_row + n)), pa.string()), "#")
    url_col = _as_text(table.column(m.url), invalid) if m.url else pa.nulls(n, pa.string())
    group = _as_text(table.column(m.group), invalid) if m.group else pa.nulls(n, pa.string())
    none = pa.scalar(None, pa.string())
    if text.null_count or _any_unusable(text):
        reason = pc.if_else(pc.is_null(text), pa.scalar("null_text"), pc.if_else(
            pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(text)), 0), pa.scalar("empty_text"), pc.if_else(
                pc.greater(pc.binary_length(text), MAX_TEXT_BYTES), pa.scalar("text_too_long"), none)))
    else:  # the usual batch: every row usable, and no reasons to build
        reason = pa.nulls(n, pa.string())
    if not (_is_text(raw_text.type) or pa.types.is_null(raw_text.type)):
        # numbers, lists, structs where text was expected: counted, never coerced into fake captions
        reason = pc.if_else(pc.is_valid(raw_text), pa.scalar("non_string_text"), reason)
    if invalid.any():
        reason = pc.if_else(pa.array(invalid), pa.scalar("invalid_utf8"), reason)
    return pa.RecordBatch.from_arrays(
        [_flat(record_id), _flat(text), _flat(context), _flat(url_col), _flat(group), _flat(reason)], schema=ITEM_SCHEMA
    )


def _read_parquet(shard: Shard, spec: CorpusSpec, report: ReadReport, with_ids: bool) -> Iterator[pa.RecordBatch]:
    read = 0
    with open_input(shard.source, compression=None) as fh:
        pf = pq.ParquetFile(fh)
        # one thread: a shard is one worker's unit of work, on one CPU; decoding threads would only contend
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=list(shard.row_groups), columns=spec.mapping.columns(),
                                     use_threads=False):
            yield _to_items(pa.Table.from_batches([batch]), spec, shard.source, shard.start + read, with_ids)
            read += batch.num_rows
    if shard.expected_rows is not None and read != shard.expected_rows:
        raise CorpusError(f"{shard.source} (row groups {list(shard.row_groups)}): read {read} rows, "
                          f"the footer promises {shard.expected_rows}")


def _read_delimited(shard: Shard, spec: CorpusSpec, report: ReadReport, with_ids: bool) -> Iterator[pa.RecordBatch]:
    tsv = spec.format == "tsv"
    # every mapped column as raw bytes: validated per row later, and never a type guessed per piece
    # (an id column that looks numeric in one piece and is not in the next)
    columns = tuple(spec.mapping.columns())
    dialect = Dialect("\t" if tsv else ",", quoted=not tsv, include=columns, column_types=dict.fromkeys(columns, pa.binary()))
    row = malformed = 0
    with open_input(shard.source) as fh:
        if spec.header:
            line = fh.readline()
            names, offset = header_names(line, dialect.delimiter, dialect.quoted), len(line)
        else:
            names, offset = list(spec.column_names), 0
        for piece in read_pieces(fh, names, dialect, report, offset, strip_bom=not spec.header):
            if piece.table is not None and piece.table.num_rows:
                for batch in piece.table.to_batches(max_chunksize=BATCH_ROWS):
                    yield _to_items(pa.Table.from_batches([batch]), spec, shard.source, row, with_ids)
                    row += batch.num_rows
            if piece.malformed:
                yield _skipped_rows(piece.malformed, "malformed_row", shard.source, "malformed", malformed)
                malformed += piece.malformed


def _skipped_rows(n: int, reason: str, url: str, tag: str, first: int = 0) -> pa.RecordBatch:
    ids = pa.array([f"{url}#{tag}{i}" for i in range(first, first + n)], pa.string())
    nulls = pa.nulls(n, pa.string())
    return pa.RecordBatch.from_arrays([ids, nulls, nulls, nulls, nulls, pa.array([reason] * n, pa.string())], schema=ITEM_SCHEMA)


def _rows_to_items(rows: list[dict], spec: CorpusSpec, url: str, first_row: int, reasons: list[str | None],
                   with_ids: bool) -> pa.RecordBatch:
    """Python rows (JSONL, WebDataset) → ITEM_SCHEMA, typing each value by hand so one bad value
    marks one row instead of failing the batch."""
    m = spec.mapping
    for i, r in enumerate(rows):
        if reasons[i] is None:
            value = r.get(m.text, _MISSING)
            if value is _MISSING:
                reasons[i] = "missing_field"
            elif value is not None and not isinstance(value, str):
                reasons[i] = "non_string_text"
            elif not all(encodable(r.get(c)) for c in m.columns()):
                reasons[i] = "invalid_utf8"
        if reasons[i] == "invalid_utf8":
            rows[i] = {}

    def text_of(value):
        return value if isinstance(value, str) else None

    def str_of(value):
        return None if value is None else str(value)

    def column(name: str, convert) -> pa.Array:
        return pa.array([convert(r.get(name)) for r in rows], pa.string())

    table = pa.table({
        m.text: column(m.text, text_of),
        **{c: column(c, text_of) for c in m.context if c != m.text},
        **({m.url: column(m.url, text_of)} if m.url else {}),
        **({m.id: column(m.id, str_of)} if m.id else {}),
        **({m.group: column(m.group, str_of)} if m.group else {}),
    })
    batch = _to_items(table, spec, url, first_row, with_ids)
    explicit = pa.array(reasons, pa.string())
    return batch.set_column(5, "skip_reason", pc.coalesce(explicit, batch.column(5)))


_MISSING = object()


def _json_line(raw: bytes) -> tuple[dict | None, str | None]:
    """One JSON Lines line as (object, None), or (None, the reason its row is skipped).

    Beyond a syntax error, a line nested too deep for the parser (``RecursionError``) or holding an
    integer of more digits than Python converts (a ``ValueError``) is one bad row, never the file's end.
    """
    try:
        value = json.loads(raw)
    except UnicodeDecodeError:
        return None, "invalid_utf8"
    except (ValueError, RecursionError):  # JSONDecodeError, the int-digits limit, nesting too deep
        return None, "invalid_json"
    return (value, None) if isinstance(value, dict) else (None, "not_an_object")


def _read_jsonl(shard: Shard, spec: CorpusSpec, report: ReadReport, with_ids: bool) -> Iterator[pa.RecordBatch]:
    rows: list[dict] = []
    reasons: list[str | None] = []
    row = 0
    with open_input(shard.source) as fh:
        for raw in bounded_lines(fh, MAX_LINE_BYTES):
            if raw is None:  # a line over the limit: skipped as it was read, never held whole
                rows.append({})
                reasons.append("text_too_long")
            elif not raw.strip():
                continue
            else:
                value, reason = _json_line(raw)
                rows.append(value if value is not None else {})  # (object, None) or (None, reason)
                reasons.append(reason)
            if len(rows) == BATCH_ROWS:
                yield _rows_to_items(rows, spec, shard.source, row, reasons, with_ids)
                row += len(rows)
                rows, reasons = [], []
    if rows:
        yield _rows_to_items(rows, spec, shard.source, row, reasons, with_ids)


def _read_webdataset(shard: Shard, spec: CorpusSpec, report: ReadReport, with_ids: bool) -> Iterator[pa.RecordBatch]:
    """img2dataset / WebDataset shards: members grouped by key; ``.txt`` is the caption, ``.json``
    the metadata. The mapping's text column ``txt`` means the .txt member; any other name is a key
    of the .json member (so ``caption``, ``url``, ``key`` work as img2dataset writes them).

    The archive is read by seeking from header to header (image payloads are skipped, not read), and
    must end with the end-of-archive marker: Python's tarfile takes a file cut at a member boundary,
    or a damaged header, for the end of the archive, which would be a short read reported complete.
    """
    url = shard.source
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

    with open_input(shard.source, compression=None) as fh, tarfile.open(fileobj=fh, mode="r:*") as tar:
        for member in tar:
            if not member.isfile():
                continue
            name = member.name.rsplit("/", 1)[-1]
            key, _, ext = name.partition(".")
            if key != current_key:
                flush()
                current_key = key
                if len(rows) >= BATCH_ROWS:
                    yield _rows_to_items(rows, spec, url, row, reasons, with_ids)
                    row += len(rows)
                    rows, reasons = [], []
            if ext not in ("txt", "json"):
                continue
            try:
                member_file = tar.extractfile(member)  # None only for a member that is not a regular file
                payload = member_file.read() if member_file is not None else b""
            except tarfile.ReadError as exc:
                raise CorpusError(f"{url}: tar cut inside member {member.name!r} ({exc})") from exc
            if ext == "txt":
                try:
                    sample["txt"] = payload.decode("utf-8")
                except UnicodeDecodeError:
                    sample["__reason__"] = "invalid_utf8"
            else:
                try:
                    meta = json.loads(payload)
                    sample.update({k: v for k, v in meta.items() if k != "txt"} if isinstance(meta, dict) else {})
                except UnicodeDecodeError:
                    sample["__reason__"] = "invalid_utf8"
                except (ValueError, RecursionError):  # JSONDecodeError, the int-digits limit, nesting too deep
                    sample["__reason__"] = "invalid_json"
        flush()
        _check_end_of_archive(tar, url, row + len(rows))
    if rows:
        yield _rows_to_items(rows, spec, url, row, reasons, with_ids)


def _check_end_of_archive(tar: tarfile.TarFile, url: str, samples: int) -> None:
    """The block after the last member must be the zero block that ends a tar archive."""
    tar.fileobj.seek(tar.offset)
    block = tar.fileobj.read(tarfile.BLOCKSIZE)
    if len(block) < tarfile.BLOCKSIZE:
        raise CorpusError(f"{url}: tar cut short: it ends at byte {tar.offset + len(block)} after {samples} samples, "
                          "without the end-of-archive marker")
    if block.count(0) != tarfile.BLOCKSIZE:
        raise CorpusError(f"{url}: tar damaged: the header at byte {tar.offset} (after {samples} samples) is neither "
                          "a member nor the end of the archive")


_READERS = {"parquet": _read_parquet, "csv": _read_delimited, "tsv": _read_delimited, "jsonl": _read_jsonl,
            "webdataset": _read_webdataset}
