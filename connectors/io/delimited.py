"""CSV/TSV text read in record-aligned pieces, so that a broken row costs that row and never the rest.

Why pieces: Arrow's streaming CSV reader loses its place on a bad row. A quote that never closes
swallows the rest of the file into one invalid row (10,000 good rows after it counted nowhere), a
malformed row holding invalid UTF-8 makes the whole read fail, and a swallowed span larger than
one block stops it. Here the text is cut into pieces of about ``PIECE_BYTES`` at newlines that are
record boundaries (an even number of quote characters before them, which is exact for RFC 4180 CSV;
TSV has no quoting, so every newline is one), and each piece is parsed by Arrow on its own, so the
clean path stays vectorised. What goes wrong in a piece is resolved inside it:

- a row of the wrong width on one line: one ``malformed_row``;
- a quote that never closes (a piece ending with an odd number of quotes, at the end of the file
  or once open for ``MAX_QUOTED_BYTES``): the quote's line is one ``malformed_row`` and the lines
  after it are parsed as rows (the reader resynchronises), whatever width the swallowed row had;
- a row spanning lines whose quote does close but whose width is wrong (a stray quote closed by a
  later one, or a multi-line value with a field too many): its lines are not guessed at; its byte
  range and line count go to the report as unread and the read is marked partially read;
- a piece Arrow rejects outright (a malformed row it cannot decode): split in two and retried,
  down to single lines, each a ``malformed_row``.

A stray quote closed by a later quote on a row of the right width is, by CSV's own rules, a quoted
value spanning lines: it is read as such, as any CSV reader would.
"""
from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from connectors.io.read_report import ReadReport

PIECE_BYTES = 16 << 20
MAX_QUOTED_BYTES = 64 << 20  # a quoted span longer than this is taken for a quote that never closes
BOM = b"\xef\xbb\xbf"
_QUOTE = ord('"')


@dataclass(frozen=True)
class Dialect:
    """How the text is split: delimiter, whether values may be quoted, which columns to keep and their types."""

    delimiter: str
    quoted: bool
    include: tuple[str, ...]
    column_types: dict[str, pa.DataType] = field(default_factory=dict)

    def parse_options(self, handler) -> pcsv.ParseOptions:
        return pcsv.ParseOptions(delimiter=self.delimiter, quote_char='"' if self.quoted else False,
                                 newlines_in_values=self.quoted, invalid_row_handler=handler)

    def convert_options(self) -> pcsv.ConvertOptions:
        return pcsv.ConvertOptions(include_columns=list(self.include), column_types=self.column_types,
                                   strings_can_be_null=False, quoted_strings_can_be_null=False)


@dataclass
class Piece:
    """Rows parsed from one piece, and how many rows of it were malformed (skipped, not in ``table``)."""

    table: pa.Table | None
    malformed: int = 0


def header_names(line: bytes, delimiter: str, quoted: bool) -> list[str]:
    """Column names from a header line, without a UTF-8 BOM (Excel writes one) and line ending."""
    text = line.removeprefix(BOM).rstrip(b"\r\n").decode("utf-8", errors="replace")
    return next(csv.reader([text], delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE), [])


def read_pieces(handle: io.BufferedIOBase, names: list[str], dialect: Dialect, report: ReadReport, offset: int = 0,
                strip_bom: bool = False) -> Iterator[Piece]:
    """Parse the rest of ``handle`` (starting at byte ``offset`` of the text) piece by piece.

    A piece is a block plus the rest of its last line, grown by further blocks while an odd number
    of quotes is open in it; each byte's quotes are counted once.
    """
    piece, quotes = bytearray(), 0
    while True:
        block = bytearray(PIECE_BYTES)  # read into, not copied: the clean path touches each byte once
        del block[handle.readinto(block) or 0:]
        if strip_bom and block.startswith(BOM):
            del block[:len(BOM)]
            offset += len(BOM)
        strip_bom = False
        eof = not block
        if not eof:
            block += handle.readline()
            quotes += _quotes(block) if dialect.quoted else 0
            if piece:
                piece += block
            else:
                piece = block
        if piece and (eof or quotes % 2 == 0 or len(piece) >= MAX_QUOTED_BYTES):
            yield from _parse(piece, offset, names, dialect, report, odd=quotes % 2 == 1)
            offset += len(piece)
            piece, quotes = bytearray(), 0
        if eof:
            return


def _quotes(data: bytes | bytearray) -> int:
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == _QUOTE))


