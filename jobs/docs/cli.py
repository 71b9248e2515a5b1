"""``benchaudit docs`` and ``benchaudit docs template``: the commands (options come from the configs)."""
from __future__ import annotations

from jobs.common.cli.config import EXPORT_OPTIONS
from jobs.common.cli.flags import Command
from jobs.docs.config import DocsConfig
from jobs.docs.template import TemplateConfig

COMMAND = Command.registered(
    "docs",
    description="Score Hugging Face dataset cards (README.md with YAML front matter), Croissant JSON-LD (responsible-AI "
                "fields included) and Markdown datasheets / data statements on six criteria (0 absent, 1 mentioned, "
                "2 operationalized) with the evidence behind each proposed score; with reviewer sheets, Cohen's kappa "
                "per criterion and overall.",
    config=DocsConfig,
    run="jobs.docs.run:run",
    outputs=("report.html", "summary.json", "data/", "proposed_scores.csv", "manifest.json"),
    subcommands=(
        Command(name="template", help="nine-field documentation template pre-filled from audit runs",
                description="Write the nine-field user-centric documentation template for a benchmark, pre-filled with "
                            "what conventions, geo and scorers runs measured; every other field is a TODO.",
                config=TemplateConfig, run="jobs.docs.template:run", run_options=EXPORT_OPTIONS, outputs=()),
    ),
)
