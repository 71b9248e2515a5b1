"""``benchaudit submit`` end to end against a real Ray head with its Jobs API on loopback, token auth on."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.submit.run import submission_id
from tests.servers.ray_head import start_head, stop_head

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    h = start_head(tmp_path_factory.mktemp("head"))
    yield h
    stop_head(h)


def submit(head, *args: str, env: dict | None = None, timeout: int = 400) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", "submit", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env or head.env, timeout=timeout)


def test_geo_runs_on_the_cluster_logs_followed_run_fetched_and_a_scheduled_id_runs_once(head, tmp_path):
    # this checkout as the zip a RayJob fetches (file:// here, s3:// on a cluster); the head already runs this venv's packages
    from jobs.submit.package import build

    env_file = tmp_path / "env.yaml"
    env_file.write_text(f"working_dir: file://{build(tmp_path / 'dist')}\n")
    out, fetched = tmp_path / "out", tmp_path / "fetched"
    args = ["geo", "--address", head.address, "--runtime-env", str(env_file), "--limit", "40", "--bootstrap", "0",
            "--out", str(out), "--submission-id", "geo-{date}-{hash}", "--fetch-to", str(fetched)]
    first = submit(head, *args)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    sid = next(line.split(": ", 1)[1] for line in first.stdout.splitlines() if line.startswith("submitted: "))
    assert sid.startswith("geo-") and len(sid.split("-")[-1]) == 10
    assert f"run: {out}/geo/{sid}" in first.stdout
    assert "[geo] 80/80 rows" in first.stdout  # the job's own progress lines, streamed from the cluster
    setup = [line for line in first.stderr.splitlines() if line.startswith("submit: ")]  # the set-up is not silent
    assert setup[0] == "submit: setting up the runtime env: uploading and unpacking the working dir", setup
    assert setup[-1].startswith("submit: the job is running after ") and setup[-1].endswith(" s of set-up"), setup
    assert f"fetched: {fetched / sid}" in first.stdout
    summary = json.loads((fetched / sid / "summary.json").read_text())
    manifest = json.loads((fetched / sid / "manifest.json").read_text())
    assert summary["job"] == "geo" and summary["run_id"] == sid and manifest["rows"]["in"] == 80
    assert manifest["ray"]["address"] == "auto"  # the driver joined the cluster
    assert (out / "geo" / sid / "_SUCCESS").exists()

    again = submit(head, *args)  # the same slot: the job manager refuses the id, nothing runs twice
    assert again.returncode == 2 and f"submission {sid} already exists on the cluster (SUCCEEDED)" in again.stderr
    assert sorted(p.name for p in (out / "geo").iterdir()) == [sid]

    status = submit(head, "status", "--address", head.address, "--submission-id", sid, "--out", str(out))
    assert status.returncode == 0 and f"{sid}: SUCCEEDED (exit 0)" in status.stdout and "(complete)" in status.stdout


@pytest.mark.parametrize("client_mode", [None, "token"])  # a plain shell, or one where Ray's own client expects a token
def test_without_the_token_nothing_is_submitted(head, tmp_path, client_mode):
    env = {k: v for k, v in head.env.items() if k not in ("RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE")}
    if client_mode:
        env["RAY_AUTH_MODE"] = client_mode
    proc = submit(head, "geo", "--address", head.address, "--out", str(tmp_path), env=env, timeout=120)
    assert proc.returncode == 2 and "the cluster requires its token" in proc.stderr, proc.stderr
    wrong = {**env, "RAY_AUTH_TOKEN": "0" * 64}
    proc = submit(head, "geo", "--address", head.address, "--out", str(tmp_path), env=wrong, timeout=120)
    assert proc.returncode == 2 and "refused the token" in proc.stderr
    assert not any(tmp_path.iterdir())


def test_bad_options_fail_before_anything_is_sent(tmp_path, capsys):
    from jobs.cli import main

    assert main(["submit", "geo", "--address", "http://127.0.0.1:1", "--bootstrap", "-1", "--out", "/abs"]) == 2
    assert "--bootstrap: Input should be greater than or equal to 0" in capsys.readouterr().err
    assert main(["submit", "geo", "--address", "http://127.0.0.1:1", "--out", "relative/runs"]) == 2
    assert "--out relative/runs: on a cluster give a location" in capsys.readouterr().err
    assert main(["submit", "geo", "--address", "127.0.0.1:6379", "--out", str(tmp_path)]) == 2
    assert "the Jobs API is the dashboard's http://HEAD:8265" in capsys.readouterr().err


def test_scheduled_ids_are_the_same_within_a_slot_and_differ_across():
    from datetime import datetime, timezone

    monday, sunday_before, monday_before = (datetime(2026, 11, d, 3, tzinfo=timezone.utc) for d in (30, 29, 23))
    argv = ["reaudit", "--plan", "plan.yaml"]
    assert submission_id("reaudit-{week}", "reaudit", argv, monday) == "reaudit-2026-W49"
    assert submission_id("reaudit-{week}", "reaudit", argv, sunday_before) == "reaudit-2026-W48"
    assert submission_id("reaudit-{week}", "reaudit", argv, monday_before) == "reaudit-2026-W48"
    assert submission_id("{job}-{date}-{hash}", "geo", argv, monday) == submission_id("{job}-{date}-{hash}", "geo", argv, monday)
    assert submission_id("{job}-{hash}", "geo", argv) != submission_id("{job}-{hash}", "geo", [*argv, "--seed", "1"])

