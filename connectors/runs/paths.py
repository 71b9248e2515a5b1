"""Names that become paths, and the one join every path under a run root goes through.

Two kinds of names a user (or an input file) gives reach the file system:

* **Path names** are path segments as they are: run ids (``--run-id``, ``<out>/<job>/<run-id>/``,
  ``<out>/_runs/entries/<job>/<run-id>.json``), submission ids (``--submission-id``, also the run
  id) and re-audit audit ids (``fingerprints/<id>.files.parquet``). ``safe_name`` holds them to
  ``NAME_RULE``: letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit, no ``..``,
  at most 128 characters -- so no name is ``..``, absolute, a Windows path (``C:\\x``, ``..\\x``),
  hidden (``.x``, where temporaries and partial runs live), a flag (``-x``) or an fsspec chain (``a::b``).
* **Input names** -- corpus, benchmark, model and scorer-system names, and the model names read from
  lm-eval output -- are labels in tables and reports, and reach a path only as a Hive partition value,
  percent-encoded (``connectors.runs.tables.partition_segment``: ``a/b`` is the folder ``corpus=a%2Fb``).
  The encoding leaves only letters, digits, ``_.-~`` and ``%XX``, and the ``key=`` prefix means a
  segment is never ``.`` or ``..``; ``input_name`` checks what encoding cannot: a name is printable
  and short enough for a folder name.

Each is checked where the name is declared (a pydantic validator on the config field), so the error
names the flag or YAML field before any run directory exists. ``join_under`` is the last line of
defence: it refuses a part that is absolute, holds NUL, a backslash or ``::``, or has a ``..``
segment, so a path joined from a base cannot leave it, whatever a caller forgot to check.
"""
from __future__ import annotations

import posixpath
import re
import unicodedata
from urllib.parse import quote

MAX_NAME = 128  # characters of a path name or an input name
MAX_ENCODED = 200  # characters of an input name once percent-encoded (a folder name is at most 255 bytes)
NAME_RULE = (f"letters, digits, '.', '_' and '-' only, starting with a letter or digit, no '..', "
             f"at most {MAX_NAME} characters")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class UnsafeNameError(ValueError):
    """A name that cannot become a path (a ValueError, so a pydantic validator reports it on its field)."""


class PathEscapeError(ValueError):
    """A path part that would leave the base it is joined to."""


def _problem(value: str) -> str | None:
    if not value:
        return "it is empty"
    if len(value) > MAX_NAME:
        return f"it is {len(value)} characters long"
    bad = sorted({c for c in value if not (c.isascii() and (c.isalnum() or c in "._-"))})
    if bad:
        return "it holds " + ", ".join(repr(c) for c in bad[:5])
    if not _NAME.fullmatch(value):
        return f"it starts with {value[0]!r}"
    if ".." in value:
        return "it holds '..'"
    return None


def _head(value: object, what: str | None) -> str:
    """How a message shows the name: its repr, cut short when it is long (a 300-character name)."""
    shown = repr(value) if not isinstance(value, str) or len(value) <= 60 else repr(value[:40]) + "..."
    return f"{what} {shown}" if what else shown


def safe_name(value: str, what: str | None = None) -> str:
    """``value`` when it is a path name (see the module doc), else ``UnsafeNameError`` saying why.

    ``what`` (``"--run-id"``) starts the message; leave it out in a pydantic validator, whose error
    is already reported on its field.
    """
    problem = _problem(value) if isinstance(value, str) else f"expected a string, got {type(value).__name__}"
    if problem:
        raise UnsafeNameError(f"{_head(value, what)}: {problem}; a name uses {NAME_RULE}")
    return value


def input_name(value: str, what: str | None = None) -> str:
    """``value`` when it can name an input (see the module doc): not empty, no control characters
    (NUL, newline, tab ...), at most ``MAX_NAME`` characters and ``MAX_ENCODED`` once percent-encoded."""
    problem = None
    controls = sorted({c for c in value if unicodedata.category(c) == "Cc"})
    if not value.strip():
        problem = "it is empty"
    elif controls:
        problem = "it holds the control character(s) " + ", ".join(repr(c) for c in controls[:3])
    elif len(value) > MAX_NAME:
        problem = f"it is {len(value)} characters long, over {MAX_NAME}"
    elif len(quote(value, safe="")) > MAX_ENCODED:
        problem = f"it is {len(quote(value, safe=''))} characters once percent-encoded for a folder name, over {MAX_ENCODED}"
    if problem:
        raise UnsafeNameError(f"{_head(value, what)}: {problem}")
    return value


def join_under(base: str, *parts: str) -> str:
    """``base/part/...`` (a local path or a URL), refusing any part that could leave ``base``.

    A part may hold ``/`` (``"fingerprints/x.parquet"``); it may not be absolute or hold NUL, a
    backslash, ``::`` (fsspec reads ``a::b`` as a chain of filesystems) or a ``..`` segment. With
    those refused, the result is ``base`` or under it.
    """
    for part in parts:
        if not isinstance(part, str):
            raise PathEscapeError(f"path part {part!r} under {base}: expected a string")
        if part.startswith("/") or any(bad in part for bad in ("\0", "\\", "::")) or ".." in part.split("/"):
            raise PathEscapeError(f"path part {part!r} would leave {base}; a run writes only under its run root")
    return posixpath.join(base.rstrip("/"), *parts) if "://" in base else "/".join([base.rstrip("/"), *parts])
