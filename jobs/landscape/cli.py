"""``benchaudit landscape``: the command (options come from LandscapeConfig)."""
from __future__ import annotations

from jobs.common.cli.flags import Command
from jobs.landscape.config import LandscapeConfig

COMMAND = Command.registered(
    "landscape",
    description="Read each multiple-choice item's option-letter probabilities from one forward pass per item and place it "
                "at (Ptop1, Hnorm); per benchmark x perturbation x model: accuracy, its relative change, mean Ptop1 and "
                "Hnorm, and the mean pairwise distance (MPD). Items that models still miss when every distractor is an "
                "unrelated city name become review candidates, validated against MMLU-Redux expert labels when given. "
                "Models run on Ray actor pools (a GPU each when there are GPUs) behind a response cache, so a rerun, an "
                "added perturbation or an added model repeats no model call. Items a benchmark makes unscorable are "
                "listed per item with their reason and never stop the run. --from-lm-eval reads lm-eval's --log_samples "
                "output instead of running a model.",
    epilog="examples:\n"
           "  benchaudit landscape --benchmark mmlu:mmlu:data/mmlu/test --model hf:/models/llama-3-8b "
           "--perturbations none,noise,no_answer\n"
           "  benchaudit landscape --benchmark arc:arc:arc.jsonl --models models.yaml --reference mmlu-redux/ --min-wrong 2\n"
           "  benchaudit landscape --from-lm-eval lm-eval-out/ --address auto",
    config=LandscapeConfig,
    run="jobs.landscape.run:run",
)
