"""A real S3-compatible server on loopback (moto's server mode), and the environment a client needs.

The client side is what users run: s3fs through fsspec with ``s3://`` URLs, pointed at the server
by botocore's standard ``AWS_ENDPOINT_URL`` (no benchaudit option): a job started in a subprocess
with ``S3Server.env`` reads and writes the bucket exactly as it would AWS.
"""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@dataclass
class S3Server:
    endpoint: str
    env: dict = field(default_factory=dict)  # os.environ plus credentials and endpoint, for subprocesses

    def filesystem(self):
        import s3fs

        return s3fs.S3FileSystem(key=CREDENTIALS["AWS_ACCESS_KEY_ID"], secret=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                                 endpoint_url=self.endpoint, skip_instance_cache=True)


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_s3():
    """``(server, S3Server)``; stop with ``server.stop()``."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request otherwise
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    return server, S3Server(endpoint, {**os.environ, **CREDENTIALS, "AWS_ENDPOINT_URL": endpoint})


def start_refusing_s3() -> tuple[subprocess.Popen, S3Server]:
    """A server that checks every request's signature, as a real store does, against its own IAM (empty):
    the usual credentials are refused with 403, like a wrong key on AWS. ``(process, S3Server)``; stop with
    ``process.kill()``.

    Why a process of its own: moto reads ``INITIAL_NO_AUTH_ACTION_COUNT`` (0: check from the first
    request) when it is imported, so the in-process server above cannot have it.
    """
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "0"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the refusing S3 server did not start") from None
            time.sleep(0.2)
    endpoint = f"http://127.0.0.1:{port}"
    return proc, S3Server(endpoint, {**os.environ, **CREDENTIALS, "AWS_ENDPOINT_URL": endpoint})
