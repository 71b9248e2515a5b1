"""``benchaudit conventions``: the command (options come from ConventionsConfig)."""
from __future__ import annotations

from jobs.common.cli.flags import Command
from jobs.conventions.config import ConventionsConfig

COMMAND = Command.registered(
    "conventions",
    description="Find the locale conventions benchmark text assumes (spellings, numeric and written dates, 12/24-hour "
                "times, US customary vs metric units): coverage, American share, skew and the share without spelling "
                "per benchmark, with item-bootstrap intervals. With no input, audits the shipped TruthfulQA and DROP "
                "samples.",
    config=ConventionsConfig,
    run="jobs.conventions.run:run",
    outputs=("report.html", "summary.json", "data/", "manifest.json"),
)
