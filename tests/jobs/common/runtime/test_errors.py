"""Errors people can act on: at most three lines from the real command line, the traceback in error.log."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.common.runtime.errors import failure_lines, is_transient, one_line, user_code_error

CARDS = Path(__file__).resolve().parents[3] / "fixtures" / "docs" / "cards"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], capture_output=True, text=True, timeout=300)


def lines(text: str) -> list[str]:
    """The lines a failure printed, less the one that says a local Ray is starting (a wait, not the failure)."""
    return [line for line in text.splitlines() if line.strip() and not line.startswith("[ray] ")]


def partials(root: Path) -> list[Path]:
    return sorted(root.glob("*/.*.partial"))


@pytest.mark.ray
def test_malformed_card(tmp_path):
    cards = tmp_path / "cards"
    cards.mkdir()
    shutil.copy(CARDS.parent / "malformed" / "malformed_card.md", cards / "malformed_card.md")  # no other document
    proc = cli("docs", "--cards", str(cards), "--out", str(tmp_path / "runs"), "--num-cpus", "1")
    err = [line for line in lines(proc.stderr) if not line.startswith("[docs] ")]  # the scan read it: its progress line
    assert proc.returncode == 2 and len(err) <= 3, proc.stderr
    assert "docs: no usable rows" in err[0] and "--resume" not in proc.stderr
    assert "malformed_card.md: malformed YAML front matter at line 5" in err[0]  # the skipped card, named
    assert "Traceback" not in proc.stderr and "ray::" not in proc.stderr
    (partial,) = partials(tmp_path / "runs")
    assert str(partial) in err[1] and "Traceback" in (partial / "error.log").read_text()


def test_missing_column(tmp_path):
    pq.write_table(pa.table({"caption": ["x"]}), tmp_path / "a.parquet")
    proc = cli("geo", "--corpus", f"dc:datacomp:{tmp_path / 'a.parquet'}", "--out", str(tmp_path / "runs"))
    err = lines(proc.stderr)
    assert proc.returncode == 2 and len(err) == 1, proc.stderr
    assert "a.parquet: mapped column(s) ['text', 'url', 'uid'] not found" in err[0]
    assert not (tmp_path / "runs").exists()  # checked before any work: nothing on disk


@pytest.mark.ray
def test_unreadable_shard(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "s0.tsv.gz").write_bytes(b"\x1f\x8b not really gzip")
    proc = cli("geo", "--corpus", f"t:cc3m:{tmp_path / 'c'}", "--out", str(tmp_path / "runs"), "--num-cpus", "1")
    err = lines(proc.stderr)
    assert proc.returncode == 2 and len(err) <= 3, proc.stderr
    assert "s0.tsv.gz" in err[0] and "--resume" not in proc.stderr and "Traceback" not in proc.stderr
    (partial,) = partials(tmp_path / "runs")
    assert "Traceback" in (partial / "error.log").read_text()


def test_invalid_config_value(tmp_path):
    proc = cli("geo", "--seed", "abc", "--out", str(tmp_path))
    assert proc.returncode == 2
    assert lines(proc.stderr) == ["benchaudit geo: error: --seed: Input should be a valid integer, unable to parse string as an integer"]
    proc = cli("geo", "--lexicon-profile", "nope")
    assert proc.returncode == 2 and len(lines(proc.stderr)) == 2 and "invalid choice: 'nope'" in proc.stderr
    assert not list(tmp_path.iterdir())


def test_resume_hint_only_where_resuming_helps():
    interrupted = KeyboardInterrupt()
    interrupted.partial, interrupted.run_id = "/runs/geo/.r1.partial", "r1"
    interrupted.resumable = is_transient(interrupted)
    assert failure_lines("benchaudit geo", interrupted)[-1].endswith("rerun the same command with --resume --run-id r1")
    disk_full = OSError(28, "No space left on device", "/runs/geo/.r1.partial/shards/x.json")
    assert is_transient(disk_full) and one_line(disk_full) == "/runs/geo/.r1.partial/shards/x.json: No space left on device"
    bad_input = ValueError("a.csv: row 3, field 'question': expected a string")
    bad_input.partial, bad_input.run_id, bad_input.resumable = "/p", "r1", is_transient(bad_input)
    assert all("--resume" not in line for line in failure_lines("benchaudit geo", bad_input))
    assert not is_transient(FileNotFoundError(2, "No such file or directory", "x"))


def test_user_code_errors_are_unwrapped_from_ray_text():
    class RayTaskError(Exception):  # the shape of Ray's wrapped error text (the real one is tested end to end)
        pass

    text = ("ray::MapBatches(_read_shards)() (pid=1, ip=1)\n  File \"x.py\", line 3, in f\n"
            "connectors.coreset.targets.TargetError: t.parquet: column 'label' has value 2 at row 7; expected 0 or 1\n")
    assert user_code_error(RayTaskError(text)) == "t.parquet: column 'label' has value 2 at row 7; expected 0 or 1"
    assert user_code_error(ValueError("plain")) is None
