"""What ``benchaudit validate FILE`` reports for one file: each entry, valid or with its problem.

Every kind of input file (corpora, benchmarks, models, a re-audit plan) has a validator named in
``jobs.common.cli.registry.VALIDATORS``: it checks each entry with the same config model a run uses
and, with ``check_files``, the files the entry names (listed, mapped columns present in every
file) through the same planners a run starts with, so a file that validates is one a run accepts.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Checked:
    """One entry of a file: its label, what was found (``detail``) or why it is invalid (``problem``)."""

    label: str
    detail: str = ""
    problem: str | None = None


def check_entries(entries: Iterable[dict[str, Any]], check: Callable[[dict[str, Any]], str]) -> list[Checked]:
    """``check(entry)`` on each entry (it returns what it found, or raises): every entry is checked, none stops the rest."""
    from jobs.common.runtime.errors import one_line

    out = []
    for i, entry in enumerate(entries, start=1):
        label = f"entry {i}" + (f" ({entry['name']})" if isinstance(entry.get("name"), str) else "")
        try:
            out.append(Checked(label, check(entry)))
        except Exception as exc:  # noqa: BLE001 -- a bad entry is reported as that entry's problem
            out.append(Checked(label, problem=one_line(exc)))
    return out
