"""GGUF weights for the hf backend: what a file holds, and a de-quantised copy made once per file.

transformers loads a GGUF by de-quantising every tensor and converting its embedded tokenizer,
about a minute for a 135M-parameter model on two cores. That work depends only on the file's
bytes and on the converting transformers, so it is done once and saved as a plain transformers
folder (safetensors, config, tokenizer with its chat template) under
``<model cache>/dequantised/<gguf sha256[:32]>-tf<transformers version>/``; later loads read that
folder in seconds. Its ``source.json`` also keeps what the GGUF header says (quant type, tensor
types, chat template), since parsing a header with a 49k-token vocabulary takes seconds too. A
folder becomes visible only by a rename after its ``source.json`` is written, so a crashed or
concurrent conversion never leaves a half folder that looks finished.
"""
from __future__ import annotations

import copy
import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from connectors.models.weights import file_sha256, model_cache_root

SUFFIX = ".gguf"


class GGUFError(ValueError):
    """A path that should name one GGUF file and does not."""


@dataclass(frozen=True)
class GGUFInfo:
    """What the file says about itself: ``quant`` is its declared file type (``Q4_1`` for
    ``MOSTLY_Q4_1``); ``tensor_types`` counts tensors per storage type (norms stay F32)."""

    path: Path
    sha256: str
    architecture: str
    quant: str
    tensor_types: dict[str, int]
    chat_template: str | None

    def settings(self) -> dict[str, Any]:
        return {"gguf_file": self.path.name, "gguf_quant": self.quant, "gguf_tensor_types": self.tensor_types,
                "gguf_architecture": self.architecture}

    def header(self) -> dict[str, Any]:
        """What ``source.json`` keeps of the header (the path and hash are the caller's)."""
        return {"architecture": self.architecture, "quant": self.quant, "tensor_types": self.tensor_types,
                "chat_template": self.chat_template}


def find_gguf(path: str | Path) -> Path | None:
    """The GGUF a model path names: the file itself, or the one ``.gguf`` in a folder without a
    ``config.json`` (a folder with one is a transformers checkpoint). None when it names neither."""
    path = Path(path)
    if path.is_file():
        return path if path.suffix == SUFFIX else None
    if not path.is_dir() or (path / "config.json").is_file():
        return None
    found = sorted(p for p in path.iterdir() if p.suffix == SUFFIX and p.is_file())
    if len(found) > 1:
        raise GGUFError(f"{path} holds {len(found)} GGUF files ({', '.join(p.name for p in found)}); name one of them")
    return found[0] if found else None


def transformers_source(model: str) -> tuple[GGUFInfo | None, str]:
    """(the GGUF ``model`` names or None, what transformers loads for it: the de-quantised copy of a
    GGUF, else ``model`` itself, a folder or hub id)."""
    path = Path(model)
    found = find_gguf(path) if path.exists() else None
    if found is None:
        return None, model
    info, folder = prepare(found)
    return info, str(folder)


def prepare(path: Path, cache_root: Path | None = None) -> tuple[GGUFInfo, Path]:
    """(what the GGUF at ``path`` holds, its de-quantised transformers folder), converted first if not cached."""
    sha256 = file_sha256(path)
    folder = dequantised_dir(sha256, cache_root)
    source = folder / "source.json"
    if source.is_file():
        return GGUFInfo(path=path, sha256=sha256, **json.loads(source.read_text())["header"]), folder
    info = read_info(path, sha256)
    return info, dequantise(info, folder)


def is_prepared(path: Path, cache_root: Path | None = None) -> bool:
    """Whether ``prepare(path)`` would find its de-quantised copy ready (and so take seconds, not a minute)."""
    return (dequantised_dir(file_sha256(path), cache_root) / "source.json").is_file()


def read_info(path: Path, sha256: str) -> GGUFInfo:
    """Header fields and tensor types, read with the ``gguf`` package (no tensor data is loaded)."""
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except (ValueError, OSError, IndexError, KeyError) as exc:  # the reader's own errors on a short or foreign file
        raise GGUFError(f"{path}: not a readable GGUF file ({exc})") from exc

    def field(name: str) -> Any:
        f = reader.fields.get(name)
        return None if f is None else f.contents()

    file_type = field("general.file_type")
    try:
        quant = gguf.LlamaFileType(file_type).name.removeprefix("MOSTLY_") if file_type is not None else "unknown"
    except ValueError:
        quant = f"file_type {file_type}"
    types = Counter(t.tensor_type.name for t in reader.tensors)
    return GGUFInfo(path=path, sha256=sha256, architecture=str(field("general.architecture")),
                    quant=quant, tensor_types=dict(sorted(types.items())), chat_template=field("tokenizer.chat_template"))


def dequantised_dir(sha256: str, cache_root: Path | None = None) -> Path:
    """Keyed by the file's content and the converting transformers (read without importing it)."""
    return (cache_root or model_cache_root()) / "dequantised" / f"{sha256[:32]}-tf{version('transformers')}"


def dequantise(info: GGUFInfo, final: Path) -> Path:
    """Convert ``info``'s file into the transformers folder ``final``."""
    import torch
    import transformers

    tmp = final.with_name(f".tmp-{final.name}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        where, name = str(info.path.parent), info.path.name
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(where, gguf_file=name)
            model = transformers.AutoModelForCausalLM.from_pretrained(where, gguf_file=name, dtype=torch.float32)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise GGUFError(f"{info.path}: transformers cannot load this GGUF ({type(exc).__name__}: {exc})") from exc
        _plain_copy(model, transformers, torch).save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        source = {"gguf_sha256": info.sha256, "gguf_file": info.path.name, "header": info.header(),
                  "transformers": transformers.__version__, "dtype": "float32"}
        (tmp / "source.json").write_text(json.dumps(source, indent=1, sort_keys=True))
        try:
            tmp.rename(final)
        except OSError:  # another process finished first: its folder holds the same conversion
            if not (final / "source.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _plain_copy(model: Any, transformers: Any, torch: Any) -> Any:
    """The same weights in a model without GGUF quantisation state (recent transformers refuse to
    ``save_pretrained`` a model loaded from a GGUF, even fully de-quantised)."""
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    with torch.device("meta"):
        plain = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(model.state_dict(), assign=True, strict=True)
    plain.tie_weights()
    plain.generation_config = model.generation_config
    return plain
