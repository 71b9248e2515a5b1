"""A real llama.cpp OpenAI-compatible server (``python -m llama_cpp.server``) on loopback.

Started as a child process on a free 127.0.0.1 port and stopped by the context manager; every
wait is bounded (start-up, shutdown), and a server that dies or never answers is an error that
quotes the end of its log.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Self


class LlamaCppServer:
    def __init__(self, gguf: str | Path, *, threads: int = 2, n_ctx: int = 2048, start_timeout_s: float = 120.0) -> None:
        self.gguf = str(gguf)
        self.threads, self.n_ctx, self.start_timeout_s = threads, n_ctx, start_timeout_s
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="llama-cpp-server-", suffix=".log", delete=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(Path(self._log.name).read_text(errors="replace").splitlines()[-lines:])

    def models(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as response:
            return json.loads(response.read())

    def __enter__(self) -> Self:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", self.gguf, "--host", "127.0.0.1", "--port", str(self.port),
               "--n_threads", str(self.threads), "--n_ctx", str(self.n_ctx), "--seed", "0", "--verbose", "False"]
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log_tail()
                self.__exit__()
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode} at start:\n{tail}")
            try:
                self.models()
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)
        tail = self.log_tail()
        self.__exit__()
        raise RuntimeError(f"llama_cpp.server did not answer within {self.start_timeout_s:g} s:\n{tail}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self._log.close()
        Path(self._log.name).unlink(missing_ok=True)


def _free_port() -> int:
    """A port nothing listens on now (the server binds it a moment later; loopback only)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
