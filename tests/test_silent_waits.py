"""No silent minute (issue 34, item 4): ``scripts/demo`` spent ~70 s and ``scripts/setup models`` 80 s
installing without a word, and a job printed nothing while its local Ray started. Every step that can
take more than a few seconds says what it is doing before it starts."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LONG_STEPS = re.compile(r"pip install|connectors\.models\.fetch|apt-get (update|install)|benchaudit geo")
SAYS = re.compile(r"^\s*(say |echo .*>&2)")


def _steps_without_a_word(script: Path) -> list[str]:
    """The long steps of a shell script not preceded, within its block, by a line telling the user."""
    lines = [line for line in script.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]
    silent = []
    for i, line in enumerate(lines):
        if LONG_STEPS.search(line) and not SAYS.match(line):
            before = lines[max(0, i - 4):i]
            if not any(SAYS.match(b) for b in before):
                silent.append(line.strip())
    return silent


@pytest.mark.parametrize("script", ["setup", "demo"])
def test_every_long_step_of_the_quick_start_scripts_says_what_it_does(script):
    assert _steps_without_a_word(ROOT / "scripts" / script) == []


def test_setup_names_the_command_it_installed():
    """After scripts/demo, bare ``benchaudit`` is not on PATH: the setup says where it is."""
    text = (ROOT / "scripts" / "setup").read_text()
    assert ".venv/bin/benchaudit" in text and "source .venv/bin/activate" in text


@pytest.mark.ray
@pytest.mark.slow
def test_a_local_ray_start_says_so_before_it_waits(tmp_path):
    code = ("import ray; from jobs.common.runtime.ray_start import init_ray; "
            "init_ray(None, num_cpus=1, log_level='info'); ray.shutdown()")
    # the two starts side by side: each is mostly waiting on Ray's processes
    told, quiet = (subprocess.Popen([sys.executable, "-c", c], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    cwd=ROOT) for c in (code, code.replace("'info'", "'warning'")))
    (_, told_err), (_, quiet_err) = told.communicate(timeout=300), quiet.communicate(timeout=300)
    # said before the wait, whatever its end (on a loaded machine Ray may time out starting: that is its own error)
    assert told_err.splitlines()[0] == "[ray] starting a local Ray on 1 CPU(s) ...", told_err[-2000:]
    assert told.returncode == 0 or "timed out during startup" in told_err, told_err[-2000:]
    assert "[ray]" not in quiet_err  # --log-level warning: nothing but warnings
