"""``benchaudit scorers``: the command (options come from ScorersConfig)."""
from __future__ import annotations

from jobs.common.cli.flags import Command
from jobs.scorers.config import ScorersConfig

COMMAND = Command.registered(
    "scorers",
    description="Rewrite answers under another convention (spelling both ways, written-date order, 12/24-hour time, "
                "units at the stated precision), reject variants that touch a name, and score variant and original with "
                "DROP EM/F1, SQuAD EM/F1, exact match and TruthfulQA's BLEU/ROUGE ranking; paired differences with "
                "question-clustered bootstrap intervals. With no input, varies the gold answers of the shipped TruthfulQA.",
    config=ScorersConfig,
    run="jobs.scorers.run:run",
    outputs=("report.html", "summary.json", "data/", "manifest.json"),
)