def _boundary(data: bytes | bytearray, quoted: bool) -> int:
    """End of the longest prefix of ``data`` that ends with a newline outside quotes (0 if none).

    A quote character toggles the state; so a newline is outside quotes when an even number of
    quotes precede it. Only lines with a quote change that, so this jumps from quote to quote.
    """
    pos = data.rfind(b"\n")
    if pos < 0 or not quoted:
        return pos + 1
    quotes = data.count(b'"', 0, pos)
    while quotes % 2:
        last = data.rfind(b'"', 0, pos)
        pos = data.rfind(b"\n", 0, last)
        if pos < 0:
            return 0
        quotes -= data.count(b'"', pos, last + 1)
    return pos + 1


def _parse(piece: bytes | bytearray, offset: int, names: list[str], dialect: Dialect, report: ReadReport,
           odd: bool | None = None) -> Iterator[Piece]:
    """Rows of one piece; ``odd``: whether it holds an odd number of quotes (counted here if not known)."""
    if not piece:  # Arrow refuses empty input; blank lines alone parse to no rows
        return
    if dialect.quoted and (piece.count(b'"') % 2 == 1 if odd is None else odd):
        yield from _unclosed(piece, offset, names, dialect, report)
        return
    invalid: list[str] = []

    def on_invalid(row: pcsv.InvalidRow) -> str:
        invalid.append(row.text)
        return "skip"

    try:
        with _quiet_undecodable(on_invalid):
            table = pcsv.read_csv(pa.py_buffer(piece),
                                  read_options=pcsv.ReadOptions(column_names=names, block_size=len(piece) + 1, use_threads=False),
                                  parse_options=dialect.parse_options(on_invalid), convert_options=dialect.convert_options())
    except pa.ArrowInvalid:  # a malformed row Arrow cannot hand over (not UTF-8): split until it is one line
        yield from _split(piece, offset, names, dialect, report)
        return
    try:
        malformed = _resolve(invalid, piece, offset, report) if invalid else 0
    except LookupError:  # an invalid row not found verbatim in the piece: resolve it by splitting
        yield from _split(piece, offset, names, dialect, report)
        return
    yield Piece(table, malformed)


def _unclosed(piece: bytes | bytearray, offset: int, names: list[str], dialect: Dialect, report: ReadReport) -> Iterator[Piece]:
    """A piece with a quote that never closes (at the end of the file, or open for MAX_QUOTED_BYTES).

    Arrow would read the rest of the piece into that quoted value, and keep it as a row when the
    width happens to fit. Instead the line holding the quote is one ``malformed_row`` and the lines
    before and after it are parsed as rows. The quote is the last one not doubled: inside an open
    quoted value a quote can only appear escaped as ``""``, or the value would have closed.
    """
    quote = len(piece)
    while True:
        quote = piece.rfind(b'"', 0, quote)
        if quote > 0 and piece[quote - 1] == _QUOTE:
            quote -= 1
            continue
        break
    start = piece.rfind(b"\n", 0, max(quote, 0)) + 1
    end = piece.find(b"\n", start) + 1 or len(piece)
    yield from _parse(piece[:start], offset, names, dialect, report)
    yield Piece(None, malformed=1)
    yield from _parse(piece[end:], offset + end, names, dialect, report)


@contextmanager
def _quiet_undecodable(handler) -> Iterator[None]:
    """Arrow decodes a rejected row as UTF-8 before it calls the handler; when it cannot, it prints
    the UnicodeDecodeError to stderr as "unraisable" and then fails the parse, which ``_split``
    resolves. Only that report, for this handler, is silenced: the row is counted, not lost."""
    previous = sys.unraisablehook

    def hook(unraisable) -> None:
        if unraisable.object is not handler or not isinstance(unraisable.exc_value, UnicodeDecodeError):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def _resolve(invalid: list[str], piece: bytes | bytearray, offset: int, report: ReadReport) -> int:
    """Malformed rows among the invalid rows Arrow reported in ``piece``; spans go to ``report`` as unread."""
    malformed, cursor = 0, 0
    for text in invalid:
        raw = text.encode("utf-8")
        if b"\n" not in raw:
            malformed += 1
            continue
        at = piece.find(raw, cursor)
        if at < 0:
            raise LookupError(text[:80])
        cursor = at + len(raw)
        report.add_unread(offset + at, offset + cursor, raw.count(b"\n") + 1)
    return malformed


def _split(piece: bytes | bytearray, offset: int, names: list[str], dialect: Dialect, report: ReadReport) -> Iterator[Piece]:
    body = piece.rstrip(b"\r\n")
    if b"\n" not in body:
        yield Piece(None, malformed=1)
        return
    half = len(body) // 2
    # prefer a record boundary in the first half; else any newline, so every split makes progress
    cut = _boundary(body[:half], dialect.quoted) or body.find(b"\n", half) + 1 or body.rfind(b"\n") + 1
    yield from _parse(piece[:cut], offset, names, dialect, report)
    yield from _parse(piece[cut:], offset + cut, names, dialect, report)
