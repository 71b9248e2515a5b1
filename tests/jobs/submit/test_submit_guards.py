"""``benchaudit submit`` against a hostile or careless cluster address (issue 33, items 2-4): the cluster
token never follows a redirect, never reaches a message, and only what the job needs is uploaded.

The dashboard is a stdlib server on loopback speaking the part of the Jobs API Ray's own client uses
(version, packages, jobs); a second server stands for the other host and records what reaches it.
Ray's real ``JobSubmissionClient`` does the talking and the packing; no Ray cluster is started."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from jobs.cli import main
from tests.servers.scripted_http import ScriptedServer

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "ray-token-0123456789abcdef0123456789abcdef"
VERSION = {"ray_version": "2.60.0", "version": "4", "ray_commit": "test"}
NEEDED = ["pyproject.toml", "audit/__init__.py", "audit/geo/data/lexicon.csv", "connectors/__init__.py", "jobs/__init__.py",
          "jobs/cli.py", "cluster/runtime_env.yaml"]
SECRETS = [".env", ".aws/credentials", ".netrc", "secrets.json", "data/private.parquet", "runs/old/summary.json",
           "notes.txt", "jobs/.env", "audit/__pycache__/x.cpython-311.pyc"]


def dashboard(version=None, jobs=None) -> ScriptedServer:
    """``version`` answers ``GET /api/version``, ``jobs`` the submission (each a ``ScriptedServer`` answer)."""
    def answer(s, h):
        if h.path == "/api/version":
            return (version or (lambda s, h: s.send_json(h, 200, VERSION)))(s, h)
        if h.path.startswith("/api/packages/"):  # the working dir: never there before, stored when sent
            return s.send_json(h, 404 if h.command == "GET" else 200, {})
        if h.path == "/api/jobs/" and h.command == "POST":
            return (jobs or (lambda s, h: s.send_json(h, 200, {"submission_id": "raysubmit_test", "job_id": None})))(s, h)
        return s.send_json(h, 404, {})
    return ScriptedServer(answer)


def redirect_to(other: ScriptedServer, status: int = 302):
    return lambda s, h: s.send_json(h, status, {}, {"Location": f"{other.url}{h.path}"})


@pytest.fixture()
def checkout(tmp_path, monkeypatch):
    """A checkout holding what a job needs and what a careless one also holds; submit packs it."""
    root = tmp_path / "checkout"
    for rel in [*NEEDED, *SECRETS]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{TOKEN} in {rel}\n" if rel in SECRETS else f"# {rel}\n")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    monkeypatch.setattr("jobs.submit.run.ROOT", root)
    for name in ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN", TOKEN)
    return root


def submit(address: str, out: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["submit", "geo", "--address", address, "--out", str(out), "--connect-timeout", "5", "--no-follow", *extra])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


# --- 2: a redirect never carries the token ------------------------------------------------------------------------


def test_a_dashboard_probe_redirected_elsewhere_is_refused_and_the_other_host_sees_nothing(checkout, tmp_path, capsys):
    with ScriptedServer() as other, dashboard(version=redirect_to(other)) as dash:
        code, said = submit(dash.url, tmp_path / "out", capsys)
    assert code == 2 and f"GET /api/version was redirected (HTTP 302) to {other.url}; redirects are not followed" in said, said
    assert other.seen == [] and [p for _, p, _ in dash.seen] == ["/api/version"]
    assert dash.seen[0][2]["Authorization"] == f"Bearer {TOKEN}" and TOKEN not in said


@pytest.mark.parametrize("status", [302, 307])
@pytest.mark.ray  # Ray's job-submission client
def test_a_jobs_api_request_redirected_elsewhere_is_refused_by_rays_client(checkout, tmp_path, capsys, status):
    with ScriptedServer() as other, dashboard(jobs=redirect_to(other, status)) as dash:
        code, said = submit(dash.url, tmp_path / "out", capsys)
    assert code == 1 and f"POST /api/jobs/ was redirected (HTTP {status}) to {other.url}; redirects are not followed" in said, said
    assert other.seen == [] and TOKEN not in said


@pytest.mark.ray  # Ray's job-submission client
def test_a_jobs_api_redirect_to_the_same_host_is_not_followed_either(checkout, tmp_path, capsys):
    def relative(s, h):
        return s.send_json(h, 307, {}, {"Location": "/api/jobs/again"})

    with dashboard(jobs=relative) as dash:
        code, said = submit(dash.url, tmp_path / "out", capsys)
    assert code == 1 and f"POST /api/jobs/ was redirected (HTTP 307) to {dash.url}; redirects are not followed" in said, said
    assert "/api/jobs/again" not in [p for _, p, _ in dash.seen]


# --- 3: no message shows the token, nor a key written into a model URL --------------------------------------------


@pytest.mark.ray  # Ray's job-submission client
def test_an_error_body_repeating_the_authorization_header_is_redacted(checkout, tmp_path, capsys):
    def echo(s, h):  # what some proxies answer: the request's headers, the token among them
        return s.send_json(h, 500, {"error": "upstream failed", "request_headers": f"Authorization: {h.headers['Authorization']}"})

    with dashboard(jobs=echo) as dash:
        code, said = submit(dash.url, tmp_path / "out", capsys)
    assert code == 1 and "submitting geo: Request failed with status code 500" in said, said
    assert "Authorization: Bearer [redacted]" in said and TOKEN not in said and TOKEN[:12] not in said


@pytest.mark.parametrize("url", ["http://user:sk-KEY-0123456789@127.0.0.1:9/v1#m", "http://user:sk-KEY-0123456789@127.0.0.1:9/v1",
                                 "ftp://sk-KEY-0123456789@127.0.0.1/v1#m", "user:sk-KEY-0123456789@127.0.0.1#m"])
def test_a_key_written_into_a_model_url_is_refused_without_being_printed(url, tmp_path, capsys):
    code = main(["landscape", "--model", f"openai:{url}", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 2 and "credentials do not belong in the URL" in captured.err, captured.err
    assert "sk-KEY" not in captured.out + captured.err and not any(tmp_path.iterdir())


# --- 4: only what the job needs travels ----------------------------------------------------------------------------


def _uploaded(dash: ScriptedServer) -> set[str]:
    [body] = [b for (m, p, _), b in zip(dash.seen, dash.bodies) if m == "PUT" and p.startswith("/api/packages/")]
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        return {n for n in zf.namelist() if not n.endswith("/")}


@pytest.mark.parametrize("how", ["generated", "--runtime-env naming the checkout"])
@pytest.mark.ray  # Ray's job-submission client
def test_submit_uploads_the_allow_list_and_none_of_the_checkouts_secrets(checkout, tmp_path, capsys, how):
    extra = []
    if how != "generated":
        env_file = tmp_path / "env.yaml"
        env_file.write_text(f"working_dir: {checkout}\npip: [pyyaml]\n")
        extra = ["--runtime-env", str(env_file)]
    with dashboard() as dash:
        code, said = submit(dash.url, tmp_path / "out", capsys, *extra)
    assert code == 0 and "submitted: raysubmit_test" in said, said
    assert _uploaded(dash) == set(NEEDED)
    job = json.loads(dash.bodies[[p for _, p, _ in dash.seen].index("/api/jobs/")])
    assert job["runtime_env"]["working_dir"].startswith("gcs://_ray_pkg_")  # the staged copy was what Ray packed


def test_the_package_zip_holds_the_allow_list_only(checkout, tmp_path):
    from jobs.submit.package import build

    with zipfile.ZipFile(build(tmp_path / "dist", root=checkout)) as zf:
        assert sorted(zf.namelist()) == sorted(f"benchaudit/{rel}" for rel in NEEDED)


def test_the_allow_list_keeps_every_tracked_file_the_job_needs():
    """Nothing a job reads is left behind: every tracked file of the shipped folders is in the package."""
    from jobs.submit.package import SHIPPED, files

    tracked = subprocess.run(["git", "ls-files", *SHIPPED], capture_output=True, text=True, cwd=ROOT)
    if tracked.returncode != 0:
        pytest.skip(f"not a git checkout: {tracked.stderr.strip()}")
    wanted = {line for line in tracked.stdout.splitlines() if (ROOT / line).exists()}
    assert wanted and wanted <= {rel.as_posix() for rel in files(ROOT)}
