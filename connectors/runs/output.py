"""Writing under a run root: a root that is checked before any work, folders that never create a
bucket, and write errors that name the output.

Why a bucket is checked and never created: s3fs's ``makedirs`` creates a missing bucket, so
``--out s3://BUKCET/audits`` (a typo) would quietly create that bucket and write the run there.
An object store has no folders to make, so ``make_dirs`` does nothing there, and ``check_run_root``
fails at once, naming the bucket, when it does not exist or refuses these credentials.

Why write errors are re-raised naming the output: a full disk surfaces as ``[Errno 28] No space
left on device`` from deep inside pyarrow or fsspec, with no file name, and a shard's error is
otherwise attributed to the shard's input file -- the one file that is not the problem.
"""
from __future__ import annotations

import io
import os
import posixpath
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from fsspec.core import url_to_fs

from connectors.io.fs import store_problem


class RunRootError(ValueError):
    """A run root (``--out``) that cannot be written: a missing bucket, refused credentials."""


def is_local(fs) -> bool:
    """Whether ``fs`` is the local filesystem (where a rename is atomic), not an object store."""
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol in ("file", "local")


def make_dirs(fs, path: str) -> None:
    """Create the folder ``path`` on a local filesystem; nothing on an object store (no folders, and
    never a bucket)."""
    if is_local(fs):
        fs.makedirs(path, exist_ok=True)


def check_run_root(out: str) -> None:
    """Fail, naming the bucket, when ``out`` is on an object store whose bucket does not exist or
    refuses these credentials; nothing is created. A local root needs no check (it is created)."""
    try:
        fs, path = url_to_fs(out)
    except ImportError as exc:
        raise RunRootError(f"--out {store_problem(out, exc) or exc}") from None
    if is_local(fs) or path.startswith("/"):  # memory:// and the like have no buckets
        return
    bucket = path.split("/", 1)[0]
    try:
        fs.info(bucket)
    except FileNotFoundError:
        raise RunRootError(f"--out {out}: bucket {bucket!r} does not exist; create it first or fix the name "
                           "(a bucket is never created for you)") from None
    except Exception as exc:
        problem = store_problem(out, exc)
        if problem is None and not isinstance(exc, PermissionError):
            raise
        if problem is not None:
            raise RunRootError(f"--out {problem}") from None
        raise RunRootError(f"--out {out}: bucket {bucket!r} refused these credentials ({_reason(exc)}); check the "
                           "store's credentials in the environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, "
                           "GOOGLE_APPLICATION_CREDENTIALS ...): they must be allowed to list the bucket") from None


class LinkedPathError(RunRootError):
    """A folder or file under the run root that is a symbolic link: writes would land where it points."""


def refuse_links(root: str, url: str) -> None:
    """Fail, naming the link, when any folder or file from just below the run root ``root`` down to
    ``url`` is a symbolic link (local runs; an object store has no links).

    Why: the run never makes a link, so one in its path was planted or left over (``<out>/docs ->
    /elsewhere``, in a run root shared by many people), and following it would write outside the
    root. ``root`` itself may be a link: that is where the user chose to put runs.
    """
    fs, path = url_to_fs(url)
    if not is_local(fs):
        return
    base = os.path.abspath(url_to_fs(root)[1])
    rel = os.path.relpath(os.path.abspath(path), base)
    if rel == os.curdir or rel.split(os.sep)[0] == os.pardir:
        return
    current = base
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current):
            raise LinkedPathError(f"{current} is a symbolic link (to {os.readlink(current)}): a run writes nothing through "
                                  f"a link it did not make; remove it, or choose another --out than {root}")
        if not os.path.lexists(current):
            return


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or " ".join(str(exc).split()) or type(exc).__name__


@contextmanager
def naming_output(url: str) -> Iterator[None]:
    """Re-raise an ``OSError`` of the writes inside as the same kind of error naming ``url``
    (``<url>: No space left on device``), keeping its errno, so the message says which output failed
    and ``jobs.common.runtime.errors.is_transient`` still tells a full disk from a refused write."""
    try:
        yield
    except OSError as exc:
        if exc.filename == url:
            raise
        kind = type(exc) if type(exc).__module__ == "builtins" else OSError
        raise kind(exc.errno, _reason(exc), url) from exc



class WholeFile:
    """The one write-whole-or-nothing writer: a file at ``url`` that appears complete or not at all.

    Why: a run's JSON, a shard's table part, an outcome table or a cache file that a crash, a full
    disk or a failed shard left half written would be read back as if whole (``--resume`` would
    take a half part for a finished one). Locally the content goes to a temporary name in the same
    folder and is renamed into place on ``commit``; on an object store it is built in memory and
    stored by one PUT, which the store keeps whole or not at all (a store has no rename: a "move"
    is a copy and a delete). ``discard`` (or leaving the ``with`` by an exception) removes the
    temporary, and never hides the error that caused it; a failed write is raised naming ``url``.

    ``with WholeFile(url, "w") as fh: fh.write(text)``, or ``open``/``commit``/``discard`` for a
    writer that outlives one call (a shard's streamed table part).
    """

    def __init__(self, url: str, mode: str = "wb"):
        if mode not in ("w", "wb"):
            raise ValueError(f"{url}: WholeFile writes 'w' or 'wb', not {mode!r}")
        self.url, self.mode = url, mode
        self.fs, self.path = url_to_fs(url)
        self.local = is_local(self.fs)
        self.tmp = posixpath.join(posixpath.dirname(self.path), f".{posixpath.basename(self.path)}.tmp-{uuid.uuid4().hex[:8]}")
        self._raw: Any = None
        self._handle: IO | None = None

    def open(self) -> IO:
        """The handle to write to (text for mode ``"w"``)."""
        if self._handle is None:
            with naming_output(self.url):
                make_dirs(self.fs, posixpath.dirname(self.path))
                self._raw = self.fs.open(self.tmp, "wb") if self.local else io.BytesIO()
                self._handle = (io.TextIOWrapper(self._raw, encoding="utf-8", write_through=True) if self.mode == "w"
                                else self._raw)
        return self._handle

    def commit(self) -> None:
        """Put the written content in place (an empty file when nothing was written)."""
        handle, raw = self.open(), self._raw
        try:
            with naming_output(self.url):
                if isinstance(handle, io.TextIOWrapper):
                    handle.flush()
                    handle.detach()
                if self.local:
                    raw.close()  # a full disk often shows here, when the last buffered bytes are written
                    self.fs.mv(self.tmp, self.path)
                else:
                    self.fs.pipe_file(self.path, raw.getvalue())
        except BaseException:
            self.discard()
            raise
        self._handle = self._raw = None

    def discard(self) -> None:
        """Drop what was written; errors of the cleanup (the disk is still full) are swallowed."""
        if self._raw is None:
            return
        try:
            if isinstance(self._handle, io.TextIOWrapper):
                self._handle.detach()  # the text layer lets go of the bytes without flushing into a failed write
            self._raw.close()
        except (OSError, ValueError):
            pass
        self._handle = self._raw = None
        if self.local:
            try:
                if self.fs.exists(self.tmp):
                    self.fs.rm(self.tmp)
            except OSError:
                pass

    def __enter__(self) -> IO:
        return self.open()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            self.commit()
        else:
            self.discard()


def write_whole(url: str, write: Callable[[IO], Any], mode: str = "wb") -> None:
    """``write(handle)`` into ``url`` whole or not at all (see ``WholeFile``)."""
    with naming_output(url), WholeFile(url, mode) as fh:  # a failed write (a full disk) names url
        write(fh)
