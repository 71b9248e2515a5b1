"""Messages that point the right way (issue 34, item 6): one exit code for one kind of failure, the
input's own problem named (an empty file, a header and no row), nothing written or started before a
refusal, and a run that left input out saying so on the terminal."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobs.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_address_nobody_answers_has_one_exit_code_in_every_command(tmp_path, capsys):
    port = closed_port()
    geo = main(["geo", "--address", f"127.0.0.1:{port}", "--connect-timeout", "3", "--out", str(tmp_path / "r")])
    geo_err = capsys.readouterr().err
    submit = main(["submit", "geo", "--address", f"http://127.0.0.1:{port}", "--connect-timeout", "3",
                   "--out", str(tmp_path / "audits")])
    submit_err = capsys.readouterr().err
    assert "no Ray answered" in geo_err and "no Jobs API answered" in submit_err, (geo_err, submit_err)
    assert geo == submit == 1  # passes on a rerun once the cluster is up: exit 1 from both (geo said 2, submit 1)
    assert not (tmp_path / "r").exists()


def test_an_empty_csv_is_called_empty(tmp_path, capsys):
    empty = tmp_path / "captions.csv"
    empty.write_text("")
    assert main(["geo", "--input", str(empty), "--text-column", "caption", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"{empty}: the file is empty" in err and "available columns" not in err, err
    assert not (tmp_path / "r").exists()


def test_a_header_without_rows_is_refused_before_any_run_directory(tmp_path, capsys):
    header = tmp_path / "captions.csv"
    header.write_text("caption\n\n")
    assert main(["geo", "--input", str(header), "--text-column", "caption", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "no rows to audit" in err and str(header) in err and "--resume" not in err, err
    assert not (tmp_path / "r").exists()  # was: a run directory, then "rerun with --resume"


def test_rejected_candidates_without_the_lexicon_extra_name_it_and_write_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "wordfreq", None)  # as on an install without the 'lexicon' extra
    to, rejected = tmp_path / "lexicon.csv", tmp_path / "rejected.csv"
    assert main(["geo", "lexicon", "--to", str(to), "--rejected", str(rejected)]) == 2
    err = capsys.readouterr().err
    assert "lexicon extra" in err and "wordfreq" in err, err
    assert not to.exists() and not rejected.exists()  # refused before the --to file was written


def test_a_docs_run_that_skipped_a_card_warns_on_the_terminal(tmp_path, capsys):
    cards = tmp_path / "cards"
    shutil.copytree(FIXTURES / "docs" / "cards", cards)
    shutil.copy(FIXTURES / "docs" / "malformed" / "malformed_card.md", cards / "malformed_card.md")
    assert main(["docs", "--cards", str(cards), "--executor", "local", "--max-skipped", "0.5", "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "docs: warning: 1 of 5 card(s) skipped (within --max-skipped 0.5); first: " in err and "malformed_card.md" in err, err


def test_a_hub_model_nobody_can_reach_fails_before_ray_starts(tmp_path):
    """``landscape --model hf:ORG/NAME`` off the network started Ray and failed after 71 s."""
    pytest.importorskip("huggingface_hub")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf"),
           "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "jobs.cli", "landscape", "--model", "hf:some-org/some-model", "--sample", "5",
                           "--out", str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert time.monotonic() - started < 30, proc.stderr
    assert proc.returncode == 1 and "hf:some-org/some-model: cannot reach the Hugging Face hub" in proc.stderr, proc.stderr
    assert not (tmp_path / "r").exists() and "Ray" not in proc.stderr  # nothing started
