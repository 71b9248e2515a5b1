"""``benchaudit traces``: the command (options come from TracesConfig)."""
from __future__ import annotations

from jobs.common.cli.config import DRIVER_OPTIONS
from jobs.common.cli.flags import Command
from jobs.traces.config import TracesConfig

COMMAND = Command.registered(
    "traces",
    description="Check every trace against a rubric of named regex steps and report, per model and step, the pass rate "
                "among correct and among incorrect verdicts; write an outcome-stratified sample (up to N correct and N "
                "incorrect traces per model, by seeded hash key) for reading or rating; with --ratings, agreement "
                "between raters or judges (Fleiss' kappa, pairwise Cohen's kappa). Small data: runs on the driver, "
                "no Ray needed.",
    config=TracesConfig,
    run="jobs.traces.run:run",
    run_options=DRIVER_OPTIONS,
    outputs=("report.html", "summary.json", "data/", "trace_sample.csv", "manifest.json"),
)
