"""A llama.cpp OpenAI-compatible server (``python -m llama_cpp.server``) on loopback, and the check that the
installed one can answer a completion.

Why the check: llama-cpp-python ships only an sdist, and pip caches the wheel it builds keyed by the sdist
alone, whatever ``CMAKE_ARGS`` said. A wheel another install built with ``-march=native`` on a machine whose
CPU lists instructions its VM does not enable (AMX) is reused as is: that server answers ``/v1/models``,
then dies with SIGILL on its first completion. So ``scripts/setup`` installs the package built from source
without pip's cache (``install_portable``) and runs one real completion (``python -m
connectors.models.llama_cpp_server check MODEL``); ``ensure`` rebuilds it once when that completion crashes.

``LlamaCppServer`` starts the server as a child process on a free 127.0.0.1 port, every wait bounded; a
server that dies is a ``ServerCrashed`` naming its exit status (the signal that killed it, and the status a
shell shows: 132 for SIGILL) and the end of its log, at start-up or whenever ``check`` asks.
"""
from __future__ import annotations

import argparse
import http.client
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

DISTRIBUTION = "llama-cpp-python"
SERVER_MODULE = "llama_cpp.server"


class ServerCrashed(RuntimeError):
    """The server process exited while it was meant to be serving."""


def exit_status(returncode: int) -> str:
    """How a process ended, as a user reads it: ``killed by SIGILL (exit status 132)`` or ``exit status 1``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name} (exit status {128 - returncode})"
    return f"exit status {returncode}"


class LlamaCppServer:
    """``launcher`` is the command before the server's own flags (another Python's ``-m llama_cpp.server``, or a
    stand-in that speaks its protocol)."""

    def __init__(self, gguf: str | Path, *, threads: int = 2, n_ctx: int = 2048, start_timeout_s: float = 120.0,
                 launcher: Sequence[str] = (sys.executable, "-m", SERVER_MODULE)) -> None:
        self.gguf = str(gguf)
        self.threads, self.n_ctx, self.start_timeout_s = threads, n_ctx, start_timeout_s
        self.launcher = list(launcher)
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._stopping = False
        self._log = tempfile.NamedTemporaryFile(prefix="llama-cpp-server-", suffix=".log", delete=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(Path(self._log.name).read_text(errors="replace").splitlines()[-lines:])

    def models(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as response:
            return json.loads(response.read())

    def crashed(self) -> str | None:
        """Why the server is gone, when it exited without being stopped; None while it runs."""
        if self.proc is None or self._stopping or self.proc.poll() is None:
            return None
        return (f"{SERVER_MODULE} (pid {self.proc.pid}, port {self.port}) crashed: {exit_status(self.proc.returncode)}; "
                f"its log ends:\n{self.log_tail()}")

    def check(self) -> None:
        """Raise ``ServerCrashed`` when the server died (a test fixture asks before and after each test)."""
        if message := self.crashed():
            raise ServerCrashed(message)

    def complete(self, prompt: str = "Hello", timeout_s: float = 60.0) -> str:
        """One real completion (one token); a server that dies on it is a ``ServerCrashed``, not a connection error."""
        body = json.dumps({"prompt": prompt, "max_tokens": 1, "temperature": 0.0}).encode()
        request = urllib.request.Request(f"{self.base_url}/completions", body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return json.loads(response.read())["choices"][0]["text"]
        except (OSError, http.client.HTTPException):  # refused, reset, cut short: when the server died, say that
            assert self.proc is not None
            try:
                self.proc.wait(timeout=5)  # a crash closes the connection a moment before the process is reaped
            except subprocess.TimeoutExpired:
                raise  # alive: the request's own failure
            self.check()
            raise

    def __enter__(self) -> Self:
        cmd = [*self.launcher, "--model", self.gguf, "--host", "127.0.0.1", "--port", str(self.port),
               "--n_threads", str(self.threads), "--n_ctx", str(self.n_ctx), "--seed", "0", "--verbose", "False"]
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                message = f"{SERVER_MODULE} exited at start: {exit_status(self.proc.returncode)}; its log ends:\n{self.log_tail()}"
                self.__exit__()
                raise ServerCrashed(message)
            try:
                self.models()
                return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)
        tail = self.log_tail()
        self.__exit__()
        raise ServerCrashed(f"{SERVER_MODULE} did not answer within {self.start_timeout_s:g} s:\n{tail}")

    def __exit__(self, *exc: object) -> None:
        self._stopping = True
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


def smoke_check(gguf: str | Path, python: str = sys.executable) -> str:
    """Start ``python``'s llama.cpp server on ``gguf`` and run one completion: its text, or ``ServerCrashed``."""
    with LlamaCppServer(gguf, launcher=(python, "-m", SERVER_MODULE)) as server:
        return server.complete()


def install_portable(python: str, requirement: str, *, reinstall: bool = False) -> None:
    """Build ``requirement`` (llama-cpp-python) from its sdist into ``python``'s environment, never from pip's wheel
    cache (``CMAKE_ARGS`` from the environment decide the build); its dependencies are the caller's install's."""
    cmd = [python, "-m", "pip", "install", "-q", "--no-deps", "--no-cache-dir", "--no-binary", DISTRIBUTION, requirement]
    subprocess.run([*cmd, *(["--force-reinstall"] if reinstall else [])], check=True)


def ensure(gguf: str | Path, requirement: str, python: str = sys.executable) -> bool:
    """Make sure ``python``'s llama.cpp server answers a completion on ``gguf``: when it crashes, rebuild it once from
    source without the cache and check again (a second crash is raised). Returns whether it was rebuilt."""
    try:
        smoke_check(gguf, python)
        return False
    except ServerCrashed as exc:
        print(f"llama.cpp server check: {str(exc).splitlines()[0]}\nrebuilding {requirement} from source without pip's "
              "cache (a wheel built for another CPU?); this compiles llama.cpp (~8 min on two cores)", file=sys.stderr)
    install_portable(python, requirement, reinstall=True)
    smoke_check(gguf, python)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """``install REQUIREMENT``: the portable build, before the project's own install finds it satisfied;
    ``check MODEL --requirement REQUIREMENT``: one completion, rebuilt once when it crashes (both from scripts/setup,
    with this environment's Python, before the project is installed: nothing here imports beyond the standard library)."""
    parser = argparse.ArgumentParser(prog="python -m connectors.models.llama_cpp_server", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="build the pin from source, never from pip's cache").add_argument("requirement")
    check = sub.add_parser("check", help="one real completion; rebuild once when it crashes")
    check.add_argument("model", help="a GGUF path or a model fixture name (connectors.models.fetch), e.g. smollm2-135m")
    check.add_argument("--requirement", required=True, help=f"the {DISTRIBUTION} pin to rebuild when the check crashes")
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            install_portable(sys.executable, args.requirement)
            return 0
        gguf = Path(args.model)
        if not gguf.exists():
            from connectors.models.fetch import fetch

            gguf = fetch(args.model)
        ensure(gguf, args.requirement)
    except (ServerCrashed, subprocess.CalledProcessError, OSError) as exc:
        print(f"llama.cpp server {args.command} failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
