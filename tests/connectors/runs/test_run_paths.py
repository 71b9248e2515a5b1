"""Nothing outside the run root: path names are checked, input names are encoded, and every join is contained.

The hostile names are the ones of the reliability issue; the property test draws names from a
hostile alphabet with a fixed seed and writes every one through the run directory, the run store
and the run-data tables, then walks the disk: nothing may exist outside the run root.
"""
from __future__ import annotations

import os
import posixpath
import random
import re
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.dataset as pads
import pytest

from connectors.runs.paths import MAX_NAME, PathEscapeError, UnsafeNameError, input_name, join_under, safe_name
from connectors.runs.rundir import RunDir, RunDirError
from connectors.runs.store import RunEntry, list_runs, record_run
from connectors.runs.tables import partition_segment, write_table

HOSTILE = ["../", "../../escaped", "..", ".", "/some/dir/victim", "%2F", "%2e%2e", "a\x00b", "a\nb", "x" * 300,
           "..\\x", "C:\\x", "a/b", ".hidden", "-flag", "a::b", "", " "]
GOOD = ["20261201T000000.000Z-abcdef", "reaudit-2026-W49", "r1", "nightly.v2", "A_b-9"]
ALPHABET = [".", "..", "/", "\\", "\x00", "\n", "%", "%2e", "%2F", "a", "Z", "0", "-", "_", ":", "~", " ", "ü", "C:", "*"]


def all_paths(top: Path) -> list[Path]:
    return [Path(d) / n for d, dirs, files in os.walk(top) for n in dirs + files]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_path_name_is_refused_saying_why_and_the_rule(name):
    with pytest.raises(UnsafeNameError) as err:
        safe_name(name, "--run-id")
    text = str(err.value)
    assert text.startswith("--run-id ") and "letters, digits, '.', '_' and '-'" in text and "\n" not in text
    assert len(text) < 300  # a 300-character name is cut short, not echoed


@pytest.mark.parametrize("name", GOOD)
def test_ordinary_ids_are_path_names(name):
    assert safe_name(name) == name


def test_input_names_may_hold_anything_printable_but_not_control_characters_or_absurd_lengths():
    for name in ["../../escaped", "a/b", "%2e%2e", "C:\\x", "cc 3m", "ünï", "EleutherAI/pythia-160m", ".."]:
        assert input_name(name) == name  # labels: they reach a path only percent-encoded
    for name, why in [("a\x00b", "control"), ("a\nb", "control"), ("x" * 300, "300 characters"), ("", "empty"),
                      ("ü" * 40, "percent-encoded")]:
        with pytest.raises(UnsafeNameError, match=why):
            input_name(name, "corpus name")


@pytest.mark.parametrize("value", [v for v in HOSTILE if v and len(v) <= MAX_NAME] + ["EleutherAI/pythia-160m", "ü" * 30])
def test_a_partition_value_is_one_folder_name_that_decodes_back(value):
    segment = partition_segment("corpus", value)
    assert "/" not in segment and "\\" not in segment and "\x00" not in segment and "\n" not in segment
    assert segment not in (".", "..") and segment.startswith("corpus=") and len(segment) <= 255
    assert unquote(segment.removeprefix("corpus=")) == value


def test_an_empty_or_overlong_partition_value_is_refused():
    with pytest.raises(ValueError, match="the value is empty"):
        partition_segment("model", "")
    with pytest.raises(ValueError, match="would be 306 characters, over 255; give the model a shorter name"):
        partition_segment("model", "x" * 300)  # a model name read from lm-eval output is checked here, at the write


@pytest.mark.parametrize("part", ["../x", "a/../../x", "/etc/passwd", "..", "a\x00b", "..\\x", "C:\\x", "a::s3://b/x"])
@pytest.mark.parametrize("base", ["/runs/root", "s3://bucket/root"])
def test_join_under_refuses_any_part_that_could_leave_its_base(base, part):
    with pytest.raises(PathEscapeError, match="would leave"):
        join_under(base, "geo", part)


def test_join_under_keeps_parts_with_slashes_inside_the_base():
    assert join_under("/runs/root/", "fingerprints/a.files.parquet") == "/runs/root/fingerprints/a.files.parquet"
    assert join_under("s3://b/root", "geo", "r1") == "s3://b/root/geo/r1"


