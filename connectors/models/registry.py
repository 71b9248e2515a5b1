"""Spec string -> backend (a mapping name -> class, as lm-eval's ``models/__init__.py``).

``open_backend`` is what a Ray actor's ``__init__`` calls: it builds the backend in-process (no
pickled model crosses the cluster) and, given a cache root, puts the response cache in front.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connectors.models.base import ModelBackend
from connectors.models.spec import ModelSpec, parse_model_spec


def _hf(spec: ModelSpec, settings: Mapping[str, Any] | None) -> ModelBackend:
    from connectors.models.hf import HFBackend

    return HFBackend(spec, dict(settings or {}))


def _vllm(spec: ModelSpec, settings: Mapping[str, Any] | None) -> ModelBackend:
    from connectors.models.vllm_engine import VLLMBackend

    return VLLMBackend(spec, dict(settings or {}))


def _openai(spec: ModelSpec, settings: Mapping[str, Any] | None) -> ModelBackend:
    from connectors.models.openai_compat import OpenAIBackend

    return OpenAIBackend(spec, dict(settings or {}))


BACKEND_FACTORIES = {"hf": _hf, "vllm": _vllm, "openai": _openai}
# the frozen settings class of each backend (``module:class``), to check settings without building a backend
SETTINGS_CLASSES = {"hf": "connectors.models.hf:HFSettings", "vllm": "connectors.models.vllm_engine:VLLMSettings",
                    "openai": "connectors.models.openai_compat:OpenAISettings"}


def check_settings(spec: str | ModelSpec, settings: Mapping[str, Any]) -> None:
    """Raise as building the backend would on an unknown or invalid setting, without loading any model."""
    import importlib

    from connectors.models.base import settings_from

    parsed = parse_model_spec(spec)
    module, _, name = SETTINGS_CLASSES[parsed.backend].partition(":")
    try:
        settings_from(getattr(importlib.import_module(module), name), settings, parsed)
    except TypeError as exc:
        raise ValueError(f"{parsed}: {exc}") from None


def build_backend(spec: str | ModelSpec, settings: Mapping[str, Any] | None = None) -> ModelBackend:
    """The backend a spec names, with its settings (unknown keys are an error naming the spec)."""
    parsed = parse_model_spec(spec)
    return BACKEND_FACTORIES[parsed.backend](parsed, settings)


def open_backend(spec: str | ModelSpec, settings: Mapping[str, Any] | None = None,
                 cache_root: str | None = None) -> ModelBackend:
    """``build_backend`` behind a ``ResponseCache`` under ``cache_root`` (none when None)."""
    backend = build_backend(spec, settings)
    if cache_root is None:
        return backend
    from connectors.models.cache import CachedBackend

    return CachedBackend(backend, cache_root)
