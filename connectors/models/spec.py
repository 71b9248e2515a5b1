"""Model specs as strings: ``hf:Qwen/Qwen2.5-7B-Instruct``, ``hf:/models/llama-3-8b``,
``vllm:/models/llama-3-8b``, ``openai:http://host:8000/v1#served-model-name``.

One parser, so a CLI flag, a YAML config and a manifest all name a model the same way. The
string holds only *which* model; how it runs (dtype, batch size, endpoint kind, ...) is in the
backend's settings, and a key for an endpoint never appears in either.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

# backend -> (the spec's form, what it runs); ``benchaudit ls backends`` prints these
BACKEND_FORMS = {
    "hf": ("hf:<hub id, folder, .gguf file or fetched fixture name>", "transformers on CPU or one GPU per actor"),
    "vllm": ("vllm:<hub id or folder>", "vLLM's in-process engine (GPU machines; scripts/setup vllm)"),
    "openai": ("openai:<http(s) base URL>#<served model>", "any OpenAI-compatible endpoint: vLLM, SGLang, llama.cpp, hosted APIs"),
}
BACKENDS = tuple(BACKEND_FORMS)


class ModelSpecError(ValueError):
    """A model spec string that cannot be parsed; the message quotes it and the expected forms."""


@dataclass(frozen=True)
class ModelSpec:
    """``backend`` (hf, vllm, openai), ``model`` (hub id, local path, or the served model name)
    and, for openai, the endpoint's ``base_url`` (up to and including ``/v1``)."""

    backend: str
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        if self.backend == "openai":
            return f"openai:{self.base_url}#{self.model}"
        return f"{self.backend}:{self.model}"


_FORMS = "hf:<hub id or path>, vllm:<hub id or path>, openai:<http(s) base URL>#<model>"


def parse_model_spec(text: str | ModelSpec) -> ModelSpec:
    """Parse a spec string (a ``ModelSpec`` passes through). A key written into an openai URL's user info
    (``http://user:KEY@host``) is refused, and no message quotes it."""
    if isinstance(text, ModelSpec):
        return text
    backend, sep, rest = text.strip().partition(":")
    if not sep or backend not in BACKENDS:
        raise ModelSpecError(f"model spec {shown_spec(text)!r}: expected one of {_FORMS}")
    if not rest:
        raise ModelSpecError(f"model spec {text!r}: no model after {backend!r}:")
    if backend != "openai":
        return ModelSpec(backend, rest)
    url, sep, model = rest.partition("#")
    parts = urlsplit(url)
    if "@" in url:  # user info (``//user:KEY@host``), with or without a scheme
        raise ModelSpecError(f"model spec {shown_spec(text)!r}: credentials do not belong in the URL; "
                             "put the key in the environment variable named by the api_key_env setting")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelSpecError(f"model spec {shown_spec(text)!r}: the openai backend needs an http(s) base URL, e.g. "
                             "openai:http://localhost:8000/v1#my-model")
    if not sep or not model:
        raise ModelSpecError(f"model spec {text!r}: name the served model after '#', e.g. {url}#my-model")
    return ModelSpec("openai", model, url.rstrip("/"))


def shown_spec(text: str) -> str:
    """A spec as a message may quote it: whatever stands before an ``@`` back to a slash (a URL's user
    info, ``//user:KEY@``) redacted."""
    from connectors.io.http_guard import redact  # not at module level: the CLI parsers import this module

    return redact(text, re.findall(r"([^/@\s]+)@", text))
