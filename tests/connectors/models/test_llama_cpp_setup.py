"""scripts/setup's llama.cpp server: built without pip's wheel cache and checked with one real completion, rebuilt
once when that completion crashes; and a server that dies mid-run is named as a crash with its exit status, at once.

The real llama-cpp-python takes ~8 min to compile, so the install runs here on a stand-in sdist of the same name and
version (an in-tree build backend, no compiler, no index: tests/servers/crashing_llama_server.py is its server).
Its build reads ``CMAKE_ARGS`` as llama.cpp's does: without ``-DGGML_NATIVE=OFF`` the wheel is "native" and its
server dies with SIGILL on the first completion, as the wheel from issue 34 did on this machine's VM."""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
import venv
from pathlib import Path

import pytest

from connectors.models.llama_cpp_server import LlamaCppServer, ServerCrashed, exit_status, smoke_check
from tests.servers import crashing_llama_server

REQUIREMENT = "llama-cpp-python[server]==0.3.36"
PORTABLE = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"  # scripts/setup's CMAKE_ARGS
ROOT = Path(__file__).resolve().parents[3]

BACKEND = '''\
"""An in-tree PEP 517 backend: a pure-Python wheel whose llama_cpp/_build.py records whether CMAKE_ARGS asked for
a native build (llama.cpp's default)."""
import base64, hashlib, os, zipfile

DIST_INFO = "llama_cpp_python-0.3.36.dist-info"


def _hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    native = "-DGGML_NATIVE=OFF" not in os.environ.get("CMAKE_ARGS", "")
    with open(os.path.join("llama_cpp", "server", "__main__.py"), "rb") as fh:
        server = fh.read()
    files = {"llama_cpp/__init__.py": b"", "llama_cpp/_build.py": f"NATIVE = {native}\\n".encode(),
             "llama_cpp/server/__init__.py": b"", "llama_cpp/server/__main__.py": server,
             DIST_INFO + "/METADATA": b"Metadata-Version: 2.1\\nName: llama-cpp-python\\nVersion: 0.3.36\\n"
                                      b"Provides-Extra: server\\n",
             DIST_INFO + "/WHEEL": b"Wheel-Version: 1.0\\nGenerator: stand-in\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
    record = "".join(f"{path},{_hash(data)},{len(data)}\\n" for path, data in files.items()) + DIST_INFO + "/RECORD,,\\n"
    name = "llama_cpp_python-0.3.36-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr(DIST_INFO + "/RECORD", record)
    return name
'''


