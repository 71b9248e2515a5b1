"""``benchaudit contamination``: the command (options come from ContaminationConfig)."""
from __future__ import annotations

from jobs.common.cli.flags import Command
from jobs.contamination.config import ContaminationConfig

COMMAND = Command.registered(
    "contamination",
    description="Send n sampled questions of one benchmark through routers to a worker that never sees the original: one "
                "clean relay (forward_full) and r = 1..M noisy rewrites (noisy_rewrite) that drop information and add noise. "
                "Per model and r: accuracy against the model's own clean baseline, violations (gain > 0), positive excess, "
                "wrong->correct and correct->wrong transitions, exact McNemar tests with Holm's correction and a "
                "question-clustered bootstrap trend; per model: level (clean accuracy) against credibility (breadth and "
                "excess). Every call goes through the response cache, so a rerun repeats none. With --outcomes FILE, the "
                "same statistics and report from a per-question outcome table, with no model call.",
    epilog="examples:\n"
           "  benchaudit contamination --benchmark arc:arc:data/arc_challenge_test.jsonl --worker-model hf:Qwen/Qwen2.5-7B-Instruct\n"
           "  benchaudit contamination --benchmark mmlu:mmlu:data/mmlu --worker-model openai:http://localhost:8000/v1#m1 \\\n"
           "      --worker-model openai:http://localhost:8000/v1#m2 --router-model openai:http://localhost:8000/v1#m1\n"
           "  benchaudit contamination --outcomes runs/contamination/RUN/data/outcomes",
    config=ContaminationConfig,
    run="jobs.contamination.run:run",
)
