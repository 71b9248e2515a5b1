"""Whether a model a run names can be loaded at all, checked before anything starts.

A hub id (``hf:ORG/NAME``, ``vllm:ORG/NAME``) is loaded by each model actor, after Ray has started
and the prompts are built: on a machine that cannot reach the Hugging Face hub that failed after
71 s. Here, in the driver and in about a second: a local path, a model fixture or a hub id already
in the local cache passes; otherwise the hub is asked once for the model's metadata (weights are
never downloaded here). An endpoint (``openai:``) is not called.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from connectors.models.base import BackendError
from connectors.models.spec import parse_model_spec

HUB_TIMEOUT_S = 10.0


class ModelUnavailable(BackendError):
    """A hub model that cannot be had: ``resumable`` when the hub did not answer (a rerun may pass once
    the network is back), not when it answered that the model or revision does not exist."""

    def __init__(self, message: str, resumable: bool):
        super().__init__(message)
        self.resumable = resumable


def _hub_id(model: str) -> bool:
    from connectors.models.fetch import FIXTURES

    local = model.startswith((os.sep, ".", "~")) or os.path.exists(os.path.expanduser(model))
    return not local and model not in FIXTURES


def check_available(spec: str, settings: Mapping[str, Any] | None = None) -> None:
    """Raise ``ModelUnavailable`` naming the spec when a hub model is neither cached nor on a hub that answers."""
    parsed = parse_model_spec(spec)
    if parsed.backend not in ("hf", "vllm") or not _hub_id(parsed.model):
        return
    try:
        import huggingface_hub
        from huggingface_hub import errors
    except ImportError:  # no model libraries: the backend's own error names the extra to install
        return
    revision = (settings or {}).get("revision")
    cached = huggingface_hub.try_to_load_from_cache(parsed.model, "config.json", revision=revision)
    if isinstance(cached, str):
        return
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        raise ModelUnavailable(f"{spec}: not in the local Hugging Face cache ({huggingface_hub.constants.HF_HUB_CACHE}) "
                               "and HF_HUB_OFFLINE is set; download it first (hf download "
                               f"{parsed.model}) or give a local path", resumable=False)
    try:
        huggingface_hub.HfApi().model_info(parsed.model, revision=revision, timeout=HUB_TIMEOUT_S)
    except (errors.RepositoryNotFoundError, errors.GatedRepoError) as exc:
        gated = isinstance(exc, errors.GatedRepoError)
        raise ModelUnavailable(f"{spec}: the Hugging Face hub {'gates this model' if gated else 'has no such model'} "
                               "(a private or gated one needs HF_TOKEN)", resumable=False) from None
    except errors.RevisionNotFoundError:
        raise ModelUnavailable(f"{spec}: the Hugging Face hub has no revision {revision!r} of it", resumable=False) from None
    except Exception as exc:  # noqa: BLE001 -- no answer at all: refused, timed out, no DNS, a proxy's error page
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ModelUnavailable(f"{spec}: cannot reach the Hugging Face hub at {huggingface_hub.constants.ENDPOINT} to "
                               f"load it ({reason}); download it where the hub answers (hf download {parsed.model}) "
                               "or give a local path", resumable=True) from None
