"""``benchaudit submit``: run a job on a Ray cluster through the Ray Jobs API (``JobSubmissionClient``).

What it adds to ``ray job submit``: the job's options are checked here first; the runtime env is
generated from ``pyproject.toml`` (this checkout's allow-list, ``jobs.submit.package``, as
``working_dir``: never its secrets or local data; never a ``benchaudit`` from the package index);
the job joins the cluster with ``--address auto`` under a run id chosen here, so the run directory
is known before the job starts and is reported (and fetched with ``--fetch-to``); a scheduled run
gets a deterministic submission id, which the job manager refuses to run twice; and the exit code
is the job's own (0, 1 resumable, 2 bad input or config).

Token authentication (Ray 2.52+; default for new local clusters in 2.59+): every request carries
``Authorization: Bearer <token>``, the token read where Ray reads it -- ``$RAY_AUTH_TOKEN``, the
file ``$RAY_AUTH_TOKEN_PATH``, or ``~/.ray/auth_token`` (``ray get-auth-token`` prints a head's).
A cluster started with ``RAY_AUTH_MODE=disabled`` needs none. The token goes to ``--address`` only: a
redirect is refused, by our probe and by Ray's client alike, and every message is redacted of it.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urljoin, urlparse

import fsspec
import yaml

from audit.safe_yaml import load_yaml
from connectors.io.http_guard import RedirectRefused, ReplyTooLarge, fetch, redact
from connectors.runs.rundir import is_local, join, new_run_id
from connectors.runs.store import get_run, store_of
from jobs.common.cli.config import ConfigError, RunOptions
from jobs.common.runtime.errors import JobError, UnreachableError
from jobs.submit.config import SubmissionConfig, SubmitOptions, submission_id
from jobs.submit.package import stage
from jobs.submit.runtime_env import ROOT, runtime_env

TOKEN_FILE = Path.home() / ".ray" / "auth_token"  # Ray's default token file


def ray_token() -> str | None:
    """The cluster token, where Ray looks for it: $RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token."""
    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return os.environ["RAY_AUTH_TOKEN"].strip()
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if path:
        try:
            token = Path(path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"RAY_AUTH_TOKEN_PATH={path}: cannot read the token ({exc.strerror})") from None
        if not token:
            raise ConfigError(f"RAY_AUTH_TOKEN_PATH={path}: the file is empty")
        return token
    if not TOKEN_FILE.exists():
        return None
    return TOKEN_FILE.read_text(encoding="utf-8").strip() or None


def jobs_address(address: str | None) -> str:
    value = address or os.environ.get("RAY_API_SERVER_ADDRESS") or os.environ.get("RAY_ADDRESS")
    if not value:
        raise ConfigError("--address: give the cluster's Jobs API address, http://HEAD:8265 (or set RAY_API_SERVER_ADDRESS)")
    if not value.startswith(("http://", "https://")):
        raise ConfigError(f"--address {value}: the Jobs API is the dashboard's http://HEAD:8265, not the GCS or ray:// "
                          "address (the job itself joins with --address auto)")
    return value.rstrip("/")


def check_jobs_api(url: str, timeout: float, token: str | None) -> None:
    """The Ray dashboard answers ``GET /api/version`` with its Ray version; anything else at the address is
    not a Jobs API, named within ``timeout`` (Ray's own client would wait on it without limit). A redirect is
    refused, never followed: it would carry the token to wherever it points."""
    request = urllib.request.Request(f"{url}/api/version", headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        body = fetch(request, timeout, max_bytes=1 << 16)
    except RedirectRefused as exc:
        raise JobError(f"--address {url}: GET /api/version was {exc}; give the dashboard's own address") from None
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return  # a dashboard that wants the token: the client below says which
        body = b""
    except ReplyTooLarge:
        body = b""
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise JobError(f"--address {url}: it accepts connections but no Ray Jobs API answered GET /api/version within "
                       f"{timeout:g} s ({reason}); give the dashboard address, http://HEAD:8265") from None
    try:
        found = json.loads(body).get("ray_version")
    except (ValueError, AttributeError):
        found = None
    if not found:
        raise JobError(f"--address {url}: the server there is not a Ray dashboard (GET /api/version gave no Ray version); "
                       "give the dashboard address, http://HEAD:8265")


def _said(text: object, token: str | None) -> str:
    """One line of what Ray or the cluster said, the token redacted (a proxy's error body may repeat the
    request's Authorization header); redacted before it is cut, so no part of the token shows."""
    return " ".join(redact(str(text), [token]).split())


class Redirected(RuntimeError):
    """A redirect Ray's client met and refused (a RuntimeError, as Ray's own HTTP failures are)."""


def _client_class():
    """Ray's ``JobSubmissionClient``, made to refuse redirects: requests follows them by default, and its
    stripping of the Authorization header depends on where they point. ``token`` is kept for redaction."""
    from ray.job_submission import JobSubmissionClient

    class Client(JobSubmissionClient):
        token: str | None = None

        def _do_request(self, method, endpoint, **kwargs):  # noqa: ANN001 -- Ray's signature (2.60)
            response = super()._do_request(method, endpoint, allow_redirects=False, **kwargs)
            if response.is_redirect:
                where = urljoin(response.url, response.headers["Location"])
                raise Redirected(f"{method} {endpoint} was {RedirectRefused(response.status_code, where)}")
            return response

    return Client


def connect(address: str | None, timeout: float, quiet: bool = True):
    """A ``JobSubmissionClient`` with the token, failing within ``timeout`` on an address nobody answers."""
    url = jobs_address(address)
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        socket.create_connection((parsed.hostname, port), timeout=timeout).close()
    except OSError as exc:
        raise UnreachableError(f"--address {url}: no Jobs API answered within {timeout:g} s "
                               f"({exc.strerror or type(exc).__name__}); check the dashboard address and port (8265)") from None
    token = ray_token()
    check_jobs_api(url, timeout, token)
    client_class = _client_class()  # after the checks: they need no Ray and fail fast

    if quiet:  # Ray's SDK logs every packaging step; set after importing Ray, which sets its own levels
        for name in ("ray", "ray.dashboard.modules.job.sdk", "ray.dashboard.modules.dashboard_sdk"):
            logging.getLogger(name).setLevel(logging.ERROR)
    try:
        client = client_class(url, headers={"Authorization": f"Bearer {token}"} if token else None)
    except Redirected as exc:
        raise JobError(f"--address {url}: {exc}; give the dashboard's own address") from None
    except Exception as exc:  # noqa: BLE001 -- Ray raises RuntimeError/ConnectionError with the HTTP text
        text = str(exc)
        missing = ("401", "Missing authentication token", "Authentication required", "couldn't find an authentication token")
        if any(m in text for m in missing):  # refused by the head, or by Ray's own client under RAY_AUTH_MODE=token
            raise JobError(f"--address {url}: the cluster requires its token: set RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH, or "
                           "put it in ~/.ray/auth_token ('ray get-auth-token' on the head prints it)") from None
        if "403" in text or "Invalid authentication token" in text or "token is invalid or incorrect" in text:
            raise JobError(f"--address {url}: the cluster refused the token "
                           f"({'$RAY_AUTH_TOKEN' if os.environ.get('RAY_AUTH_TOKEN') else 'from ' + str(TOKEN_FILE)}); "
                           "use the head's ('ray get-auth-token' there)") from None
        raise JobError(f"--address {url}: {_said(text, token)[:300]}", resumable=True) from None
    client.token = token
    return client


def _runtime_env(cfg: SubmitOptions, staged: str) -> dict:
    """The runtime env to send; a ``working_dir`` that is this checkout becomes the allow-listed copy staged
    under ``staged`` (``jobs.submit.package``): secrets and local data in the checkout never travel."""
    if cfg.runtime_env is None:
        env = runtime_env(cfg.extras, working_dir=str(ROOT), root=ROOT)
    elif cfg.extras:
        raise ConfigError("--extras applies to the generated runtime env; with --runtime-env, list the packages in its pip")
    else:
        try:
            with open(cfg.runtime_env, encoding="utf-8") as fh:
                env = load_yaml(fh) or {}
        except OSError as exc:
            raise ConfigError(f"--runtime-env {cfg.runtime_env}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"--runtime-env {cfg.runtime_env}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
        if not isinstance(env, dict):
            raise ConfigError(f"--runtime-env {cfg.runtime_env}: expected a mapping (working_dir, pip, env_vars ...)")
    wd = env.get("working_dir")
    if isinstance(wd, str) and "://" not in wd:
        env["working_dir"] = os.path.abspath(wd)
        if Path(wd).resolve() == ROOT.resolve():
            env["working_dir"] = str(stage(staged, ROOT))
    return env


def _check_out(out: str) -> None:
    if "://" not in out and not os.path.isabs(out):
        raise ConfigError(f"--out {out}: on a cluster give a location the cluster and you can both reach: an object store "
                          "URL (s3://BUCKET/audits) or an absolute path on a shared filesystem")


def _setup_phase(env: dict) -> str:
    """What the cluster does before the job starts, from the runtime env we sent."""
    pip = env.get("pip")
    packages = len(pip if isinstance(pip, list) else (pip or {}).get("packages", [])) if pip else 0
    what = ["uploading and unpacking the working dir"] if env.get("working_dir") else []
    if packages:
        what.append(f"pip installing {packages} requirement(s) (the pip phase; minutes on a cold node)")
    return "setting up the runtime env: " + ("; ".join(what) or "nothing to install")


def wait_until_started(client, sid: str, env: dict, every_s: float = 10.0, poll_s: float = 1.0) -> str:
    """Wait while the submission is PENDING (the cluster sets up its runtime env: working dir, pip), saying so
    every ``every_s`` seconds with the time spent, instead of Ray's one "Runtime env is setting up."; returns
    the status it reached."""
    started = time.monotonic()
    last = started
    phase = _setup_phase(env)
    print(f"submit: {phase}", file=sys.stderr, flush=True)
    while True:
        status = str(client.get_job_status(sid))
        if status != "PENDING":
            print(f"submit: the job is {status.lower()} after {time.monotonic() - started:.0f} s of set-up", file=sys.stderr,
                  flush=True)
            return status
        if time.monotonic() - last >= every_s:
            last = time.monotonic()
            message = _said(client.get_job_info(sid).message or "", client.token)
            print(f"submit: still {phase.split(': ', 1)[1].split(' (')[0]} ({last - started:.0f} s so far; the cluster says: "
                  f"{message or 'pending'})", file=sys.stderr, flush=True)
        time.sleep(poll_s)


def _follow(client, sid: str) -> None:
    async def tail() -> None:
        async for chunk in client.tail_job_logs(sid):
            sys.stdout.write(chunk)
            sys.stdout.flush()

    asyncio.run(tail())


def submit(cfg: SubmitOptions, opts: RunOptions) -> str:
    """Submit the job; with --follow, stream its log and return once it ends (its failure is raised)."""
    _check_out(opts.out)
    job = "-".join(cfg.JOB_PATH)
    with tempfile.TemporaryDirectory(prefix="benchaudit-working-dir-") as staged:
        env = _runtime_env(cfg, staged)
        draft = cfg.job_argv(opts, "RUN_ID")
        sid = submission_id(cfg.submission_id, job, draft) if cfg.submission_id else None
        run_id = opts.run_id or sid or new_run_id()
        argv = cfg.job_argv(opts, run_id)
        run_dir = join(opts.out, job, run_id)
        client = connect(cfg.address, opts.connect_timeout, quiet=opts.log_level != "debug")
        entrypoint = "python -m jobs.cli " + shlex.join(argv)
        try:
            sid = client.submit_job(entrypoint=entrypoint, submission_id=sid, runtime_env=env,
                                    entrypoint_num_cpus=cfg.entrypoint_num_cpus,
                                    metadata={"benchaudit_job": job, "benchaudit_run": run_dir})
        except RuntimeError as exc:
            if sid and "already exists" in str(exc):
                state = client.get_job_status(sid)
                raise JobError(f"submission {sid} already exists on the cluster ({state}): this run was submitted before, "
                               "nothing was submitted again") from None
            raise JobError(f"submitting {job}: {_said(exc, client.token)[:500]}", resumable=True) from None
    print(f"submitted: {sid}\nrun: {run_dir}", flush=True)
    if not cfg.follow:
        return f"follow: benchaudit submit status --address {jobs_address(cfg.address)} --submission-id {sid}"
    try:
        wait_until_started(client, sid, env)
        _follow(client, sid)
    except KeyboardInterrupt:
        print(f"\nstill running on the cluster; stop it with: benchaudit submit stop --submission-id {sid}", file=sys.stderr)
        raise
    info = client.get_job_info(sid)
    if str(info.status) != "SUCCEEDED":
        code = info.driver_exit_code
        raise JobError(f"job {sid} {info.status} (exit {code}): {_said(info.message or '', client.token)[-300:]}; log: "
                       f"ray job logs --address {jobs_address(cfg.address)} {sid}",
                       resumable=code == 1 and unfinished(opts.out, job, run_id), run_id=run_id)
    lines = [f"succeeded: {sid}"]
    if cfg.fetch_to:
        lines.append(f"fetched: {fetch_run(run_dir, cfg.fetch_to)}")
    return "\n".join(lines)


def unfinished(out: str, job: str, run_id: str) -> bool:
    """Whether ``run_id`` left an unfinished run that ``--resume`` can continue (exit 1 alone may be Python's)."""
    fs, base = fsspec.core.url_to_fs(join(out, job))
    if is_local(fs):
        return fs.exists(f"{base}/.{run_id}.partial")
    return fs.exists(f"{base}/{run_id}") and not fs.exists(f"{base}/{run_id}/_SUCCESS")


def fetch_run(run_dir: str, to: str) -> str:
    """Copy a complete run directory (a local path or URL) into ``to/<run-id>``."""
    fs, path = fsspec.core.url_to_fs(run_dir)
    if not fs.exists(f"{path.rstrip('/')}/_SUCCESS"):
        raise JobError(f"{run_dir}: not a complete run (no _SUCCESS) to fetch")
    target = os.path.join(os.path.abspath(to), path.rstrip("/").rsplit("/", 1)[-1])
    fs.get(path.rstrip("/") + "/", target + "/", recursive=True)
    return target


def _submission(cfg: SubmissionConfig, opts: RunOptions):
    if not cfg.submission_id:
        raise ConfigError("--submission-id: give the submission ('benchaudit submit' printed it)")
    client = connect(cfg.address, opts.connect_timeout)
    try:
        return client, client.get_job_info(cfg.submission_id)
    except RuntimeError as exc:
        raise JobError(f"--submission-id {cfg.submission_id}: {_said(exc, client.token)[:300]}") from None


def _run_line(info, opts: RunOptions) -> str:
    run_dir = (info.metadata or {}).get("benchaudit_run")
    if not run_dir:
        return "run: not a benchaudit submission"
    try:
        entry = get_run(store_of(opts.out), run_dir.rstrip("/").rsplit("/", 1)[-1])
        return f"run: {run_dir} ({entry.status})"
    except ValueError:
        return f"run: {run_dir} (not recorded in {store_of(opts.out)})"


def status(cfg: SubmissionConfig, opts: RunOptions) -> str:
    """The submission's state on the cluster, and its run's in the run store of --out."""
    _, info = _submission(cfg, opts)
    code = "" if info.driver_exit_code is None else f" (exit {info.driver_exit_code})"
    return f"{cfg.submission_id}: {info.status}{code}\n{_run_line(info, opts)}"


def stop(cfg: SubmissionConfig, opts: RunOptions) -> str:
    """Ask the cluster to stop the submission; its finished shards stay for --resume."""
    client, info = _submission(cfg, opts)
    stopped = client.stop_job(cfg.submission_id)
    state = "stopping" if stopped else f"not running ({info.status})"
    return f"{cfg.submission_id}: {state}\n{_run_line(info, opts)}"