@pytest.mark.parametrize("run_id", ["../../escaped", "/some/dir/victim", "..", "%2e%2e", "C:\\x"])
def test_the_run_directory_and_the_store_refuse_a_hostile_run_id_writing_nothing(tmp_path, run_id):
    root, victim = tmp_path / "a" / "b" / "root", tmp_path / "victim.json"
    victim.write_text("keep me")
    with pytest.raises(UnsafeNameError, match="--run-id"):
        RunDir(str(root), "geo", run_id, {}, "h", resume=False)
    with pytest.raises(UnsafeNameError, match="--run-id"):
        record_run(str(root / "_runs"), RunEntry(run_id=run_id, job="geo", status="complete", path="/x"))
    with pytest.raises(UnsafeNameError, match="--run-id"):
        record_run(str(root / "_runs"), RunEntry(run_id=str(tmp_path / "victim"), job="geo", status="complete", path="/x"))
    assert victim.read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["victim.json"]


def hostile_names(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        name = "".join(rng.choice(ALPHABET) for _ in range(rng.choice([1, 2, 3, 5, 8, 40, 150])))
        out.append(name if rng.random() < 0.9 else "/" + name)  # some absolute
    return out


def write_everything(root: str, name: str) -> None:
    """Every write a job makes from a user-given name: its run directory, its store entry, a partitioned table."""
    for attempt in (
        lambda: RunDir(root, "geo", name, {}, "h", resume=False).commit(),
        lambda: record_run(posixpath.join(root, "_runs"), RunEntry(run_id=name, job="geo", status="complete", path=root)),
        lambda: write_table(posixpath.join(root, "geo", "r"), "records", pa.table({"n": [1]}), "s1", ("corpus", name)),
    ):
        try:
            attempt()
        except (ValueError, RunDirError):  # refused, naming the name: fine
            pass


def test_no_write_built_from_a_hostile_name_leaves_the_run_root(tmp_path):
    rng = random.Random(20261202)
    root = tmp_path / "deep" / "er" / "root"
    root.mkdir(parents=True)
    names = hostile_names(rng, 400)
    for name in names:
        write_everything(str(root), name)
    outside = [p for p in all_paths(tmp_path) if root not in p.parents and p not in (root, root.parent, root.parent.parent)]
    assert outside == []
    # what was accepted is readable back: every corpus name the table took decodes to itself
    hive = pads.partitioning(pa.schema([("corpus", pa.string())]), flavor="hive")
    corpora = set(pads.dataset(root / "geo" / "r" / "data" / "records", partitioning=hive).to_table()["corpus"].to_pylist())
    assert len(corpora) > 100 and corpora <= set(names)
    assert {e.run_id for e in list_runs(str(root / "_runs"))} <= set(names)


@pytest.mark.parametrize("planted", ["docs", "_runs", "docs/.r1.partial"])
def test_a_link_planted_in_the_run_root_is_refused_naming_it_and_nothing_is_written_through_it(tmp_path, planted):
    """``<out>/docs -> elsewhere`` (or the run store's folder, or the run's own folder) would take the
    run's writes out of the root: the run never makes a link, so it writes through none."""
    from connectors.runs.output import LinkedPathError

    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = root / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LinkedPathError, match=re.escape(f"{link} is a symbolic link (to {elsewhere})")):
        if planted == "_runs":
            record_run(str(root / "_runs"), RunEntry(run_id="r1", job="docs", status="complete", path=str(root)))
        else:
            RunDir(str(root), "docs", "r1", {}, "h", resume=False)
    assert list(elsewhere.iterdir()) == []


def test_a_link_planted_inside_an_unfinished_run_stops_its_resume(tmp_path):
    from connectors.runs.output import LinkedPathError

    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    elsewhere.mkdir()
    RunDir(str(root), "docs", "r1", {}, "h", resume=False).release()
    (root / "docs" / ".r1.partial" / "data").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LinkedPathError, match=r"\.r1\.partial/data is a symbolic link"):
        RunDir(str(root), "docs", "r1", {}, "h", resume=True)
    assert list(elsewhere.iterdir()) == []


def test_a_run_root_that_is_itself_a_link_is_the_users_choice(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "runs").symlink_to(tmp_path / "real", target_is_directory=True)
    final = RunDir(str(tmp_path / "runs"), "docs", "r1", {}, "h", resume=False).commit()
    assert (tmp_path / "real" / "docs" / "r1" / "_SUCCESS").exists() and final.endswith("/runs/docs/r1")
