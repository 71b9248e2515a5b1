"""Caption corpora: Parquet, JSONL, CSV/TSV and WebDataset tar shards, mapped to one item schema.

A corpus is split into *shards* (``connectors.io.shards.Shard``: a Parquet row-group range, or one
whole CSV/JSONL/tar file) whose ids derive from the corpus, the file's content checksum and the row
groups, never from Ray block indices or file times, so a resumed run recognises the shards it
already finished and reruns a file whose content changed. ``connectors.captions.read.read_shard`` yields Arrow batches in the
item schema; rows that cannot be used are kept with a ``skip_reason`` so they are counted, not lost, and
it fills a ``connectors.io.read_report.ReadReport``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from connectors.captions.presets import EXTENSIONS, CorpusSpec, Format
from connectors.io.delimited import header_names
from connectors.io.fs import FileRef, expand, fingerprint
from connectors.io.lines import bounded_lines
from connectors.io.read_report import InputError, ReadIOError
from connectors.io.shards import Shard, shard_id

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
# A JSON Lines line longer than this is skipped (``text_too_long``) as it is read, never held whole:
# room for a caption at the limit written with escapes, and its other fields.
MAX_LINE_BYTES = 4 * MAX_TEXT_BYTES


class CorpusError(InputError):
    """Bad corpus input, with the file (and row/column) in the message."""


def corpus_shard(corpus: str, ref: FileRef, fmt: Format, row_groups: tuple[int, ...] = (), first_row: int = 0,
                 expected_rows: int | None = None) -> Shard:
    """One Parquet row-group range (``first_row``: its first row in the file) or one whole file."""
    return Shard(shard_id(corpus, ref.checksum, ref.url, fmt, row_groups), corpus, ref.url, fmt, row_groups,
                 first_row, expected_rows=expected_rows, size_bytes=ref.size)


@dataclass(frozen=True)
class Plan:
    """The shards of one corpus, plus files that could not even be opened for planning."""

    spec: CorpusSpec
    shards: list[Shard]
    unreadable: list[tuple[str, str]]  # (file url, error)
    fingerprint: str
    files: tuple[FileRef, ...] = ()  # the planned files (the shards' sources), for row counts

    @property
    def expected_rows(self) -> int | None:
        counts = [s.expected_rows for s in self.shards]
        return sum(c for c in counts if c is not None) if all(c is not None for c in counts) else None


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
    whose bytes cannot be read is raised too, or (``on_error="skip"``) listed in ``Plan.unreadable``;
    a failure of the byte source (``ReadIOError``) is always raised: it says nothing about the file.
    """
    files = expand(list(spec.paths), EXTENSIONS[spec.format])
    shards: list[Shard] = []
    unreadable: list[tuple[str, str]] = []
    for ref in files:
        try:
            shards.extend(_plan_file(spec, ref, shard_rows))
        except (CorpusError, ReadIOError):
            raise
        except Exception as exc:  # any format error makes the file unreadable
            if on_error != "skip":
                raise CorpusError(f"{ref.url}: unreadable ({type(exc).__name__}: {exc})") from exc
            unreadable.append((ref.url, f"{type(exc).__name__}: {exc}"))
    bad = {url for url, _ in unreadable}
    return Plan(spec=spec, shards=shards, unreadable=unreadable, fingerprint=fingerprint(files),
                files=tuple(f for f in files if f.url not in bad))


def check_some_rows(plans: list[Plan]) -> None:
    """Refuse, before any run starts, corpora whose every file holds no row (empty, or a header alone):
    a run over them could only stop with "no usable rows" after making its run directory."""
    shards = [s for p in plans for s in p.shards]
    if shards and all(s.expected_rows == 0 for s in shards) and not any(p.unreadable for p in plans):
        files = list(dict.fromkeys(s.source for s in shards))
        raise CorpusError(f"no rows to audit: {', '.join(files[:3])}{' …' if len(files) > 3 else ''} "
                          f"{'holds' if len(files) == 1 else 'hold'} a header or nothing, and no row")


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
                out.append(corpus_shard(spec.name, ref, "parquet", tuple(group), first, rows))
                first += rows
                group, rows = [], 0
        return out or [corpus_shard(spec.name, ref, "parquet", (), 0, 0)]
    if spec.format in ("csv", "tsv"):
        if spec.header:
            with ref.open() as fh:
                first_line = fh.readline()
                rows = _any_rows(fh)
            if not first_line.strip():
                raise CorpusError(f"{ref.url}: the file is empty (no header line naming the columns; corpus {spec.name})")
            tsv = spec.format == "tsv"
            _check_columns(spec, header_names(first_line, "\t" if tsv else ",", quoted=not tsv), ref.url)
        else:
            _check_columns(spec, list(spec.column_names), ref.url)
            with ref.open() as fh:
                rows = _any_rows(fh)
        if not rows:
            return [corpus_shard(spec.name, ref, spec.format, expected_rows=0)]
    elif spec.format == "jsonl":
        first_object = _first_object(ref)
        if first_object is None:
            return [corpus_shard(spec.name, ref, spec.format, expected_rows=0)]
        _check_columns(spec, list(first_object), ref.url)
    return [corpus_shard(spec.name, ref, spec.format)]


_LOOK_AHEAD = 1 << 16  # bytes read past a header to tell "no rows at all" (a blank run this long is no rows)


def _any_rows(fh) -> bool:
    """Whether anything but blank lines follows; a file that cannot be read this far is left to the scan,
    which counts and names its failure as it always has (so: yes)."""
    try:
        return bool(fh.read(_LOOK_AHEAD).strip())
    except Exception:  # noqa: BLE001 -- a damaged archive is the scan's to report, not the planner's
        return True


def _first_object(ref: FileRef, lines: int = 1000) -> dict | None:
    """The first JSON object among the first ``lines`` non-empty lines, whose keys name the columns.

    Bad lines before it are rows the reader counts (``invalid_json`` …), not a reason to refuse the
    file; a file with no object among them is an error. An empty file has no columns to check.
    """
    seen = 0
    with ref.open() as fh:
        for line in bounded_lines(fh, MAX_LINE_BYTES):
            if line is not None and not line.strip():
                continue
            seen += 1
            try:
                value = None if line is None else json.loads(line)
            except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, int digits, nesting
                value = None
            if isinstance(value, dict):
                return value
            if seen == lines:
                break
    if seen:
        raise ValueError(f"none of the first {seen} non-empty lines is a JSON object")
    return None
