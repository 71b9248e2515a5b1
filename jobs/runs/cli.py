"""``benchaudit runs list|show|compare``: the audit history of a run root."""
from __future__ import annotations

from jobs.common.cli.flags import Command
from jobs.runs.config import RunsCompareConfig, RunsListConfig, RunsShowConfig

_STORE = ("out", "log_level")

COMMAND = Command.registered(
    "runs",
    description="Every job records its runs in the run store of its run root (<out>/_runs): status (complete, incomplete, "
                "failed), inputs and their fingerprints, config hash, code version, times and headline metrics.\n\n"
                "  benchaudit runs list --out s3://bucket/audits --job geo\n"
                "  benchaudit runs show --out runs --run-id 20261201T0300\n"
                "  benchaudit runs compare --out runs --run-id 20261208T0300 --json",
    subcommands=(
        Command(name="list", help="list recorded runs, oldest first", config=RunsListConfig,
                run="jobs.runs.run:list_command", run_options=_STORE, outputs=()),
        Command(name="show", help="one run: status, paths, inputs, code version, headline metrics", config=RunsShowConfig,
                run="jobs.runs.run:show_command", run_options=_STORE, outputs=()),
        Command(name="compare", help="headline metrics of two runs side by side: deltas with intervals",
                config=RunsCompareConfig, run="jobs.runs.run:compare_command", run_options=_STORE, outputs=()),
    ),
)
