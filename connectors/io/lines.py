"""Lines of a binary stream, each held to a size limit while it is read.

Why: ``for line in handle`` (and ``readline()``) keep reading until the newline, so one line of a
GiB (a 260 KB ``.jsonl.gz`` can hold a 256 MiB line of one repeated byte) is held whole, then
decoded and parsed into several more copies, before any per-row limit applies: 4.2 GB of memory for
a 1 GiB line. Here a line longer than the limit is never held: at most ``max_bytes`` of it are read
at once, the rest is skipped in chunks, and the reader counts it as one skipped row.
"""
from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, BinaryIO

SKIP_CHUNK = 1 << 20  # bytes read at a time while skipping the rest of a line over the limit


def bounded_lines(handle: BinaryIO | IO[bytes] | io.BufferedIOBase, max_bytes: int) -> Iterator[bytes | None]:
    """Each line of ``handle`` (newline included) of at most ``max_bytes`` bytes, or ``None`` in place
    of a longer one, whose bytes are skipped without being kept."""
    while True:
        line = handle.readline(max_bytes + 1)
        if not line:
            return
        if len(line) <= max_bytes or line.endswith(b"\n"):
            yield line
            continue
        while True:  # drop the rest of the line, a chunk at a time
            rest = handle.readline(SKIP_CHUNK)
            if not rest or rest.endswith(b"\n"):
                break
        yield None
