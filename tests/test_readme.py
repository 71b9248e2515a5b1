"""Every ``benchaudit`` command the README and the docs/ pages show parses with the real command line and
validates into its job's config: an option renamed or removed fails here before a user meets it."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from jobs.common.cli.config import RunOptions
from jobs.common.cli.flags import make_config, resolve
from jobs.common.cli.registry import COMMANDS as REGISTERED

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_LINES = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())


EXAMPLES_TABLE = "| job | what it asks | example |"  # the README's "one example each": commands in table cells


def page_commands(page: Path) -> list[str]:
    """The shell lines of a page's ``bash`` blocks that run ``benchaudit``, continuations joined, then the
    commands of its examples table."""
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    lines = [line.strip().removeprefix(".venv/bin/") for line in lines]  # the quick start's own venv
    table = text.split(EXAMPLES_TABLE, 1)[1].split("\n\n", 1)[0] if EXAMPLES_TABLE in text else ""
    return [line for line in lines if line.startswith("benchaudit ")] + re.findall(r"`(benchaudit [^`]+)`", table)


def readme_commands() -> list[str]:
    return [c for page in PAGES for c in page_commands(page)]


def argv_of(line: str) -> list[str]:
    """The arguments after ``benchaudit``; as in the shell, ``#`` starts a comment only after a space
    (``http://host/v1#model`` is one word)."""
    return shlex.split(re.sub(r"\s#.*$", "", line))[1:]


COMMANDS = readme_commands()


def test_the_readme_shows_every_job_and_stays_a_front_door():
    shown = {argv_of(c)[0] for c in page_commands(ROOT / "README.md")}
    assert {c.name for c in REGISTERED} - {"report", "runs", "submit", "traces", "coreset"} <= shown
    assert {argv_of(c)[0] for c in COMMANDS} >= {c.name for c in REGISTERED}  # the docs pages show the rest
    assert README_LINES <= 350


@pytest.mark.parametrize("line", COMMANDS)
def test_readme_command_parses_and_validates(line, capsys):
    argv = argv_of(line)
    if "--help" in argv:
        with pytest.raises(SystemExit) as exit_:
            resolve(argv)
        assert exit_.value.code == 0
        return
    bound = resolve(argv)
    assert bound is not None and bound.command.run is not None, line
    make_config(RunOptions, bound.given)
    if bound.command.config is not None:
        make_config(bound.command.config, bound.given)
    assert "deprecated" not in capsys.readouterr().err, f"the README uses an old spelling: {line}"
