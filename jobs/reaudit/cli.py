"""``benchaudit reaudit --plan plan.yaml``: rerun what changed since the plan's last run, and write the diff."""
from __future__ import annotations

from jobs.common.cli.flags import Command
from jobs.reaudit.config import ReauditConfig

COMMAND = Command.registered(
    "reaudit",
    description="Read a plan (benchmarks and corpora, audits, models, thresholds, schedule), fingerprint every input by "
                "content, rerun only the audits whose inputs, config or code changed -- reusing finished shards of "
                "unchanged files and cached model responses -- and write diff.md / diff.json: items added, removed and "
                "changed, models added, removed and changed, headline metric deltas with intervals, and a status per "
                "metric against the plan's thresholds. Exit code 3 when a metric regressed.\n\n"
                "  benchaudit reaudit --plan cluster/schedule/reaudit-plan.yaml --out s3://bucket/audits --address auto\n"
                "  benchaudit reaudit --plan plan.yaml --out runs --dry-run",
    config=ReauditConfig,
    run="jobs.reaudit.run:run",
    outputs=(),
)
