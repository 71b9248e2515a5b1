"""File formats of benchmarks: each reader turns one file into (column names, records).

CSV/TSV (delimiter from the header line), JSON Lines or a JSON array, Parquet, and Hugging Face
datasets saved on disk (read with pyarrow, no ``datasets`` needed). Two releases are not records
at all and get their own reader, used by their presets: HellaSwag as 6 lines per item
(``activity: ctx``, gold index, 4 endings) and the official DROP JSON
(``{section_id: {passage, qa_pairs}}``).

A record the reader cannot produce (a line that is not JSON, a CSV row of the wrong width, bytes
not in the encoding) is yielded as a ``BadRecord`` in its place, so the caller applies its policy
(raise, or skip and count) and later rows keep their numbers. Errors about the whole file (cut
short, not JSON at all, no header) raise ``BenchmarkError`` naming the file.
"""
from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from connectors.benchmarks.schema import BATCH_ROWS, BadRecord, BenchmarkError
from connectors.io.fs import open_input
from connectors.io.utf8 import valid_strings

Record = dict[str, Any]
Records = Iterator["Record | BadRecord"]
RecordReader = Callable[[str, str], tuple[list[str], Records]]
_UNDECODED = re.compile("[\udc80-\udcff]")  # bytes the decoder could not read, kept by surrogateescape


def guess_format(path: str) -> str:
    """Format from the extension (compression suffixes ignored); a folder is an HF dataset."""
    lower = path.lower().removesuffix(".gz").removesuffix(".bz2")
    for suffixes, fmt in (((".jsonl", ".ndjson"), "jsonl"), ((".json",), "json"),
                          ((".csv", ".tsv"), "csv"), ((".parquet", ".pq"), "parquet"),
                          ((".arrow",), "hf"), ((".txt",), "text")):
        if lower.endswith(suffixes):
            return fmt
    if fsspec.core.url_to_fs(path)[0].isdir(path):
        return "hf"
    raise BenchmarkError(f"{path}: cannot tell the format from the extension; pass format=")


def open_text(path: str, encoding: str) -> io.TextIOWrapper:
    """A text handle on a local or remote file, decompressing .gz/.bz2 by extension.

    Bytes that are not in ``encoding`` are kept as lone surrogates (``surrogateescape``), so a
    reader can name the row that holds them instead of failing the file; a UTF-8 BOM is dropped.
    """
    handle = open_input(path)
    if encoding.lower().replace("-", "").replace("_", "") == "utf8":
        encoding = "utf-8-sig"
    # typeshed's _WrappedBuffer protocol asks for a ``name`` that BufferedIOBase does not declare (TextIOWrapper runs without it)
    return io.TextIOWrapper(handle, encoding=encoding, errors="surrogateescape", newline="")  # type: ignore[arg-type]


def undecodable(text: str) -> bool:
    """True when ``text`` holds bytes the decoder could not read (see ``open_text``)."""
    return _UNDECODED.search(text) is not None


def _not_encoded(path: str, where: str, encoding: str) -> BenchmarkError:
    return BenchmarkError(f"{path}: {where}: not {encoding}; pass encoding=", "invalid_utf8")


def csv_records(path: str, encoding: str, headerless: tuple[str, ...] = ()) -> tuple[list[str], Records]:
    """CSV/TSV rows as dicts; the delimiter (``,``, ``;`` or tab) is taken from the header line.

    ``headerless`` gives column names for files without a header (original MMLU); it is used only
    when the first line has exactly that many fields and none of the names. Rows are numbered from
    0 after the header.
    """
    handle = open_text(path, encoding)
    first = handle.readline()
    if undecodable(first):
        handle.close()
        raise BenchmarkError(f"{path}: header line: not {encoding}; pass encoding=")
    delimiter = max((",", ";", "\t"), key=first.count)
    header = next(csv.reader([first], delimiter=delimiter), [])
    no_header = bool(headerless) and len(header) == len(headerless) and not set(header) & set(headerless)
    names = list(headerless) if no_header else header

    def rows() -> Records:
        with handle:
            source: Iterable[str]
            if no_header:
                source, offset, lines = itertools.chain([first], handle), 0, 0
            else:
                source, offset, lines = handle, len(first.encode(encoding, "surrogateescape")), 1
            yield from _CsvRows(path, encoding, delimiter, names, source, offset, lines).records()

    return names, rows()


