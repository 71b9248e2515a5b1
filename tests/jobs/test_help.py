"""Every command's ``--help`` states each option's default once: a description that carries its own
"(default: ...)" next to the generated one reads ``(default: from the extension) (default: none)``."""
from __future__ import annotations

import re

import pytest

from jobs.common.cli.flags import leaf_parser, prog_of, walk
from jobs.common.cli.registry import COMMANDS

PATHS = {prog_of(path): path for path in walk(COMMANDS)}
def doubled_defaults(prog: str) -> dict[str, str]:
    """Option -> its help, for every option of ``prog`` whose help names a default more than once."""
    parser = leaf_parser(PATHS[prog])
    return {a.option_strings[0]: a.help for a in parser._actions
            if a.option_strings and a.help and len(re.findall(r"\bdefault\b", a.help, flags=re.I)) > 1}


def test_every_command_is_checked():
    assert len(PATHS) >= 30 and {"benchaudit geo", "benchaudit runs show", "benchaudit docs template"} <= set(PATHS)


@pytest.mark.parametrize("prog", sorted(PATHS))
def test_no_option_shows_two_defaults(prog):
    assert doubled_defaults(prog) == {}

