"""``benchaudit report index``: the index of a run root (also written after every run)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from jobs.common.cli.config import Flag, JobConfig, RunOptions
from jobs.common.cli.flags import Command

INDEX = "index"


class IndexConfig(JobConfig):
    """Where the index goes (the run root is --out, as for every job)."""

    to: Annotated[str | None, Flag(INDEX, metavar="FILE", default_text="<out>/index.html")] = Field(
        None, description="write the index page to this file instead")


def run_index(cfg: IndexConfig, opts: RunOptions) -> str:
    from jobs.common.pages.index import write_index

    target, n = write_index(opts.out, cfg.to)
    return f"{n:,} run(s) of {opts.out} → {target}"


COMMAND = Command.registered(
    "report",
    subcommands=(
        Command(name="index", help="index.html of a run root: runs by job, headline metrics, trends",
                description="List every run under --out (the run root) by job with status, time, inputs and headline "
                            "metrics, with a trend plot per job and headline metric across runs (one line per input). "
                            "Every job also rewrites it after each run.",
                config=IndexConfig, run="jobs.report.cli:run_index", run_options=("out", "log_level"), outputs=()),
    ),
)