class _CsvRows:
    """Python's csv over a line source that remembers each record's lines, byte range and line numbers.

    Why: a quote that never closes makes the csv module read to the end of the file as one field,
    kept as a row when the width happens to fit. Such a record (the input ends inside its quote, or
    csv gives up inside it, e.g. at its field size limit) becomes one ``malformed_row`` for its first
    line, and the lines after it are read again as rows. A record spanning lines that does close but
    has the wrong width is not guessed at: a ``BadRecord`` with its byte range and lines (unread).
    """

    def __init__(self, path: str, encoding: str, delimiter: str, names: list[str], source, offset: int, line: int):
        self.path, self.encoding, self.names = path, encoding, names
        self.source, self.offset, self.line = iter(source), offset, line
        self.pending: deque[str] = deque()
        self.consumed: list[str] = []
        self.exhausted = False
        self.reader = csv.reader(self, delimiter=delimiter)

    def __iter__(self) -> _CsvRows:
        return self

    def __next__(self) -> str:
        """The csv module's line source: lines pushed back first; may resume after the end once refilled."""
        line: str | None
        if self.pending:
            line = self.pending.popleft()
        else:
            line = next(self.source, None)
            if line is None:
                self.exhausted = True
                raise StopIteration
        self.consumed.append(line)
        return line

    def records(self) -> Records:
        number = 0
        while True:
            self.exhausted, problem = False, None
            try:
                values = next(self.reader)
            except StopIteration:
                return
            except csv.Error as exc:
                values, problem = None, str(exc)
            lines, self.consumed = self.consumed, []
            start, first_line = self.offset, self.line + 1
            self.offset += sum(len(line.encode(self.encoding, "surrogateescape")) for line in lines)
            self.line += len(lines)
            if values == []:
                continue  # a blank line is no row
            where = f"row {number} (line {first_line})"
            if self.exhausted or (problem and len(lines) > 1):
                # the input ended inside a quote (or csv gave up inside one): whatever its width, the
                # record is that quote's line, and the lines it swallowed are read again as rows
                self.pending.extendleft(reversed(lines[1:]))
                self.offset = start + len(lines[0].encode(self.encoding, "surrogateescape"))
                self.line = first_line
                yield BadRecord(BenchmarkError(f"{self.path}: {where}: a quote that never closes; the lines after it "
                                               "are read again as rows", "malformed_row"))
            elif values is not None and len(values) == len(self.names):
                bad = any(undecodable(v) for v in values)
                yield BadRecord(_not_encoded(self.path, where, self.encoding)) if bad else dict(zip(self.names, values))
            elif len(lines) > 1:
                yield BadRecord(BenchmarkError(
                    f"{self.path}: {where}: a quoted value spans lines {first_line}-{first_line + len(lines) - 1} on a "
                    f"row of {len(values or [])} fields, header has {len(self.names)}", "malformed_row"),
                    unread=(start, self.offset, len(lines)))
            else:
                found = problem or f"{len(values or [])} fields, header has {len(self.names)}"
                yield BadRecord(BenchmarkError(f"{self.path}: {where}: {found}", "malformed_row"))
            number += 1


def _parse_json(text: str, path: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        cut = "; the file looks cut short" if exc.pos >= len(text.rstrip()) else ""
        raise BenchmarkError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}{cut})") from exc


def load_json(path: str, encoding: str) -> Any:
    """A whole JSON document; one that does not parse (cut short, say) names the file and position."""
    with open_text(path, encoding) as handle:
        return _parse_json(handle.read(), path)


