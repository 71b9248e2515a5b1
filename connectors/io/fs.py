"""Paths, globs and object stores, through fsspec (local, s3://, gs://, http(s)://, memory://…).

s3:// and gs:// need the optional extras (``scripts/setup s3`` / ``scripts/setup gcs``); credentials
come from the usual environment of those libraries, never from benchaudit's config. A store that
cannot be reached as configured (its extra missing, no credentials found) is one error naming the
input, the store and what to do (``store_problem``), not fsspec's or botocore's own words.
"""
from __future__ import annotations

import errno
import hashlib
import io
from dataclasses import dataclass, field
from functools import cached_property

import fsspec
from fsspec.compression import compr
from fsspec.core import url_to_fs
from fsspec.utils import infer_compression

from connectors.io.read_report import InputError, ReadIOError

_GLOB_CHARS = "*?["
# protocol -> the extra of pyproject.toml that installs its fsspec implementation
STORE_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}
_CREDENTIALS = {"s3": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (AWS_ENDPOINT_URL for another "
                      "S3-compatible store)",
                "gs": "GOOGLE_APPLICATION_CREDENTIALS, or gcloud auth application-default login"}


def store_problem(url: str, exc: BaseException) -> str | None:
    """What to tell a user whose ``url`` failed with ``exc`` because of the store's setup, or None.

    Covers a store whose fsspec implementation is not installed (fsspec: "Please install gcsfs …")
    and one that found no credentials (botocore's "Unable to locate credentials", google-auth's
    "default credentials were not found"): both are the environment, not the input, and neither
    says which input or store it was.
    """
    protocol = url.split("://", 1)[0].lower() if "://" in url else "file"
    store = f"{protocol}://{url.split('://', 1)[1].split('/', 1)[0]}" if "://" in url else url
    if isinstance(exc, ImportError) and protocol in STORE_EXTRAS:
        extra = STORE_EXTRAS[protocol]
        return (f"{url}: reading {protocol}:// needs the {extra} extra, not installed here: run scripts/setup {extra} "
                f"(or pip install '.[{extra}]' from this checkout)")
    names = {type(e).__name__ for e in (exc, exc.__cause__, exc.__context__) if e is not None}
    if names & {"NoCredentialsError", "DefaultCredentialsError"} or "Unable to locate credentials" in str(exc):
        key = "s3" if protocol in ("s3", "s3a") else "gs"
        return f"{url}: no credentials were found for {store}; set {_CREDENTIALS[key]}"
    return None


# Content checksums an object store keeps with each object (S3's ETag, GCS's md5/crc32c), in the order tried.
STORE_CHECKSUMS = ("ETag", "etag", "md5Hash", "crc32c")


@dataclass(frozen=True)
class FileRef:
    """One input file: its URL as the user would write it, size, modification stamp and content checksum.

    Why the checksum and not the stamp identifies the content: a file edited in place at equal size
    and time (``cp -p``, ``rsync -t``, a restore) keeps its stamp; a copied or touched one changes it
    with its content unchanged. ``store_checksum`` is the object store's own (no read needed);
    otherwise ``checksum`` reads the bytes once, the first time it is asked for.
    """

    url: str
    size: int
    stamp: str  # mtime / etag / generation, whatever the store gives: shown, never an identity
    store_checksum: str | None = field(default=None, compare=False)

    @cached_property
    def checksum(self) -> str:
        """``<kind>:<hex>``: the store's checksum where it has one, else the sha256 of the stored bytes."""
        return self.store_checksum or sha256_of(self.url)

    def open(self, mode: str = "rb", compression: str | None = "infer") -> io.BufferedIOBase:
        """A binary handle (see ``open_input``)."""
        if mode != "rb":
            raise ValueError(f"{self.url}: inputs are opened 'rb', not {mode!r}")
        return open_input(self.url, compression)


def open_input(url: str, compression: str | None = "infer") -> io.BufferedIOBase:
    """A binary handle on an input, decompressing by extension unless ``compression=None``.

    A failure of the byte source itself (opening, reading, seeking) is raised as ``ReadIOError``
    naming the file, so a reader can tell a transient I/O error from bad bytes: what the
    decompressor or a parser raises about the content is never a ``ReadIOError``.
    """
    try:
        raw = fsspec.open(url, "rb", compression=None).open()
    except OSError as exc:
        raise ReadIOError(f"{url}: cannot open ({type(exc).__name__}: {exc})") from exc
    handle = io.BufferedReader(_SourceErrors(raw, url), buffer_size=1 << 20)
    codec = infer_compression(url) if compression == "infer" else compression
    if not codec:
        return handle
    stream = compr[codec](handle, mode="rb")
    close = stream.close

    def close_both() -> None:  # a decompressor given a file object leaves it open
        try:
            close()
        finally:
            handle.close()

    stream.close = close_both
    return stream


class _SourceErrors(io.RawIOBase):
    """The raw byte source, with its OSErrors raised as ``ReadIOError`` (see ``FileRef.open``)."""

    def __init__(self, raw, url: str):
        self._raw, self._url = raw, url

    def _failed(self, exc: OSError, what: str) -> ReadIOError:
        return ReadIOError(f"{self._url}: I/O error while {what} ({type(exc).__name__}: {exc})")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._raw.seekable()

    def readinto(self, buffer) -> int:
        try:
            return self._raw.readinto(buffer)
        except OSError as exc:
            raise self._failed(exc, "reading") from exc

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        try:
            return self._raw.seek(offset, whence)
        except OSError as exc:
            raise self._failed(exc, "seeking") from exc

    def tell(self) -> int:
        return self._raw.tell()

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def _protocol_url(fs: fsspec.AbstractFileSystem, path: str) -> str:
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return path if protocol in ("file", "local") else f"{protocol}://{path}"


def expand(spec: str | list[str], extensions: tuple[str, ...]) -> list[FileRef]:
    """Expand files, directories (recursively, by extension) and globs into a sorted file list.

    A path that exists is taken literally even when it holds glob characters (``data[1].parquet``);
    only a path that does not exist is expanded as a glob. Raises FileNotFoundError naming the spec
    when nothing matches: an empty corpus is a mistake.
    """
    specs = [spec] if isinstance(spec, str) else list(spec)
    found: dict[str, FileRef] = {}
    for item in specs:
        try:
            refs = _expand_one(item, extensions)
        except PermissionError as exc:  # an object store's "Forbidden" names nothing: say which input it refused
            reason = " ".join(str(exc.strerror or exc).split()) or type(exc).__name__
            hint = "; check the store's credentials" if "://" in item else ""
            raise PermissionError(errno.EACCES, f"access refused ({reason}){hint}", item) from None
        except Exception as exc:
            problem = store_problem(item, exc)
            if problem is None:
                raise
            raise InputError(problem) from None
        found.update(refs)
    return [found[p] for p in sorted(found)]


def _expand_one(item: str, extensions: tuple[str, ...]) -> dict[str, FileRef]:
    fs, path = url_to_fs(item)
    if fs.isdir(path):
        paths = [p for p in fs.find(path) if p.lower().endswith(extensions)]
    elif fs.exists(path):
        paths = [path]
    elif any(ch in path for ch in _GLOB_CHARS):
        paths = fs.glob(path)
    else:
        raise FileNotFoundError(f"input not found: {item}")
    found = {}
    for p in sorted(paths):
        info = fs.info(p)
        if info.get("type") == "directory":
            continue
        stamp = str(info.get("mtime") or info.get("LastModified") or info.get("etag") or info.get("updated") or "")
        found[p] = FileRef(url=_protocol_url(fs, p), size=int(info.get("size") or 0), stamp=stamp,
                           store_checksum=store_checksum(info))
    if not paths:
        raise FileNotFoundError(f"no input files match {item} (extensions {', '.join(extensions)})")
    return found


def store_checksum(info: dict) -> str | None:
    """The content checksum an object store lists with an object (``fs.info``), as ``<key>:<value>``; None when it has none."""
    for key in STORE_CHECKSUMS:
        if info.get(key):
            return f"{key.lower()}:{str(info[key]).strip(chr(34))}"
    return None


def sha256_of(url: str) -> str:
    """``sha256:<hex>`` of a file's stored bytes (not decompressed), read in 1 MiB blocks."""
    h = hashlib.sha256()
    try:
        with fsspec.open(url, "rb", compression=None) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise ReadIOError(f"{url}: cannot read to fingerprint its content ({type(exc).__name__}: {exc})") from exc
    return f"sha256:{h.hexdigest()}"


def fingerprint(files: list[FileRef]) -> str:
    """A stable hash of the file list, sizes and content checksums (never file times): what the
    manifest records as the input and what decides whether a run's input changed."""
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.url}\t{f.size}\t{f.checksum}\n".encode())
    return h.hexdigest()


def describe(files: list[FileRef]) -> str:
    """How a message names a multi-file input: the first file and how many more."""
    return files[0].url if len(files) == 1 else f"{files[0].url} (+{len(files) - 1} more files)"
