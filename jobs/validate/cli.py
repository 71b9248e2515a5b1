"""``benchaudit validate FILE``: check an input file before a run (options come from ValidateConfig)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from jobs.common.cli.config import Flag, JobConfig
from jobs.common.cli.flags import Command

CHECK = "check"


class ValidateConfig(JobConfig):
    """The file to check, what kind it is, and whether the files it names are opened."""

    file: Annotated[str, Flag(CHECK, metavar="FILE", positional=True, default_text="required")] = Field(
        description="a corpora, benchmarks or models YAML list, or a re-audit plan")
    kind: Annotated[Literal["auto", "corpora", "benchmarks", "models", "plan"], Flag(CHECK)] = Field(
        "auto", description="what the file holds (auto: a mapping with 'audits' is a plan; a list is told by its entries)")
    check_files: Annotated[bool, Flag(CHECK)] = Field(
        True, description="also list the files each entry names and check their columns (--no-check-files: the YAML only)")


COMMAND = Command.registered(
    "validate",
    description="Check a corpora, benchmarks or models YAML list, or a re-audit plan, with the same config models a run "
                "uses: every entry is reported, valid or with its problem; with --check-files (the default) the files "
                "each entry names are listed and their mapped columns checked, as a run does before any work. An "
                "endpoint is never called and no model is loaded. Exit code 0 when every entry is valid, 2 otherwise.",
    epilog="examples:\n  benchaudit validate corpora.yaml\n  benchaudit validate cluster/schedule/reaudit-plan.yaml --no-check-files",
    config=ValidateConfig,
    run="jobs.validate.run:run",
    run_options=("log_level",),
    outputs=(),
)