def json_records(path: str, encoding: str) -> tuple[list[str], Records]:
    """JSON Lines, or a JSON array of objects (SVAMP, TruthfulQA-multi); columns from the first record."""
    with open_text(path, encoding) as handle:
        head = handle.read(1 << 16).lstrip()
    if head.startswith("["):
        data = load_json(path, encoding)
        return _columns_of(data, path), iter(data)
    return _lines_records(path, encoding)


def _lines_records(path: str, encoding: str) -> tuple[list[str], Records]:
    def lines() -> Records:
        with open_text(path, encoding) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                if undecodable(line):
                    yield BadRecord(_not_encoded(path, f"line {number}", encoding))
                    continue
                try:
                    yield json.loads(line)
                except (ValueError, RecursionError) as exc:  # JSONDecodeError, the int-digits limit, nesting too deep
                    why = f"{exc}" if isinstance(exc, ValueError) else "nested too deep"
                    yield BadRecord(BenchmarkError(f"{path}: line {number}: invalid JSON ({why})", "invalid_json"))

    records = lines()
    head: list[Record | BadRecord] = []
    for record in records:  # columns come from the first record that is one
        head.append(record)
        if not isinstance(record, BadRecord):
            break
    first = next((r for r in head if not isinstance(r, BadRecord)), None)
    if first is None:
        if head:  # no line is a record: the file is not JSON Lines (or not in this encoding)
            raise BenchmarkError(f"{cast(BadRecord, head[0]).error} (and none of the {len(head) - 1} lines after it is a record)")
        return [], iter(())
    return _columns_of([first], path), itertools.chain(head, records)


def _columns_of(data: object, path: str) -> list[str]:
    if not isinstance(data, list) or (data and not isinstance(data[0], dict)):
        raise BenchmarkError(f"{path}: expected JSON objects, one per item")
    return list(data[0]) if data else []


def arrow_rows(batch: pa.RecordBatch | pa.Table, path: str, first_row: int) -> Iterator[Record | BadRecord]:
    """The rows of a batch as dicts; a row with a string that is not UTF-8 is a ``BadRecord``."""
    columns, bad = {}, None
    for name in batch.column_names:
        column = batch.column(name)
        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column, mask = valid_strings(column)
            if mask is not None:
                bad = mask if bad is None else bad | mask
        columns[name] = column
    rows = pa.table(columns).to_pylist() if bad is not None else batch.to_pylist()
    for i, row in enumerate(rows):
        if bad is not None and bad[i]:
            yield BadRecord(BenchmarkError(f"{path}: row {first_row + i}: a string that is not UTF-8", "invalid_utf8"))
        else:
            yield row


def parquet_records(path: str) -> tuple[list[str], Records]:
    """Parquet rows as dicts, read batch by batch; columns from the file schema."""
    handle = open_input(path, compression=None)
    parquet = pq.ParquetFile(handle)

    def rows() -> Records:
        with handle:
            row = 0
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
                yield from arrow_rows(batch, path, row)
                row += batch.num_rows

    return parquet.schema_arrow.names, rows()


def hf_records(path: str, split: str | None) -> tuple[list[str], Records]:
    """A ``datasets`` ``save_to_disk`` folder (or one cached ``.arrow`` file), read with pyarrow.

    A ``Dataset`` folder holds ``state.json`` listing Arrow IPC stream files; a ``DatasetDict``
    folder holds ``dataset_dict.json`` and one such folder per split, chosen with ``split``.
    """
    fs, root = fsspec.core.url_to_fs(path)
    if root.endswith(".arrow"):
        files = [root]
    else:
        if fs.exists(f"{root}/dataset_dict.json"):
            splits = json.loads(fs.cat(f"{root}/dataset_dict.json"))["splits"]
            if split not in splits:
                raise BenchmarkError(f"{path}: a DatasetDict; pass split= one of {splits}")
            root = f"{root}/{split}"
        if not fs.exists(f"{root}/state.json"):
            raise BenchmarkError(f"{path}: no state.json; not a save_to_disk folder")
        state = json.loads(fs.cat(f"{root}/state.json"))
        files = [f"{root}/{entry['filename']}" for entry in state["_data_files"]]
    tables = []
    for name in files:
        with fs.open(name, "rb") as handle:
            data = handle.read()
        try:
            tables.append(pa.ipc.open_stream(data).read_all())
        except pa.ArrowInvalid:
            tables.append(pa.ipc.open_file(data).read_all())
    table = pa.concat_tables(tables) if tables else pa.table({})
    return table.schema.names, arrow_rows(table, path, 0)