def stand_in_sdist(index: Path) -> None:
    """llama_cpp_python-0.3.36.tar.gz in ``index`` (a --find-links folder)."""
    src = index.parent / "llama_cpp_python-0.3.36"
    (src / "llama_cpp" / "server").mkdir(parents=True)
    (src / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n')
    (src / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: llama-cpp-python\nVersion: 0.3.36\n")
    (src / "backend.py").write_text(BACKEND)
    (src / "llama_cpp" / "server" / "__main__.py").write_text(Path(crashing_llama_server.__file__).read_text())
    index.mkdir()
    with tarfile.open(index / "llama_cpp_python-0.3.36.tar.gz", "w:gz") as tar:
        tar.add(src, arcname=src.name)


@pytest.mark.slow
def test_setup_builds_the_portable_server_past_a_poisoned_wheel_cache_and_rebuilds_a_crashing_one(tmp_path):
    index, cache = tmp_path / "index", tmp_path / "pip-cache"
    stand_in_sdist(index)
    venv.create(tmp_path / "venv", with_pip=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index), "PIP_CACHE_DIR": str(cache),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONPATH": str(ROOT)}

    def pip(*args: str, cmake_args: str) -> None:
        subprocess.run([python, "-m", "pip", "install", "-q", *args], env={**env, "CMAKE_ARGS": cmake_args}, check=True)

    def setup_step(*args: str) -> subprocess.CompletedProcess:
        """What scripts/setup runs, with this environment's Python, before the project is installed."""
        return subprocess.run([python, "-m", "connectors.models.llama_cpp_server", *args], env={**env, "CMAKE_ARGS": PORTABLE},
                              cwd=ROOT, capture_output=True, text=True, timeout=300)

    # another install on the machine builds it natively: its wheel lands in pip's cache
    pip(REQUIREMENT, cmake_args="")
    subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "llama-cpp-python"], env=env, check=True)
    assert list(cache.rglob("llama_cpp_python-0.3.36-*.whl"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")  # the stand-in never reads it

    # a plain install, portable CMAKE_ARGS and all, takes the cached native wheel: the hazard is real
    pip(REQUIREMENT, cmake_args=PORTABLE)
    with pytest.raises(ServerCrashed, match=r"crashed: killed by SIGILL \(exit status 132\)"):
        smoke_check(gguf, python)
    # ...and the setup's check finds it by its crash and rebuilds it once, without the cache
    checked = setup_step("check", str(gguf), "--requirement", REQUIREMENT)
    assert checked.returncode == 0, checked.stderr
    assert "killed by SIGILL (exit status 132)" in checked.stderr and "rebuilding llama-cpp-python" in checked.stderr
    assert smoke_check(gguf, python) == " portable"

    # a fresh environment: setup's install step builds it from source, never from the poisoned cache
    subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "llama-cpp-python"], env=env, check=True)
    installed = setup_step("install", REQUIREMENT)
    assert installed.returncode == 0, installed.stderr
    assert smoke_check(gguf, python) == " portable"
    checked = setup_step("check", str(gguf), "--requirement", REQUIREMENT)
    assert checked.returncode == 0 and "rebuilding" not in checked.stderr, checked.stderr


def test_setup_installs_and_checks_the_server_with_its_portable_flags():
    setup = (ROOT / "scripts" / "setup").read_text()
    assert 'export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF' in setup  # the flags the stand-in's build reads
    assert "-m connectors.models.llama_cpp_server install" in setup and "-m connectors.models.llama_cpp_server check" in setup
    # the install step runs before the project's own install, which would otherwise take the cached wheel
    assert setup.index("llama_cpp_server install") < setup.index('pip install -q -e ".')


def test_exit_status_reads_as_a_shell_shows_it():
    assert exit_status(-4) == "killed by SIGILL (exit status 132)"
    assert exit_status(-9) == "killed by SIGKILL (exit status 137)"
    assert exit_status(1) == "exit status 1"


def test_a_server_that_dies_mid_run_is_a_crash_with_its_exit_status_within_seconds(tmp_path, monkeypatch):
    """The 4th completion kills the server (SIGILL): the request in flight is reset, its retry is refused, and every
    item after it fails at once with a refused connection, not minutes of retries; the server's launcher names the
    crash and its exit status."""
    from audit.mcqa.prompt import Decoding, Prompt
    from connectors.models.registry import build_backend

    monkeypatch.setenv("CRASH_AT_COMPLETION", "4")
    with LlamaCppServer(tmp_path / "model.gguf", launcher=(sys.executable, crashing_llama_server.__file__)) as server:
        server.check()  # alive
        backend = build_backend(f"openai:{server.base_url}#stand-in", {"concurrency": 1})  # default retries and backoff
        started = time.monotonic()
        answers = backend.generate([Prompt(f"question {i}", None, "") for i in range(20)], Decoding(max_new_tokens=1))
        elapsed = time.monotonic() - started
        assert [a.text for a in answers[:3]] == [" portable"] * 3
        assert all(a.text is None for a in answers[3:])
        assert all("connection refused: nothing listens at 127.0.0.1:" in a.error and "crashed" in a.error for a in answers[3:])
        assert elapsed < 10, f"{elapsed:.1f} s to fail 17 items against a dead server"
        assert backend.counters["retries"] <= 1  # the reset request's one retry; refused connections are not retried
        with pytest.raises(ServerCrashed, match=r"\(pid \d+, port \d+\) crashed: killed by SIGILL \(exit status 132\)"):
            server.check()
