"""``benchaudit ls [WHAT]``: what can be chosen (options come from LsConfig)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from jobs.common.cli.config import Flag, JobConfig
from jobs.common.cli.flags import Command

LIST = "list"
Section = Literal["all", "jobs", "presets", "perturbations", "backends", "profiles", "models"]


class LsConfig(JobConfig):
    """Which names to list, and how."""

    what: Annotated[Section, Flag(LIST, positional=True)] = Field(
        "all", description="jobs, presets (benchmark and corpus), perturbations, backends, profiles (geo lexicon) or models "
                           "(model fixtures benchaudit models fetch installs)")
    as_json: Annotated[bool, Flag(LIST, name="--json")] = Field(False, description="print JSON instead of tables")


COMMAND = Command.registered(
    "ls",
    description="List the names every option that takes a name accepts: jobs, benchmark and corpus presets, landscape "
                "perturbations, model backends and their spec forms, geo lexicon profiles, and model fixtures.",
    epilog="examples:\n  benchaudit ls presets\n  benchaudit ls perturbations --json",
    config=LsConfig,
    run="jobs.ls.run:run",
    run_options=("log_level",),
    outputs=(),
)
