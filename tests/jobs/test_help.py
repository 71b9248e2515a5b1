"""Every command's ``--help`` states each option's default once: a description that carries its own
"(default: ...)" next to the generated one reads ``(default: from the extension) (default: none)``."""
from __future__ import annotations

import re

import pytest

from jobs.common.flags import leaf_parser, prog_of, walk
from jobs.common.registry import COMMANDS

PATHS = {prog_of(path): path for path in walk(COMMANDS)}
# Options whose description states a second default, in files this change could not edit; each is
# checked by the strict xfail below, so the entry must go when its description is fixed.
PENDING = {("benchaudit contamination", "--max-routers"): "jobs/contamination/config.py: 'default there: the largest r "
                                                          "in the table' belongs in Flag(default_text=...)",
           ("benchaudit submit contamination", "--max-routers"): "the same field, through benchaudit submit"}


def doubled_defaults(prog: str) -> dict[str, str]:
    """Option -> its help, for every option of ``prog`` whose help names a default more than once."""
    parser = leaf_parser(PATHS[prog])
    return {a.option_strings[0]: a.help for a in parser._actions
            if a.option_strings and a.help and len(re.findall(r"\bdefault\b", a.help, flags=re.I)) > 1}


def test_every_command_is_checked():
    assert len(PATHS) >= 30 and {"benchaudit geo", "benchaudit runs show", "benchaudit docs template"} <= set(PATHS)


@pytest.mark.parametrize("prog", sorted(PATHS))
def test_no_option_shows_two_defaults(prog):
    doubled = {o: h for o, h in doubled_defaults(prog).items() if (prog, o) not in PENDING}
    assert doubled == {}


@pytest.mark.xfail(strict=True, reason="descriptions in files owned elsewhere; see PENDING")
@pytest.mark.parametrize("prog, option", sorted(PENDING))
def test_pending_doubled_defaults_are_fixed(prog, option):
    assert option not in doubled_defaults(prog)
