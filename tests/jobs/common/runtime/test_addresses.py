"""An address that answers but is not Ray (a Ray GCS, Ray Client or Jobs API) fails within
--connect-timeout with one line, before any run directory exists."""
from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from jobs.cli import main


@contextmanager
def closed_port():
    """A loopback port bound but not listening: a connection to it is refused at once."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


@contextmanager
def listener(reply: bytes | None):
    """A TCP server on loopback that sends ``reply`` to every connection (None: says nothing)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    stop = threading.Event()
    held = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            held.append(conn)
            if reply is not None:
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        srv.close()


@contextmanager
def http_server():
    """A plain HTTP server on loopback (every path 404s): a web service that is not Ray's dashboard."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def run_timed(argv: list[str]) -> tuple[int, float]:
    started = time.monotonic()
    code = main(argv)
    return code, time.monotonic() - started


def cli_timed(argv: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    """In a fresh process: this one may already have joined the session's Ray, which a run then reuses."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "jobs.cli", *argv], capture_output=True, text=True, timeout=120)
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def start_up(tmp_path_factory) -> float:
    """How long the same command takes when its address refuses at once: what the probe's wait is measured against."""
    out = tmp_path_factory.mktemp("refused") / "runs"
    with closed_port() as refused:
        baseline, took = cli_timed(["geo", "--connect-timeout", "1", "--limit", "5", "--out", str(out),
                                    "--address", f"127.0.0.1:{refused}"])
    assert baseline.returncode != 0 and not out.exists(), baseline.stderr
    return took


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 400 Bad Request\r\n\r\n", b"+OK redis\r\n"], ids=["silent", "http", "other"])
def test_a_port_that_is_not_ray_fails_within_the_connect_timeout(reply, tmp_path, start_up):
    argv = ["geo", "--connect-timeout", "1", "--limit", "5", "--out", str(tmp_path / "runs")]
    with listener(reply) as port:
        done, took = cli_timed([*argv, "--address", f"127.0.0.1:{port}"])
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert took - start_up < 1 + 5, (took, start_up)  # the probe waits 1 s, not Ray's 14 minutes of retries
    assert len(err) == 1 and f"127.0.0.1:{port} accepts connections but is not a Ray GCS or Ray Client server" in err[0]
    assert not (tmp_path / "runs").exists()


def test_submit_to_a_server_that_is_not_a_jobs_api_fails_within_the_connect_timeout(tmp_path, capsys):
    with listener(None) as silent:
        code, took = run_timed(["submit", "geo", "--address", f"http://127.0.0.1:{silent}", "--connect-timeout", "1",
                                "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code != 0 and took < 1 + 15, took
    assert "no Ray Jobs API answered GET /api/version within 1 s" in err
    with http_server() as port:
        code, _ = run_timed(["submit", "geo", "--address", f"http://127.0.0.1:{port}", "--connect-timeout", "1",
                             "--out", str(tmp_path / "runs")])
    assert code != 0 and "is not a Ray dashboard" in capsys.readouterr().err
