"""Local model files: where benchaudit keeps what it derives from them, and their content hashes.

The model cache (``$BENCHAUDIT_MODEL_CACHE``, default ``~/.cache/benchaudit/models``) lives
outside any checkout: fetched fixtures, de-quantised GGUF weights and the hash memo go there.

A revision that is only a file's name and size cannot tell a fine-tuned checkpoint saved over
the old one from the old one, so answers are keyed by the **bytes** of the weights. Hashing a
16 GB checkpoint on every run would cost minutes, so ``file_sha256`` remembers each file's hash
in a small JSON sidecar under ``<cache>/hashes/`` (the model folder itself may be read-only),
keyed by the file's real path and trusted only while its (size, mtime_ns, ctime_ns, inode) are
unchanged. As in git's racy-clean rule, a hash started less than ``RACY_S`` seconds after the
file's last write is not trusted later (a same-size rewrite inside one timestamp tick would
leave every stamp equal); such a file is simply hashed again.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import BinaryIO

CACHE_ENV = "BENCHAUDIT_MODEL_CACHE"
RACY_S = 2.0
_CHUNK = 1 << 22


def model_cache_root() -> Path:
    """The model cache directory (not created here)."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "benchaudit" / "models"


def stream_sha256(fh: BinaryIO, out: BinaryIO | None = None) -> str:
    """sha256 of a stream read to its end, copying it to ``out`` on the way when given."""
    h = hashlib.sha256()
    for chunk in iter(lambda: fh.read(_CHUNK), b""):
        h.update(chunk)
        if out is not None:
            out.write(chunk)
    return h.hexdigest()


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def file_sha256(path: str | Path, memo_root: Path | None = None) -> str:
    """The sha256 of a file's bytes, read from the memo while the file's stamps are unchanged."""
    real = Path(path).resolve()
    memo_dir = (memo_root or model_cache_root()) / "hashes"
    memo = memo_dir / f"{hashlib.sha256(str(real).encode()).hexdigest()[:32]}.json"
    st = real.stat()
    try:
        saved = json.loads(memo.read_text())
        if saved["path"] == str(real) and saved["stamp"] == _stamp(st) \
                and saved["hashed_at_ns"] - st.st_mtime_ns >= RACY_S * 1e9:
            return saved["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    started = time.time_ns()
    with open(real, "rb") as fh:
        digest = stream_sha256(fh)
    if _stamp(real.stat()) != _stamp(st):  # written while we read: do not remember a hash of a moving target
        return digest
    try:
        memo_dir.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"path": str(real), "stamp": _stamp(st), "hashed_at_ns": started, "sha256": digest}))
        os.replace(tmp, memo)
    except OSError:  # a read-only cache only costs the next run a rehash
        pass
    return digest


# Trainer checkpoints hold these next to the weights; they never change what the model answers.
_TRAINING_STATE = ("optimizer.pt", "scheduler.pt", "scaler.pt", "training_args.bin", "rng_state")
_DECIDING = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".json", ".txt", ".model", ".jinja", ".tiktoken")
_SMALL = 1 << 20


def deciding_files(folder: Path) -> list[Path]:
    """The files of a local checkpoint folder that decide its answers: weights, config, generation
    config, tokenizer files and chat templates (top level, training state left out)."""
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.suffix in _DECIDING and not p.name.startswith(_TRAINING_STATE))


def content_digests(files: list[Path]) -> dict[str, str]:
    """File name -> sha256 of its bytes (big files through the ``file_sha256`` memo)."""
    out = {}
    for f in files:
        out[f.name] = file_sha256(f) if f.stat().st_size > _SMALL else hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def local_revision(digests: dict[str, str]) -> str:
    """A revision for local files: a hash of every deciding file's name and content hash."""
    h = hashlib.sha256()
    for name in sorted(digests):
        h.update(f"{name}\t{digests[name]}\n".encode())
    return "local:" + h.hexdigest()[:16]