def hellaswag_text_records(path: str, encoding: str) -> tuple[list[str], Records]:
    """The 6-lines-per-item text release: ``activity: ctx``, gold index (0-3), 4 endings."""
    with open_text(path, encoding) as handle:
        lines = handle.read().splitlines()
    if len(lines) % 6:
        raise BenchmarkError(f"{path}: {len(lines)} lines, not a multiple of 6 (6 lines per item)")

    def records() -> Records:
        for start in range(0, len(lines), 6):
            head, label, *endings = lines[start:start + 6]
            activity, sep, ctx = head.partition(": ")
            if any(undecodable(line) for line in lines[start:start + 6]):
                yield BadRecord(_not_encoded(path, f"lines {start + 1}-{start + 6}", encoding))
            elif not sep or not label.strip().isdigit():
                yield BadRecord(BenchmarkError(
                    f"{path}: line {start + 1}: expected 'activity: context' then a gold index, "
                    f"got {head!r:.60} / {label!r:.20}", "invalid_field"))
            else:
                yield {"ind": start // 6, "activity_label": activity, "ctx": ctx,
                       "label": int(label), "endings": endings}

    return ["ind", "activity_label", "ctx", "label", "endings"], records()


def drop_official(path: str, encoding: str) -> dict | None:
    """The parsed file when it is DROP's official JSON (``{section_id: {passage, qa_pairs}}``), else
    ``None`` (records: JSON Lines or an array, the Hugging Face layout).

    The one reader of that release, for every job: it parses the document instead of sniffing its
    first line, so the official JSON written on one line reads the same as pretty-printed; a
    document that does not parse (cut short) is an error naming the file.
    """
    with open_text(path, encoding) as handle:
        text = handle.read()
    if not text.lstrip().startswith("{") or _is_json_lines(text):
        return None  # an array, or JSON Lines: records
    data = _parse_json(text, path)
    if isinstance(data, dict) and data and all(isinstance(v, dict) and "qa_pairs" in v for v in data.values()):
        return data
    return None


def _is_json_lines(text: str, probe: int = 5) -> bool:
    """True when the text has more than one non-empty line and one of its first lines is an object
    on its own (no line of a pretty-printed document is; one written on one line is one line)."""
    lines: list[str] = []
    start = 0
    while len(lines) <= probe and start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if text[start:end].strip():
            lines.append(text[start:end])
        start = end + 1
    if len(lines) < 2:
        return False
    for line in lines[:probe]:
        try:
            if isinstance(json.loads(line), dict):
                return True
        except (ValueError, RecursionError):
            continue
    return False


def drop_json_records(path: str, encoding: str) -> tuple[list[str], Records]:
    """The official DROP JSON: one record per QA pair, carrying its section's passage."""
    data = drop_official(path, encoding)
    if data is None:
        return json_records(path, encoding)

    def records() -> Records:
        for section, body in data.items():
            if "passage" not in body or not isinstance(body["qa_pairs"], list):
                yield BadRecord(BenchmarkError(f"{path}: section {section!r}: expected passage and a list qa_pairs",
                                               "invalid_field"))
                continue
            for qa in body["qa_pairs"]:
                yield {"section_id": section, "passage": body["passage"], **qa} if isinstance(qa, dict) else qa

    return ["section_id", "passage", "question", "answer", "query_id"], records()
