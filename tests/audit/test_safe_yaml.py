"""Every YAML the project reads refuses aliases: a "billion laughs" card or plan costs an error line,
never the machine's memory."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# 10 levels of 9 aliases: 9**9 (387 million) leaves from a few hundred bytes.
BOMB = "a0: &a0 [lol]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
CARD = f"---\n{BOMB}pretty_name: Laughs\n---\n# Laughs\n\nA card whose front matter expands to billions of nodes.\n"


def test_an_alias_bomb_card_is_refused_fast_within_bounded_memory(tmp_path):
    """In a child process capped at 1 GiB of address space and 60 s: today's parser flattens the
    metadata (billions of nodes; 18 GB before it was killed), the fixed one refuses the first alias."""
    card = tmp_path / "README.md"
    card.write_text(CARD)
    assert len(CARD) < 600
    code = textwrap.dedent(f"""
        import resource, time
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from audit.docs.cards import DocumentError
        from connectors.docs import read_document
        start = time.monotonic()
        try:
            read_document({str(card)!r})
        except DocumentError as err:
            print(err.reason, '|', err, '|', round(time.monotonic() - start, 3))
    """)
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail("parsing a 500-byte card ran for 60 s")
    assert done.returncode == 0, done.stderr[-2000:]
    reason, message, seconds = done.stdout.strip().split(" | ")
    assert reason == "malformed_front_matter"
    assert "README.md: malformed YAML front matter at line 3: aliases (*name) are not accepted" in message
    assert float(seconds) < 1 and time.monotonic() - started < 30


ALIAS = "first: &x {name: a, preset: coco, paths: [a.csv]}\nsecond: *x\n"


def test_every_yaml_reader_refuses_an_alias(tmp_path):
    from audit.docs.cards import DocumentError, parse_hf_card
    from connectors.io.yaml_lists import read_yaml_list
    from connectors.traces import read_rubric
    from jobs.common.cli.config import ConfigError, RunOptions
    from jobs.common.models.pool import read_model_settings
    from jobs.reaudit.config import read_plan
    from jobs.submit.config import SubmitOptions
    from jobs.submit.run import _runtime_env
    from jobs.validate.cli import ValidateConfig
    from jobs.validate.run import run as validate

    listed = tmp_path / "list.yaml"
    listed.write_text("- &x {name: a, preset: coco, paths: [a.csv]}\n- *x\n")
    mapping = tmp_path / "map.yaml"
    mapping.write_text(ALIAS)
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("description: d\nsteps:\n  - &s {name: a, pattern: x}\n  - *s\n")
    problem = "aliases (*name) are not accepted"
    with pytest.raises(DocumentError, match=r"c\.md: malformed YAML front matter at line 3: aliases"):
        parse_hf_card(f"---\n{ALIAS}---\nbody\n", "c.md")
    with pytest.raises(ValueError, match=r"list\.yaml: malformed YAML at line 2: aliases \(\*name\)"):
        read_yaml_list(str(listed), "corpora")
    with pytest.raises(ValueError, match=r"\*name"):
        read_model_settings(str(mapping))
    with pytest.raises(ConfigError, match=r"map\.yaml line 2: not valid YAML \(aliases"):
        read_plan(str(mapping))
    with pytest.raises(ConfigError, match=r"--runtime-env .*map\.yaml: not valid YAML \(aliases"):
        _runtime_env(SubmitOptions(runtime_env=str(mapping)), str(tmp_path / "staged"))
    with pytest.raises(ConfigError, match=r"map\.yaml: not valid YAML .*aliases"):
        validate(ValidateConfig(file=str(mapping)), RunOptions())
    with pytest.raises(Exception, match=r"rubric\.yaml: not valid YAML .*aliases") as e:
        read_rubric(str(rubric))
    assert problem in str(e.value)


def test_anchors_without_aliases_and_plain_yaml_still_load():
    from audit.safe_yaml import load_yaml

    assert load_yaml("a: &x 1\nb: [2, 3]\n") == {"a": 1, "b": [2, 3]}
    assert load_yaml(b"- x\n") == ["x"] and load_yaml("") is None
