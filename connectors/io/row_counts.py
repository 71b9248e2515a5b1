"""Expected rows of a file before it is read, for progress people can trust.

Parquet footers give exact counts (the planners read them). For the other formats the count
comes from the bytes: newlines of a CSV/TSV or JSON Lines file (a file up to ``exact_bytes`` is
counted through; a larger or compressed one from its first ``sample_bytes``, scaled by the
compressed or plain size), and samples of a WebDataset tar (runs of members sharing a key, read
from the tar headers without reading the payloads). Every count here is an *expectation*: quoted newlines,
blank or malformed lines make rows differ from lines, so a job shows it as ``≈`` and replaces it
with the real count when the file is done.
"""
from __future__ import annotations

import tarfile
from dataclasses import dataclass

import fsspec
from fsspec.utils import infer_compression

from connectors.io.fs import FileRef, open_input

EXACT_BYTES = 256 << 20
SAMPLE_BYTES = 8 << 20
CHUNK = 4 << 20


@dataclass(frozen=True)
class RowCount:
    rows: int
    sampled: bool  # True: scaled from the file's first bytes or members, not counted through


def count_rows(ref: FileRef, fmt: str, header: bool = True, *,
               exact_bytes: int = EXACT_BYTES, sample_bytes: int = SAMPLE_BYTES) -> RowCount | None:
    """Expected data rows of one input file; None for formats whose rows are not lines or samples, and
    for a file that cannot be counted: an expectation is advice, and bad bytes are the reader's to name."""
    try:
        return _count(ref, fmt, header, exact_bytes, sample_bytes)
    except Exception:  # noqa: BLE001 -- unreadable, cut short, not gzip...: the scan reports it properly
        return None


def count_files(refs: list[FileRef], fmt: str, header: bool = True, max_files: int = 32) -> dict[str, RowCount | None]:
    """Expected rows of many files, reading at most ``max_files`` of them (spread over the list); the
    others are scaled from the counted files' rows per byte, so planning stays cheap on 10,000 files."""
    if len(refs) <= max_files:
        return {r.url: count_rows(r, fmt, header) for r in refs}
    step = len(refs) / max_files
    picked = {refs[int(i * step)].url for i in range(max_files)}
    out = {r.url: count_rows(r, fmt, header) for r in refs if r.url in picked}
    counted = [(c.rows, r.size) for r in refs if (c := out.get(r.url)) is not None and r.size]
    per_byte = sum(n for n, _ in counted) / sum(s for _, s in counted) if counted else None
    for r in refs:
        if r.url not in picked:
            out[r.url] = RowCount(round(per_byte * r.size), True) if per_byte is not None else None
    return out


def _count(ref: FileRef, fmt: str, header: bool, exact_bytes: int, sample_bytes: int) -> RowCount | None:
    if fmt in ("csv", "tsv", "jsonl"):
        lines = _lines(ref, exact_bytes, sample_bytes)
        if lines is None:
            return None
        rows, sampled = lines
        return RowCount(max(rows - (1 if fmt != "jsonl" and header else 0), 0), sampled)
    if fmt == "webdataset":
        return _tar_samples(ref, exact_bytes, sample_bytes)
    return None


def _lines(ref: FileRef, exact_bytes: int, sample_bytes: int) -> tuple[int, bool] | None:
    """Lines of the file (a last line without a newline counts), counted through or scaled from a sample."""
    compressed = infer_compression(ref.url) is not None
    budget = None if not compressed and ref.size <= exact_bytes else sample_bytes
    raw = fsspec.open(ref.url, "rb", compression=None).open()
    try:
        stream = open_input(ref.url) if compressed else raw
        read, n, last = 0, 0, b"\n"
        while budget is None or read < budget:
            chunk = stream.read(CHUNK if budget is None else min(CHUNK, budget - read))
            if not chunk:  # the whole file: counted through
                return n + (last != b"\n"), False
            read += len(chunk)
            n += chunk.count(b"\n")
            last = chunk[-1:]
        consumed = _compressed_offset(stream) if compressed else raw.tell()
        if not consumed or not ref.size:
            return None
        return round(n * ref.size / consumed), True
    finally:
        if compressed:
            stream.close()
        raw.close()


def _compressed_offset(stream) -> int | None:
    """How many compressed bytes a decompressing stream has taken from its file so far."""
    source = getattr(stream, "fileobj", None) or getattr(stream, "_fp", None)
    try:
        return source.tell() if source is not None else None
    except (OSError, ValueError):
        return None


def _tar_samples(ref: FileRef, exact_bytes: int, sample_bytes: int) -> RowCount | None:
    """Samples of a WebDataset tar (runs of file members sharing a key, as the reader groups them),
    from its headers; a tar larger than ``exact_bytes`` is read ``sample_bytes`` in and scaled by its size."""
    samples, current, sampled = 0, None, False
    with fsspec.open(ref.url, "rb", compression=None) as fh, tarfile.open(fileobj=fh, mode="r:") as tar:
        while (member := tar.next()) is not None:
            if member.isfile():
                key = member.name.rsplit("/", 1)[-1].partition(".")[0]
                samples += key != current
                current = key
            if ref.size > exact_bytes and tar.offset >= sample_bytes:
                sampled = True
                break
        offset = tar.offset
    return RowCount(round(samples * ref.size / max(offset, 1)), True) if sampled else RowCount(samples, False)
