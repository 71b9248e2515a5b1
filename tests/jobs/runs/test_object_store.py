"""Runs on an object store, for real: a moto S3 server on loopback, jobs reading and writing ``s3://`` through s3fs.

The jobs run as users run them (``python -m jobs.cli`` in a subprocess whose environment points
botocore at the server), so the path under test is the one a cluster takes. The geo runs that succeed use the
``paper`` lexicon: what is under test is reading and writing the store, and the gazetteer's build costs seconds per run.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.runs.output import write_whole
from connectors.runs.rundir import RunDir, RunDirError, is_complete, write_json

pytestmark = pytest.mark.s3  # every test here talks to the S3-compatible server on loopback (moto)

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "connectors" / "samples"
# Stop a job between its payload and its completion marker, as a crash there would.
CUT_BEFORE_MARKER = ("import os, sys\nimport connectors.runs.rundir as r\nwrite = r.write_text\n"
                     "def cut(url, text):\n    if url.endswith('/_SUCCESS'):\n        os._exit(9)\n    write(url, text)\n"
                     "r.write_text = cut\nfrom jobs.cli import main\nsys.exit(main(sys.argv[1:]))\n")


@pytest.fixture(scope="module")
def s3():
    from tests.servers.s3_server import start_s3

    server, info = start_s3()
    fs = info.filesystem()
    fs.mkdir("audits")
    fs.put(str(SAMPLES / "coco2017_val_captions.csv"), "audits/data/coco.csv")
    fs.put(str(SAMPLES / "benchmarks" / "TruthfulQA.csv"), "audits/data/TruthfulQA.csv")
    yield info
    server.stop()


@pytest.fixture()
def s3_env(s3, monkeypatch):
    """This process pointed at the server too (for the in-process RunDir checks)."""
    import s3fs

    for k, v in s3.env.items():
        if k.startswith("AWS_"):
            monkeypatch.setenv(k, v)
    s3fs.S3FileSystem.clear_instance_cache()
    yield s3
    s3fs.S3FileSystem.clear_instance_cache()


def cli(s3, *args: str, code: str | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    head = [sys.executable, "-c", code] if code else [sys.executable, "-m", "jobs.cli"]
    return subprocess.run([*head, *args], capture_output=True, text=True, env=s3.env, cwd=ROOT, timeout=timeout)


def runs(s3, out: str) -> list[dict]:
    proc = cli(s3, "runs", "list", "--out", out, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_run_prefix_is_complete_only_with_its_marker_and_never_copied(s3_env):
    fs = s3_env.filesystem()
    run = RunDir("s3://audits/unit", "job", "r1", {"a": 1}, "h1", resume=False)
    assert run.partial == run.final == "s3://audits/unit/job/r1"  # written in place: nothing to move, no second copy
    write_json(run.path("shards", "s1.json"), {"ok": True})
    assert not is_complete(run.final)
    with pytest.raises(RunDirError, match="pass --resume"):  # an unfinished prefix is not a new run
        RunDir("s3://audits/unit", "job", "r1", {"a": 1}, "h1", resume=False)
    assert run.commit() == "s3://audits/unit/job/r1" and is_complete(run.final)
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.find("audits/unit/job")) == ["_SUCCESS", "s1.json"]
    with pytest.raises(RunDirError, match="already exists"):
        RunDir("s3://audits/unit", "job", "r1", {"a": 1}, "h1", resume=False)
    with pytest.raises(RunDirError, match="already complete"):
        RunDir("s3://audits/unit", "job", "r1", {"a": 1}, "h1", resume=True)


def test_a_write_that_fails_half_way_leaves_no_object(s3_env):
    fs = s3_env.filesystem()

    def half(fh):
        fh.write('{"rows": ')
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        write_whole("s3://audits/unit/half.json", half, "w")
    assert not fs.exists("audits/unit/half.json")


@pytest.mark.ray
def test_geo_and_conventions_read_and_write_s3(s3):
    out = "s3://audits/runs"
    geo = cli(s3, "geo", "--corpus", "coco:coco:s3://audits/data/coco.csv", "--limit", "500", "--bootstrap", "0",
              "--lexicon-profile", "paper", "--write-records", "--out", out, "--num-cpus", "1")
    assert geo.returncode == 0, geo.stderr[-3000:]
    conv = cli(s3, "conventions", "--benchmark", "tqa:truthfulqa:s3://audits/data/TruthfulQA.csv", "--bootstrap", "200",
               "--out", out, "--num-cpus", "1")
    assert conv.returncode == 0, conv.stderr[-3000:]
    fs = s3.filesystem()
    for job in ("geo", "conventions"):
        (run,) = fs.ls(f"audits/runs/{job}")
        names = {p.rsplit("/", 1)[-1] for p in fs.find(run)}
        assert {"_SUCCESS", "summary.json", "manifest.json", "report.html"} <= names
        assert not {"_LOCK", "_config.json", "error.log"} & names and not any(".tmp" in n for n in names)
    geo_run = fs.ls("audits/runs/geo")[0]
    geo_summary = json.loads(fs.cat(f"{geo_run}/summary.json"))
    assert geo_summary["table"][0]["corpus"] == "coco" and geo_summary["table"][0]["records"] == 500
    assert json.loads(fs.cat(f"{geo_run}/manifest.json"))["rows"]["in"] == 500
    assert any(p.endswith(".parquet") for p in fs.find(geo_run))  # the per-record tables the workers wrote
    conv_summary = json.loads(fs.cat(f"{fs.ls('audits/runs/conventions')[0]}/summary.json"))
    assert conv_summary["table"][0]["n_items"] == 817  # all of TruthfulQA, read from the bucket
    listed = {(r["job"], r["status"]) for r in runs(s3, out)}
    assert listed == {("geo", "complete"), ("conventions", "complete")}


@pytest.mark.ray
def test_a_commit_cut_before_its_marker_is_incomplete_and_resume_completes_it(s3):
    out = "s3://audits/cut"
    args = ["geo", "--corpus", "coco:coco:s3://audits/data/coco.csv", "--limit", "300", "--bootstrap", "0", "--out", out,
            "--run-id", "cut1", "--num-cpus", "1", "--lexicon-profile", "paper"]
    cut = cli(s3, *args, code=CUT_BEFORE_MARKER)
    assert cut.returncode == 9, cut.stderr[-3000:]
    fs = s3.filesystem()
    assert fs.exists("audits/cut/geo/cut1/summary.json") and not fs.exists("audits/cut/geo/cut1/_SUCCESS")
    (entry,) = runs(s3, out)
    assert entry["run_id"] == "cut1" and entry["status"] == "incomplete"
    again = cli(s3, *args, "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    manifest = json.loads(fs.cat("audits/cut/geo/cut1/manifest.json"))
    assert manifest["shards"]["run"] == 0 and manifest["shards"]["resumed"] == manifest["shards"]["total"] >= 1
    assert manifest["rows"]["in"] == 300
    assert [p.rsplit("/", 1)[-1] for p in fs.ls("audits/cut/geo")] == ["cut1"]  # one run, one copy
    assert fs.exists("audits/cut/geo/cut1/_SUCCESS") and not fs.exists("audits/cut/geo/cut1/_config.json")
    (entry,) = runs(s3, out)
    assert entry["status"] == "complete" and entry["headline"] and entry["path"] == f"{out}/geo/cut1"


# ---- nothing outside the run root; a missing bucket or refused credentials named ----------------
def test_no_write_built_from_a_hostile_name_leaves_the_run_root_on_s3(s3_env):
    import random

    from tests.connectors.runs.test_run_paths import hostile_names, write_everything

    fs = s3_env.filesystem()
    buckets = sorted(fs.ls(""))
    before = set(fs.find("audits"))
    for name in hostile_names(random.Random(7), 60):
        write_everything("s3://audits/hostile/root", name)
    fs.invalidate_cache()
    written = set(fs.find("audits")) - before
    assert written and all(k.startswith("audits/hostile/root/") for k in written), sorted(written)[:5]
    assert sorted(fs.ls("")) == buckets


def test_a_run_writes_nothing_outside_its_run_root_on_s3(s3):
    fs = s3.filesystem()
    fs.mkdir("contained")
    proc = cli(s3, "geo", "--corpus", "coco:coco:s3://audits/data/coco.csv", "--limit", "200", "--bootstrap", "0",
               "--lexicon-profile", "paper", "--executor", "local", "--out", "s3://contained/deep/root", "--run-id", "r1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    keys = fs.find("contained")
    assert "contained/deep/root/geo/r1/_SUCCESS" in keys and "contained/deep/root/_runs/entries/geo/r1.json" in keys
    assert all(k.startswith("contained/deep/root/") for k in keys)


def test_a_missing_bucket_is_an_error_naming_it_and_no_bucket_is_created(s3):
    fs = s3.filesystem()
    buckets = sorted(fs.ls(""))
    proc = cli(s3, "geo", "--out", "s3://no-such-bucket/audits", "--bootstrap", "0", "--limit", "50", "--executor", "local")
    err = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(err) == 1, proc.stderr
    assert "--out s3://no-such-bucket/audits: bucket 'no-such-bucket' does not exist" in err[0]
    listed = cli(s3, "runs", "list", "--out", "s3://no-such-bucket/audits")
    assert listed.returncode == 2 and "bucket 'no-such-bucket' does not exist" in listed.stderr  # not an empty history
    fs.invalidate_cache()
    assert sorted(fs.ls("")) == buckets  # s3fs's makedirs would have created it


def test_a_missing_bucket_is_refused_by_the_run_directory_itself(s3_env):
    from connectors.runs.output import RunRootError

    with pytest.raises(RunRootError, match="bucket 'no-such-bucket' does not exist"):
        RunDir("s3://no-such-bucket/audits", "job", "r1", {}, "h", resume=False)
    assert "no-such-bucket" not in s3_env.filesystem().ls("")


@pytest.fixture(scope="module")
def refusing():
    from tests.servers.s3_server import start_refusing_s3

    proc, info = start_refusing_s3()
    yield info
    proc.kill()
    proc.wait()


def test_refused_credentials_name_the_bucket_or_the_input_they_were_refused_for(refusing, tmp_path):
    out = cli(refusing, "geo", "--out", "s3://audits/runs", "--bootstrap", "0", "--limit", "50", "--executor", "local")
    err = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and len(err) == 1, out.stderr
    assert "--out s3://audits/runs: bucket 'audits' refused these credentials (Forbidden)" in err[0]
    read = cli(refusing, "geo", "--corpus", "coco:coco:s3://audits/data/coco.csv", "--out", str(tmp_path / "runs"),
               "--bootstrap", "0")
    err = [line for line in read.stderr.splitlines() if line.strip()]
    assert read.returncode == 2 and len(err) == 1, read.stderr
    assert "s3://audits/data/coco.csv: access refused (" in err[0] and "credentials" in err[0]
    assert not (tmp_path / "runs").exists()
