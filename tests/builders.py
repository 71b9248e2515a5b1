"""Small builders of real input files for tests (no mocks: real tar shards, real Parquet)."""
from __future__ import annotations

import io
import json
import tarfile


def write_tar(path, samples: list[tuple[str, bytes | None, dict | None]]) -> None:
    with tarfile.open(path, "w") as tar:
        for key, txt, meta in samples:
            for ext, payload in (("jpg", b"\xff\xd8fake"), ("txt", txt), ("json", None if meta is None else json.dumps(meta).encode())):
                if payload is None:
                    continue
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
