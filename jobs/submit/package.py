"""This checkout as one zip a cluster can fetch: the ``working_dir`` of a RayJob or RayCronJob.

A KubeRay RayJob cannot upload a laptop's folder; its runtime env names a remote ``working_dir``
(``s3://``, ``gs://``, ``https://`` or ``file://``) that Ray downloads and unpacks on every node.
Ray unpacks such a zip by dropping its single top-level folder, so everything goes under
``benchaudit/``. The name carries the version and the code hash, so a new checkout never
overwrites the zip a running job reads.

What travels is an allow-list, never "the checkout less some folders": a checkout also holds
``.env``, ``.aws/credentials``, ``.netrc``, ``secrets.json`` or local data, and a working dir is
stored in the cluster's GCS (or a bucket) where every user of the cluster can read it. ``files``
is the one list, for this zip and for the copy ``benchaudit submit`` uploads (``stage``).

    python -m jobs.submit.package --to dist/     # prints dist/benchaudit-0.1.0-<hash>.zip
    aws s3 cp dist/benchaudit-0.1.0-<hash>.zip s3://BUCKET/benchaudit/    # then name it in the manifest
"""
from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import zipfile
from collections.abc import Iterator, Sequence
from fnmatch import fnmatch
from importlib import metadata
from pathlib import Path

from jobs.submit.runtime_env import ROOT

TOP = "benchaudit"
# What a job needs on the cluster: its packages (their code and the data files they ship: lexicons,
# samples, templates), the cluster manifests and pyproject.toml. Nothing else in the checkout travels.
SHIPPED = ("audit", "connectors", "jobs", "cluster", "pyproject.toml")
# Never, even inside those: hidden files and folders (.env, .aws/, .netrc), caches and build leftovers.
NEVER = (".*", "__pycache__", "*.pyc", "*.egg-info")


def _shipped(rel: Path) -> bool:
    return rel.parts[0] in SHIPPED and not any(fnmatch(part, pattern) for part in rel.parts for pattern in NEVER)


def files(root: Path = ROOT) -> Iterator[Path]:
    """The checkout's files that travel to the cluster (paths relative to ``root``), in a stable order."""
    for name in SHIPPED:
        top = root / name
        for path in sorted([top, *top.rglob("*")] if top.is_dir() else [top]):
            rel = path.relative_to(root)
            if path.is_file() and not path.is_symlink() and _shipped(rel):
                yield rel


def stage(to: str | Path, root: Path = ROOT) -> Path:
    """A copy of what travels, under ``to``: the working dir ``benchaudit submit`` uploads."""
    out = Path(to)
    for rel in files(root):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, out / rel)
    return out


def build(to: str | Path, root: Path = ROOT) -> Path:
    """Write ``<to>/benchaudit-<version>-<hash>.zip``; the same checkout gives the same name and bytes."""
    chosen = list(files(root))
    digest = hashlib.sha256()
    for rel in chosen:
        digest.update(rel.as_posix().encode() + b"\0" + hashlib.sha256((root / rel).read_bytes()).digest())
    try:
        version = metadata.version("benchaudit")
    except metadata.PackageNotFoundError:
        version = "0"
    out = Path(to) / f"benchaudit-{version}-{digest.hexdigest()[:12]}.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel in chosen:
            info = zipfile.ZipInfo(f"{TOP}/{rel.as_posix()}", date_time=(1980, 1, 1, 0, 0, 0))  # no file times: same bytes
            info.external_attr = ((root / rel).stat().st_mode & 0o777) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, (root / rel).read_bytes())
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.submit.package", description=__doc__.split("\n\n")[0])
    parser.add_argument("--to", default="dist", help="folder to write the zip into (default: dist)")
    print(build(parser.parse_args(argv).to))
    return 0


if __name__ == "__main__":
    sys.exit(main())
