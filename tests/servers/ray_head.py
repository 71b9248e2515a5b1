"""A real Ray head on loopback with its dashboard and Jobs API, token authentication on.

Started as ``ray start --head --block`` in its own temp dir and ports, so it never meets the
session's in-process Ray (or anyone else's): stopping it is a SIGTERM to that one process, which
takes down the processes it started (never ``ray stop``, which stops every Ray on the machine).
"""
from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path


def free_ports(n: int, avoid: set[int] | frozenset[int] = frozenset()) -> list[int]:
    """``n`` distinct free ports, none in ``avoid`` (ports already chosen for the same node: a port released by an
    earlier pick may be handed out again, and two of a node's components on one port stop it from starting)."""
    socks: list[socket.socket] = []
    try:
        while len(socks) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            if s.getsockname()[1] in avoid:
                s.close()
                continue
            socks.append(s)  # held bound while the others are picked: the kernel cannot hand it out twice
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def ray_env(root: Path) -> dict:
    """The environment of a Ray started by a test, and of its clients: this venv first on PATH, an empty HOME
    under ``root``, no usage stats, and none of the Ray settings a session's in-process Ray leaves in os.environ."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", "HOME": str(home),
           "RAY_USAGE_STATS_ENABLED": "0"}
    for leaked in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH"):
        env.pop(leaked, None)
    return env


@dataclass
class RayHead:
    address: str  # the Jobs API, http://127.0.0.1:PORT
    token_file: Path
    env: dict  # what a client on this machine needs: PATH with this venv first, the token path, an empty HOME
    proc: subprocess.Popen
    temp_dir: Path


def start_head(root: Path, num_cpus: int = 2, timeout: float = 120.0) -> RayHead:
    """Start the head; returns once the Jobs API answers (with the token)."""
    token = root / "auth_token"
    token.write_text(secrets.token_hex(32))
    temp_dir = Path(tempfile.mkdtemp(prefix="rh", dir="/tmp"))  # short: Ray's unix sockets live here
    gcs, dash, client, agent, metrics, worker = free_ports(6)
    bin_dir = str(Path(sys.executable).parent)
    env = {**ray_env(root), "RAY_AUTH_TOKEN_PATH": str(token)}
    # no 30 s drain on SIGTERM: the test head has nothing to hand over
    head_env = {**env, "RAY_AUTH_MODE": "token", "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}
    log = open(root / "head.log", "wb")
    proc = subprocess.Popen(
        [str(Path(bin_dir) / "ray"), "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(gcs),
         "--dashboard-host", "127.0.0.1", "--dashboard-port", str(dash), "--include-dashboard", "true",
         "--ray-client-server-port", str(client), "--dashboard-agent-listen-port", str(agent),
         "--metrics-export-port", str(metrics), "--min-worker-port", str(worker), "--max-worker-port", str(worker + 60),
         "--num-cpus", str(num_cpus), "--temp-dir", str(temp_dir), "--disable-usage-stats"],
        stdout=log, stderr=subprocess.STDOUT, env=head_env, start_new_session=True)
    address = f"http://127.0.0.1:{dash}"
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"ray start exited {proc.returncode}: {(root / 'head.log').read_text()[-3000:]}")
        try:
            req = urllib.request.Request(f"{address}/api/version", headers={"Authorization": f"Bearer {token.read_text()}"})
            with urllib.request.urlopen(req, timeout=2):
                break
        except OSError:
            if time.monotonic() > deadline:
                stop_head(RayHead(address, token, env, proc, temp_dir))
                raise RuntimeError(f"the Jobs API at {address} did not answer in {timeout:g} s") from None
            time.sleep(0.5)
    return RayHead(address, token, env, proc, temp_dir)


def stop_head(head: RayHead) -> None:
    """SIGTERM to ``ray start --block`` (it stops what it started), then SIGKILL to its session if needed."""
    if head.proc.poll() is None:
        head.proc.send_signal(signal.SIGTERM)
        try:
            head.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.proc.pid, signal.SIGKILL)
            head.proc.wait()
    try:  # anything of its process group still alive (a worker mid-exit)
        os.killpg(head.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
