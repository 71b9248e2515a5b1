"""Reading caption shards into the item schema, one format per reader, bad rows marked not lost."""
from __future__ import annotations

import json
import tarfile
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from connectors.captions import (
    BATCH_ROWS,
    ITEM_SCHEMA,
    MAX_TEXT_BYTES,
    CorpusSpec,
    Shard,
)


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
