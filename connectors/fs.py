"""Paths, globs and object stores, through fsspec (local, s3://, gs://, http(s)://, memory://…).

s3:// and gs:// need the optional extras (``pip install benchaudit[s3]`` / ``[gcs]``); credentials
come from the usual environment of those libraries, never from benchaudit's config.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import fsspec
from fsspec.core import url_to_fs


@dataclass(frozen=True)
class FileRef:
    """One input file: its URL as the user would write it, size and modification stamp."""

    url: str
    size: int
    stamp: str  # mtime / etag / generation, whatever the store gives: part of the input fingerprint

    def open(self, mode: str = "rb", compression: str | None = "infer"):
        return fsspec.open(self.url, mode, compression=compression).open()


def _protocol_url(fs: fsspec.AbstractFileSystem, path: str) -> str:
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return path if protocol in ("file", "local") else f"{protocol}://{path}"


def expand(spec: str | list[str], extensions: tuple[str, ...]) -> list[FileRef]:
    """Expand files, directories (recursively, by extension) and globs into a sorted file list.

    Raises FileNotFoundError naming the spec when nothing matches: an empty corpus is a mistake.
    """
    specs = [spec] if isinstance(spec, str) else list(spec)
    found: dict[str, FileRef] = {}
    for item in specs:
        fs, path = url_to_fs(item)
        if any(ch in path for ch in "*?["):
            paths = fs.glob(path)
        elif fs.isdir(path):
            paths = [p for p in fs.find(path) if p.lower().endswith(extensions)]
        elif fs.exists(path):
            paths = [path]
        else:
            raise FileNotFoundError(f"input not found: {item}")
        for p in sorted(paths):
            info = fs.info(p)
            if info.get("type") == "directory":
                continue
            stamp = str(info.get("mtime") or info.get("LastModified") or info.get("etag") or info.get("updated") or "")
            found[p] = FileRef(url=_protocol_url(fs, p), size=int(info.get("size") or 0), stamp=stamp)
        if not paths:
            raise FileNotFoundError(f"no input files match {item} (extensions {', '.join(extensions)})")
    return [found[p] for p in sorted(found)]


def fingerprint(files: list[FileRef]) -> str:
    """A stable hash of the file list, sizes and stamps: what the manifest records as the input."""
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.url}\t{f.size}\t{f.stamp}\n".encode())
    return h.hexdigest()


def describe(files: list[FileRef]) -> str:
    """How a message names a multi-file input: the first file and how many more."""
    return files[0].url if len(files) == 1 else f"{files[0].url} (+{len(files) - 1} more files)"
