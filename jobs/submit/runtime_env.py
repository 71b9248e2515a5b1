"""The Ray runtime environment that runs this checkout on a cluster, generated from ``pyproject.toml``.

Why generated: a requirements list copied by hand drifts from ``pyproject.toml`` (the copy in
``cluster/runtime_env.yaml`` once lacked numpy). Why never ``pip: [benchaudit]``: the package
index's ``benchaudit`` is an unrelated project; this one travels as the runtime env's
``working_dir`` (its packages ``audit/``, ``connectors/``, ``jobs/`` are importable from there on
every node, and the entrypoint is ``python -m jobs.cli``, the module behind the ``benchaudit``
command), and pip installs only its dependencies. Ray itself is left out of the pip list: the
cluster's image provides it (2.60.0, the version this project pins), and a second Ray inside the
job's environment would not match the cluster's.

    python -m jobs.submit.runtime_env --extras s3 > cluster/runtime_env.yaml     # regenerate
    python -m jobs.submit.runtime_env --extras s3 --check cluster/runtime_env.yaml  # CI: fail on drift
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# What plain ``ray job submit`` leaves out of a working dir of "." (Ray refuses one over 500 MiB); ``benchaudit submit``
# and the zip send an allow-list instead (``jobs.submit.package``), so a checkout's secrets never travel.
EXCLUDES = [".git", ".venv", "runs", "bench", "tests", "**/__pycache__", "*.egg-info", "*.whl", ".pytest_cache", ".ruff_cache", "dist"]
HEADER = """\
# Generated from pyproject.toml by `python -m jobs.submit.runtime_env --extras {extras}`; do not edit by hand
# (a test fails when this file and pyproject.toml disagree).
# The Ray runtime environment of a benchaudit job on a cluster whose image has Ray 2.60.0 but not benchaudit:
# this checkout is uploaded as the working directory (never `pip install benchaudit`: the package index's
# benchaudit is an unrelated project) and pip installs the dependencies.
#   benchaudit submit geo --address http://HEAD:8265 --runtime-env cluster/runtime_env.yaml --corpus ... --out s3://BUCKET/audits
#   ray job submit --address http://HEAD:8265 --runtime-env cluster/runtime_env.yaml -- python -m jobs.cli geo --address auto ...
"""


def _pyproject(root: Path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: pip's vendored TOML reader
        from pip._vendor import tomli as tomllib  # type: ignore[no-redef]  # the same reader under its 3.10 name
    path = root / "pyproject.toml"
    if not path.exists():
        raise FileNotFoundError(f"{path}: not a benchaudit checkout; give --runtime-env FILE instead")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def requirements(extras: Sequence[str] = (), root: Path = ROOT) -> list[str]:
    """The project's dependencies and those of ``extras``, Ray left out (the cluster provides it)."""
    project = _pyproject(root)["project"]
    optional = project.get("optional-dependencies", {})
    unknown = [e for e in extras if e not in optional]
    if unknown:
        raise ValueError(f"unknown extra(s) {unknown}; pyproject.toml defines {sorted(optional)}")
    out: list[str] = []
    for req in [*project["dependencies"], *(r for e in extras for r in optional[e])]:
        if _name(req) != "ray" and req not in out:
            out.append(req)
    return out


def runtime_env(extras: Sequence[str] = (), working_dir: str = ".", root: Path = ROOT) -> dict:
    """A runtime env dict for ``JobSubmissionClient.submit_job`` / ``ray job submit --runtime-env``."""
    return {"working_dir": working_dir, "excludes": list(EXCLUDES), "pip": requirements(extras, root),
            "env_vars": {"PYTHONUNBUFFERED": "1"}}


def render(extras: Sequence[str] = (), root: Path = ROOT) -> str:
    return HEADER.format(extras=",".join(extras) or "''") + yaml.safe_dump(runtime_env(extras, ".", root), sort_keys=False)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.submit.runtime_env", description=__doc__.split("\n\n")[0])
    parser.add_argument("--extras", default="", help="comma-separated extras of pyproject.toml to include (e.g. s3,models)")
    parser.add_argument("--check", metavar="FILE", help="exit 1 when FILE differs from what would be generated")
    args = parser.parse_args(argv)
    extras = [e for e in args.extras.split(",") if e]
    text = render(extras)
    if args.check:
        if Path(args.check).read_text(encoding="utf-8") != text:
            print(f"{args.check} is out of date; regenerate: python -m jobs.submit.runtime_env --extras {args.extras} "
                  f"> {args.check}", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
