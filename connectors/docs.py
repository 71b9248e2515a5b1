"""Documentation files for the documentation audit: cards, Croissant files, datasheets, reviewer sheets.

Why here: ``audit.docs`` parses text and scores it (pure functions); finding the files (local
paths, globs, folders, any fsspec URL), decoding them and naming each resource is a connector's
job. Errors name the file (and, from the parsers, the line).
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

import fsspec
import pandas as pd

from audit.docs.agreement import parse_reviewer_scores
from audit.docs.cards import Document, DocumentError, parse_document
from audit.docs.criteria import CRITERIA
from connectors.io.fs import FileRef, expand
from connectors.io.markup import csv_uncell

DOC_EXTENSIONS = (".md", ".markdown", ".json", ".jsonld")


def _read_text(url: str, encoding: str) -> str:
    with fsspec.open(url, "r", encoding=encoding) as fh:
        return fh.read()


def read_document(url: str | os.PathLike) -> Document:
    """Read and parse one documentation file (UTF-8): card, Croissant JSON-LD or Markdown datasheet.

    Bad bytes or a document that does not parse raise ``DocumentError`` with its reason code (a
    ``connectors.io.read_report.SKIP_REASONS`` code): that document is bad, not the read.
    """
    try:
        text = _read_text(str(url), "utf-8")
    except UnicodeDecodeError as err:
        raise DocumentError(f"{url}: not UTF-8 (byte {err.start}: {err.reason})", "invalid_utf8") from err
    return parse_document(text, str(url))


def read_reviewer_scores(url: str | os.PathLike, criteria: Sequence[str] = CRITERIA) -> pd.DataFrame:
    """Read a reviewer sheet (UTF-8 CSV, BOM allowed); see ``audit.docs.agreement.parse_reviewer_scores``.
    A resource the proposed sheet wrote as text (``'=x``, ``connectors.io.markup``) is read back as itself."""
    scores = parse_reviewer_scores(_read_text(str(url), "utf-8-sig"), str(url), criteria)
    return scores.assign(resource=scores["resource"].map(csv_uncell))


def resource_name(url: str) -> str:
    """What a resource is called in tables and reviewer sheets: the file name without extension, or,
    for a Hugging Face card (``README.md``), the name of its folder (the dataset repository)."""
    base = posixpath.basename(url.rstrip("/"))
    stem = base.split(".")[0]
    if stem.lower() == "readme":
        return posixpath.basename(posixpath.dirname(url.rstrip("/"))) or stem
    return stem


def find_documents(specs: Sequence[str]) -> list[tuple[str, FileRef]]:
    """(resource name, file) of every documentation file under ``specs``; two files of one name are an error."""
    found = [(resource_name(ref.url), ref) for ref in expand(list(specs), DOC_EXTENSIONS)]
    names: dict[str, str] = {}
    for name, ref in found:
        if name in names:
            raise ValueError(f"{ref.url}: resource name {name!r} is also the name of {names[name]}; rename one file")
        names[name] = ref.url
    return found
