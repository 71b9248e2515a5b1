"""``benchaudit runs list|show|compare`` options (flags are generated)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from jobs.common.cli.config import Flag, JobConfig

HISTORY = "history"


class _Output(JobConfig):
    as_json: Annotated[bool, Flag(HISTORY, name="--json")] = Field(
        False, description="print JSON for scripts instead of a table for people")


class RunsListConfig(_Output):
    """Which recorded runs to list."""

    job: Annotated[str | None, Flag(HISTORY, default_text="every job")] = Field(None, description="only runs of this job")
    status: Annotated[Literal["complete", "incomplete", "failed"] | None, Flag(HISTORY, default_text="any")] = Field(
        None, description="only runs with this status (incomplete: running, interrupted, or resumable with --resume)")


class RunsShowConfig(_Output):
    """One run: --run-id (a unique prefix is enough), else the latest."""

    # A lookup, not the run id a job makes up for a new run: its own field, with its own default.
    run_id: Annotated[str | None, Flag(HISTORY, metavar="RUN_ID", default_text="the latest run")] = Field(
        None, description="the run to show (a unique prefix of its id is enough)")


class RunsCompareConfig(_Output):
    """Two runs of one job: --run-id and the run to compare it with."""

    run_id: Annotated[str | None, Flag(HISTORY, metavar="RUN_ID", default_text="the latest complete run")] = Field(
        None, description="the run to compare (a unique prefix of its id is enough)")
    base: Annotated[str | None, Flag(HISTORY, metavar="RUN_ID", default_text="the previous complete run of the same job "
                                                                          "with the same options")] = Field(
        None, description="the run to compare --run-id against; one with other options is compared with a warning "
                          "naming the options that differ")
