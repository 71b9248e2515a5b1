"""Prompt files a user names to override the shipped contamination prompts (local or any fsspec URL)."""
from __future__ import annotations

import posixpath
from collections.abc import Mapping

import fsspec
from fsspec.core import url_to_fs

from audit.contamination.prompts import SLOTS, PromptError, PromptSet, parse_prompt


def prompt_dir_files(folder: str) -> dict[str, str]:
    """Slot -> URL of each ``<slot>.txt`` in ``folder`` (``--prompts DIR``); a folder with none of them is an error."""
    fs, path = url_to_fs(folder)
    if not fs.isdir(path):
        raise PromptError(f"{folder}: not a folder of prompt files")
    base = folder.rstrip("/")
    found = {slot: f"{base}/{slot}.txt" for slot in SLOTS if fs.isfile(posixpath.join(path, f"{slot}.txt"))}
    if not found:
        names = sorted(posixpath.basename(p) for p in fs.ls(path, detail=False))
        raise PromptError(f"{folder}: none of {[f'{s}.txt' for s in SLOTS]} found (folder has {names[:10]})")
    return found


def read_prompt_set(overrides: Mapping[str, str] | None = None) -> PromptSet:
    """The shipped prompts with the slots in ``overrides`` (slot -> file URL) read from those files."""
    prompts = PromptSet.shipped()
    parsed = {}
    for slot, url in (overrides or {}).items():
        try:
            with fsspec.open(url, "r", encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise PromptError(f"{url}: cannot read prompt file for slot {slot!r} ({type(exc).__name__}: {exc})") from exc
        parsed[slot] = parse_prompt(text, url)
    return prompts.override(**parsed)
