"""The parts of a run manifest every job shares, and a stage timer that fills its timings."""
from __future__ import annotations

import time
from contextlib import contextmanager
from datetime import datetime, timezone

from pydantic import BaseModel

from jobs.common.cli.config import RunOptions, non_default_options
from jobs.common.runtime.ray_start import package_versions


class StageTimer:
    """``with timer("scan"):`` records seconds per stage, in order, for the manifest."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.start_time = datetime.now(timezone.utc)  # the run's id is made from this moment too
        self.started_at = self.start_time.isoformat()
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str):
        t = time.monotonic()
        try:
            yield
        finally:
            self.seconds[f"{stage}_s"] = round(time.monotonic() - t, 3)

    def wall(self) -> float:
        return round(time.monotonic() - self.started, 3)


def base_manifest(job: str, run_id: str, config: BaseModel, opts: RunOptions, config_hash: str, seed: int | None,
                  timer: StageTimer, ray_info: dict | None) -> dict:
    """What every manifest holds: job, config (with ``limit``; and the options that differ from the
    job's defaults), run options, seed, versions, Ray, times."""
    dumped = config.model_dump()
    return {
        "job": job,
        "run_id": run_id,
        "config": dumped,
        "config_non_default": non_default_options(config),
        "limit": dumped.get("limit"),
        "run_options": opts.model_dump(),
        "config_hash": config_hash,
        "seed": seed,
        "started_at": timer.started_at,
        "finished_at": datetime.now(timezone.utc).isoformat(),
        "packages": package_versions(),
        "ray": ray_info,
    }
