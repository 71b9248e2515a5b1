"""What a reader read: rows in, rows skipped by reason, byte ranges it could not read, and why it failed.

Why one report for every reader: an audit must never publish a result computed from less input than
it says. Each reader fills a ``ReadReport`` as it goes, so a job can put ``rows.in``, the skips by
reason and every partially read shard (byte range and line count) in its manifest, and decide with
its skip limits whether the run may succeed. The invariant a complete read keeps is
``rows_in + unread_rows == rows in the input``, where ``rows_in`` counts usable and skipped rows.

Errors come in two kinds, because a job treats them differently: ``InputError`` (the bytes are bad:
a truncated archive, a broken compressed stream, a file no parser accepts; rerunning cannot help, a
skip policy may count the input as unreadable) and ``ReadIOError`` (the byte source failed: a
network or disk error; the input may be fine and a retry may succeed, so it is never counted as
bad input).
"""
from __future__ import annotations

import lzma
import tarfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import pyarrow as pa

# Every reason a row can be skipped for, with one line each: the README's bad-input paragraph copies it.
SKIP_REASONS: dict[str, str] = {
    "null_text": "the text field is null",
    "empty_text": "the text is empty or only white space",
    "text_too_long": "the text is longer than the reader's limit (captions: 4 MiB; a JSON Lines line over 16 MiB, skipped as it is read)",
    "non_string_text": "the text field holds a number, list or object instead of a string",
    "invalid_utf8": "a text value is not valid UTF-8 (or, from JSON, holds a lone surrogate)",
    "invalid_json": "a JSON Lines line, a WebDataset .json member or a Croissant document is not valid JSON",
    "not_an_object": "a JSON record (or a Croissant document) is an array, number or string instead of an object",
    "malformed_front_matter": "a dataset card's YAML front matter does not parse, is never closed, or is not a mapping",
    "missing_field": "a mapped field is absent from the record",
    "malformed_row": "a CSV/TSV row with the wrong number of fields, or the line of a quote that never closes",
    "invalid_field": "a benchmark field has the wrong type or value (the example names file, row and field)",
    "duplicate_id": "a benchmark item id already seen earlier in the input",
}
# Not a skip: rows inside a byte range a parser gave up on, counted by the lines of that range.
UNREAD = "a span of lines a parser could not split into rows (a quote closed by a later quote on a row of the wrong width)"

OnBadRow = Literal["raise", "skip"]
MAX_EXAMPLES = 5


class InputError(ValueError):
    """Bad input: the message names the file and, where known, the row and field. Rerunning cannot help."""


class ReadIOError(OSError):
    """The byte source failed while reading (network, disk): the input may be fine; a retry may succeed."""


@dataclass(frozen=True)
class UnreadRange:
    """Bytes ``[start, stop)`` of ``source`` (decompressed) that no row came from, and their line count."""

    source: str
    start: int
    stop: int
    lines: int
    why: str

    def to_json(self) -> dict:
        return {"file": self.source, "bytes": [self.start, self.stop], "lines": self.lines, "why": self.why}


