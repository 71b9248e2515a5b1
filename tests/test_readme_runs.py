"""Every README and docs/ command that can run here does run, as written, on the shipped data: only
its outputs go to a temporary root and, where it has them and sets none, ``--limit`` and
``--bootstrap`` are made small. A command is left out only for a reason a reader can see in it: it
needs a cluster or an endpoint (``--address``, ``http://``), an object store, a placeholder
(``RUN_ID``, ``<id>``) or a file of the reader's own that the checkout does not hold."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobs.cli import main
from jobs.common.flags import resolve
from tests.test_readme import ROOT, argv_of, readme_commands

pytestmark = [pytest.mark.ray, pytest.mark.slow]

OUTPUTS = ("--out", "--to", "--rejected", "--fetch-to")  # where a command writes: sent to the test's root
SMALL = {"--limit": "30", "--bootstrap": "50"}
PLACEHOLDER = re.compile(r"<[^>]*>|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b(?![.\w])")  # <id>, RUN_ID, MODEL (not TruthfulQA.csv)
NEEDS_OUTSIDE = ("://", "--address", "submit ")


def _paths(value: str) -> list[str]:
    """The file paths inside one argument: ``NAME:PRESET:PATH``, ``name=PATH`` or the value itself."""
    if value.startswith("-"):
        return []
    last = value.rsplit(":", 1)[-1].split("=", 1)[-1]
    return [last] if "/" in last or re.search(r"\.[A-Za-z][\w.]{1,8}$", last) else []


def why_not_runnable(line: str) -> str | None:
    argv = argv_of(line)
    if any(token in line for token in NEEDS_OUTSIDE):
        return "needs a cluster, an endpoint or an object store"
    if PLACEHOLDER.search(" ".join(argv)):
        return "has a placeholder"
    skip_next = False
    for token in argv:
        if skip_next:
            skip_next = False
            continue
        if token in OUTPUTS:
            skip_next = True
            continue
        for path in _paths(token):
            if not (ROOT / path).exists():
                return f"names {path}, a file of the reader's own"
    return None


def as_run(line: str, root: Path) -> list[str]:
    """The command's arguments with its outputs under ``root`` and small limits where it takes them."""
    argv, out = [], []
    tokens = iter(argv_of(line))
    for token in tokens:
        if token in OUTPUTS:
            value = next(tokens)
            out += [token, str(root / Path(value).name)] if token != "--out" else []
            continue
        argv.append(token)
    bound = resolve(argv) if "--help" not in argv else None
    accepted = {o for a in bound.parser._actions for o in a.option_strings} if bound else set()
    if "--out" in accepted:
        out += ["--out", str(root / "runs")]
    for flag, value in SMALL.items():
        if flag in accepted and flag not in argv:
            out += [flag, value]
    return [*argv, *out]


RUNNABLE = list(dict.fromkeys(c for c in readme_commands() if why_not_runnable(c) is None))


def test_most_commands_on_the_pages_run_here():
    """Left-out commands are the exception (so a rule above that swallowed everything would fail here)."""
    assert len(RUNNABLE) >= 20, RUNNABLE


@pytest.mark.parametrize("line", RUNNABLE, ids=[" ".join(argv_of(c))[:80] for c in RUNNABLE])
def test_the_command_runs_as_written(line, ray_local, tmp_path, capsys):
    argv = as_run(line, tmp_path)
    if "--help" in argv:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        return
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, f"{' '.join(argv)}\n{captured.err[-2000:]}"
