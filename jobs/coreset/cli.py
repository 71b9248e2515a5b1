"""``benchaudit coreset build|estimate|study``: the commands (options come from the configs)."""
from __future__ import annotations

from jobs.common.cli.config import DRIVER_OPTIONS
from jobs.common.cli.flags import Command
from jobs.common.cli.registry import Lazy, lookup
from jobs.coreset.config import BuildConfig, EstimateConfig, StudyJobConfig

_TRACES = lookup("traces")
assert _TRACES is not None, "traces is a registered job (jobs.common.cli.registry)"
COMMAND = Command.registered(
    "coreset",
    description="HT-Coreset: evaluate a model on a small importance-weighted subset of a huge binary test set and "
                "estimate its full-table precision, recall and F1 with Horvitz-Thompson weights: build a design from a "
                "target table (on Ray), estimate from predictions on it, or study the samplers on a labelled table (on Ray).",
    subcommands=(
        Command(name="build", help="draw an HT-Coreset design from a target table",
                description="Keep every positive (weight 1), the negatives the scorer finds hard (up to a reserve), and a "
                            "seeded hash-key sample of difficulty strata over the rest, weighted N_h/n_h. Scales to "
                            "tables of 10M+ rows on Ray: only counts and the drawn rows reach the driver; the design does "
                            "not depend on shard sizes or cluster size. Writes data/design/ (id, stratum, label, pi, w, "
                            "score[, group_value]) and design.json.",
                config=BuildConfig, run="jobs.coreset.build:run",
                outputs=("report.html", "summary.json", "data/", "manifest.json")),
        Command(name="estimate", help="full-table metrics from predictions on a design",
                description="Join prediction files to a design by id and estimate HT precision, recall (exact), F1, lift "
                            "and FP with linearised SEs, conservative hypergeometric intervals, the unweighted subset "
                            "values side by side, the predict-all floor, and paired contrasts between predictors; recall "
                            "by group, macro-F1 of the group named for detected positives, and a failure taxonomy per "
                            "model. Runs on the driver without Ray (the design is small).",
                config=EstimateConfig, run="jobs.coreset.estimate:run", run_options=DRIVER_OPTIONS,
                outputs=("report.html", "summary.json", "data/", "manifest.json")),
        Command(name="study", help="compare samplers over repeated draws on a fully labelled table",
                description="On a fully labelled table with scores and predictions, draw each design K times "
                            "(uniform+HT, difficulty strata+HT, HT-Coreset, HT-Coreset without weights) and report, per "
                            "sampler and metric, bias, MAE, RMSE, SD, mean interval width and coverage. protocol.json "
                            "is written before any draw.",
                config=StudyJobConfig, run="jobs.coreset.study:run",
                outputs=("report.html", "summary.json", "data/", "protocol.json", "manifest.json")),
        # 'benchaudit coreset traces' (its name before traces became a job of its own), kept for one release
        Lazy("traces", _TRACES.help, _TRACES.target, replaced_by="benchaudit traces"),
    ),
)
