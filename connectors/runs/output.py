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

import os
from collections.abc import Iterator
from contextlib import contextmanager

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


def _reason(exc: OSError) -> str:
    return exc.strerror or " ".join(str(exc).split()) or type(exc).__name__


@contextmanager
def naming_output(url: str) -> Iterator[None]:
    """Re-raise an ``OSError`` of the writes inside as the same kind of error naming ``url``
    (``<url>: No space left on device``), keeping its errno, so the message says which output failed
    and ``jobs.common.errors.is_transient`` still tells a full disk from a refused write."""
    try:
        yield
    except OSError as exc:
        if exc.filename == url:
            raise
        kind = type(exc) if type(exc).__module__ == "builtins" else OSError
        raise kind(exc.errno, _reason(exc), url) from exc

