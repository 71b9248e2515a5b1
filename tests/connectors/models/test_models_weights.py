"""Content hashes of local model files: the memo is trusted only while a file is untouched."""
from __future__ import annotations

import json
import os

from connectors.models.weights import content_digests, deciding_files, file_sha256, local_revision


def _age(path, seconds=60):
    """Put a file's mtime in the past, as for a checkpoint saved a while before the run."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def _memo(root):
    (memo,) = (root / "hashes").glob("*.json")
    return memo


def test_an_untouched_file_is_read_from_the_memo_and_a_rewrite_is_hashed_again(tmp_path):
    import hashlib

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"old weights " * 1000)
    _age(weights)
    assert file_sha256(weights, tmp_path) == hashlib.sha256(weights.read_bytes()).hexdigest()
    # the memo is what answers while the stamps hold: a planted value comes back unread
    memo = _memo(tmp_path)
    saved = json.loads(memo.read_text())
    memo.write_text(json.dumps({**saved, "sha256": "planted"}))
    assert file_sha256(weights, tmp_path) == "planted"
    # the same size rewritten in place, its old mtime restored: the ctime still tells, so the bytes are hashed
    st = weights.stat()
    with open(weights, "r+b") as fh:
        fh.write(b"new weights " * 1000)
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert weights.stat().st_size == st.st_size and weights.stat().st_ino == st.st_ino
    assert file_sha256(weights, tmp_path) == hashlib.sha256(b"new weights " * 1000).hexdigest()


def test_a_hash_taken_right_after_a_write_is_not_trusted_later(tmp_path):
    import hashlib

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"fresh" * 100)  # hashed within the same moment it was written (a timestamp tick may hide a rewrite)
    real = file_sha256(weights, tmp_path)
    memo = _memo(tmp_path)
    memo.write_text(json.dumps({**json.loads(memo.read_text()), "sha256": "planted"}))
    assert file_sha256(weights, tmp_path) == real == hashlib.sha256(b"fresh" * 100).hexdigest()


def test_the_revision_covers_weights_tokenizer_and_template_but_not_training_state(tmp_path):
    for name, text in {"config.json": "{}", "model.safetensors": "w", "tokenizer.json": "t", "tokenizer_config.json": "{}",
                       "chat_template.jinja": "{{ m }}", "optimizer.pt": "o", "rng_state_0.pth": "r", "README.md": "r"}.items():
        (tmp_path / name).write_text(text)
    files = [p.name for p in deciding_files(tmp_path)]
    assert files == ["chat_template.jinja", "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    before = local_revision(content_digests(deciding_files(tmp_path)))
    (tmp_path / "optimizer.pt").write_text("o2")
    assert local_revision(content_digests(deciding_files(tmp_path))) == before
    for name in ("chat_template.jinja", "tokenizer.json", "model.safetensors"):
        (tmp_path / name).write_text("changed")
        after = local_revision(content_digests(deciding_files(tmp_path)))
        assert after != before and after.startswith("local:")
        before = after