@dataclass
class ReadReport:
    """Counts of one read (a shard, a file, or several merged).

    ``rows_in`` counts every row the reader produced, usable or skipped; ``skipped_by_reason`` the
    skipped ones by ``SKIP_REASONS`` code; ``unread`` the byte ranges it could not split into rows.
    ``examples`` keeps the first messages of skipped rows (file, row, field) for the report.
    """

    source: str = ""
    rows_in: int = 0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    unread: list[UnreadRange] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)

    def skip(self, reason: str, n: int = 1, example: str | None = None) -> None:
        if reason not in SKIP_REASONS:
            raise ValueError(f"unknown skip reason {reason!r}; add it to SKIP_REASONS with one line")
        if n:
            self.skipped_by_reason[reason] = self.skipped_by_reason.get(reason, 0) + n
        if example is not None and len(self.examples) < MAX_EXAMPLES:
            self.examples.append(example)

    def add_unread(self, start: int, stop: int, lines: int, why: str = UNREAD) -> None:
        self.unread.append(UnreadRange(self.source, start, stop, lines, why))

    @property
    def rows_skipped(self) -> int:
        return sum(self.skipped_by_reason.values())

    @property
    def rows_usable(self) -> int:
        return self.rows_in - self.rows_skipped

    @property
    def unread_rows(self) -> int:
        return sum(u.lines for u in self.unread)

    @property
    def unread_byte_ranges(self) -> list[tuple[int, int]]:
        return [(u.start, u.stop) for u in self.unread]

    @property
    def partially_read(self) -> bool:
        """True when some bytes of the input were not read as rows: never report such a read as complete."""
        return bool(self.unread)

    def merge(self, other: ReadReport) -> None:
        self.rows_in += other.rows_in
        for reason, n in other.skipped_by_reason.items():
            self.skipped_by_reason[reason] = self.skipped_by_reason.get(reason, 0) + n
        self.unread.extend(other.unread)
        self.examples.extend(other.examples[: max(0, MAX_EXAMPLES - len(self.examples))])

    def to_json(self) -> dict:
        return {"source": self.source, "rows_in": self.rows_in, "skipped": dict(sorted(self.skipped_by_reason.items())),
                "unread_rows": self.unread_rows, "unread": [u.to_json() for u in self.unread],
                "partially_read": self.partially_read, "examples": list(self.examples)}

    @classmethod
    def from_json(cls, data: dict) -> ReadReport:
        unread = [UnreadRange(u["file"], u["bytes"][0], u["bytes"][1], u["lines"], u["why"]) for u in data["unread"]]
        return cls(data["source"], data["rows_in"], dict(data["skipped"]), unread, list(data["examples"]))


@dataclass(frozen=True)
class RowFaults:
    """What a reader does with one bad row: raise its error (``"raise"``, the default) or count it
    in ``report`` as a skipped row with its reason (``"skip"``)."""

    policy: OnBadRow = "raise"
    report: ReadReport | None = None

    def __post_init__(self) -> None:
        if self.policy not in ("raise", "skip"):
            raise ValueError(f"on_bad_row must be 'raise' or 'skip', got {self.policy!r}")
        if self.policy == "skip" and self.report is None:
            raise ValueError("on_bad_row='skip' needs a ReadReport to count the skipped rows in")

    def __call__(self, reason: str, error: InputError) -> None:
        if self.policy == "raise":
            raise error
        self.report.rows_in += 1  # type: ignore[union-attr]
        self.report.skip(reason, example=str(error))  # type: ignore[union-attr]


# Exceptions that mean "these bytes are not a valid file of that format" when raised by a parser or a
# decompressor (pyarrow reports corrupt Parquet pages as OSError). ReadIOError is raised only by the
# byte source (connectors.io.fs), so it is told apart from these before they are converted.
_BAD_BYTES = (OSError, EOFError, ValueError, tarfile.TarError, zlib.error, lzma.LZMAError, pa.ArrowException)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, EOFError) or "end-of-stream marker" in text:
        return f"compressed stream cut short ({text or type(exc).__name__})"
    if isinstance(exc, tarfile.ReadError) and "unexpected end of data" in text:
        return "archive cut inside a member (unexpected end of data)"
    return f"{type(exc).__name__}: {text}"


@contextmanager
def input_errors(source: str, error: Callable[[str], InputError], where: str = "") -> Iterator[None]:
    """Turn a parser's or decompressor's exception into ``error`` naming ``source`` (and ``where``).

    ``InputError`` (already named) and ``ReadIOError`` (transient) pass through unchanged.
    """
    try:
        yield
    except (InputError, ReadIOError):
        raise
    except _BAD_BYTES as exc:
        raise error(f"{source}{f' ({where})' if where else ''}: unreadable: {_describe(exc)}") from exc
