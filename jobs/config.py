"""Configuration shared by every job: validated once at the edge, then passed down typed."""
from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class RunOptions(BaseModel):
    """Where a job writes, how it runs on Ray, and what to do with a bad shard."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    out: str = Field("runs", description="root of run directories: <out>/<job>/<run-id>/ (local path or fsspec URL)")
    run_id: str | None = Field(None, description="run id; default: UTC time + config hash")
    resume: bool = Field(False, description="continue the unfinished run with this --run-id (or the latest one)")
    address: str | None = Field(None, description="Ray address: none starts a local Ray; 'auto' or 'ray://host:10001' joins a cluster")
    num_cpus: int | None = Field(None, ge=1, description="CPUs for a local Ray (default: all)")
    on_error: Literal["fail", "skip"] = Field("fail", description="an unreadable shard stops the job, or is skipped and counted")


def config_hash(payload: dict) -> str:
    """Hash of the result-relevant configuration (run options excluded)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
