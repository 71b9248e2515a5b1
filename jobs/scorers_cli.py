"""``benchaudit scorers``: command-line options (parsed here, validated by ScorersConfig)."""
from __future__ import annotations

import argparse
from pathlib import Path

from audit.scoring.sensitivity import SCORERS
from audit.scoring.variants import TRANSFORMATIONS
from jobs.benchmark_config import add_benchmark_options, benchmarks_from_args
from jobs.cli_common import add_run_options, run_options, split_list


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scorers", help="scorer sensitivity to meaning-preserving answer variants",
                       description="Rewrite answers under another convention (spelling both ways, written-date order, "
                                   "12/24-hour time, units at the stated precision), reject variants that touch a name, "
                                   "and score variant and original with DROP EM/F1, SQuAD EM/F1, exact match and "
                                   "TruthfulQA's BLEU/ROUGE ranking; paired differences with question-clustered "
                                   "bootstrap intervals. With no input, varies the gold answers of the shipped TruthfulQA.")
    add_benchmark_options(p, "gold references (default: the shipped TruthfulQA.csv)", many=False)
    a = p.add_argument_group("answers to vary (default: the benchmark's gold answers)")
    a.add_argument("--answers", action="append", metavar="[NAME=]PATH",
                   help="model outputs (CSV/TSV, JSONL or Parquet) with a question id and an answer per row; repeat for several models")
    a.add_argument("--answers-id-column", default="question_id", help="question id column of the answer files")
    a.add_argument("--answers-column", default="answer", help="answer column of the answer files")
    a.add_argument("--variants", metavar="PATH", help="score these (reviewed) variants instead of generating them: columns "
                                                     "question_id, original, variant, transformation [, status, reason]")
    s = p.add_argument_group("scoring")
    s.add_argument("--scorers", help=f"comma-separated scorers (default: all of {', '.join(SCORERS)})")
    s.add_argument("--transformations", help=f"comma-separated transformations (default: all of {', '.join(TRANSFORMATIONS)})")
    s.add_argument("--protected-names", metavar="FILE", help="extra names variants must not alter, one per line (brands, titles)")
    s.add_argument("--bootstrap", type=int, default=10_000, help="bootstrap replicates (questions resampled)")
    s.add_argument("--seed", type=int, default=2026, help="bootstrap seed (recorded in summary and manifest)")
    s.add_argument("--level", type=float, default=0.95, help="two-sided interval level, a fraction")
    s.add_argument("--shard-questions", type=int, default=500, help="questions per shard (unit of work and of --resume)")
    add_run_options(p)
    p.set_defaults(run=_run)


def _answers(specs: list[str] | None, id_column: str, answer_column: str) -> list[dict]:
    out = []
    for spec in specs or []:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).name.split(".")[0], spec
        out.append({"name": name, "path": path, "id_column": id_column, "answer_column": answer_column})
    return out


def _run(args: argparse.Namespace) -> int:
    from audit.scoring.screening import DEFAULT_PROTECTED_NAMES
    from jobs.scorers import ScorersConfig, run

    benchmarks = benchmarks_from_args(args)
    if len(benchmarks) > 1:
        raise ValueError("benchaudit scorers takes one benchmark (--benchmark or --input)")
    names = list(DEFAULT_PROTECTED_NAMES)
    if args.protected_names:
        with open(args.protected_names, encoding="utf-8") as fh:
            names += [line.strip() for line in fh if line.strip() and not line.startswith("#")]
    cfg = ScorersConfig(
        **({"benchmark": benchmarks[0]} if benchmarks else {}),
        answers=_answers(args.answers, args.answers_id_column, args.answers_column), variants_path=args.variants,
        **({"scorers": split_list(args.scorers)} if args.scorers else {}),
        **({"transformations": split_list(args.transformations)} if args.transformations else {}),
        protected_names=names, bootstrap_replicates=args.bootstrap, seed=args.seed, level=args.level,
        shard_questions=args.shard_questions,
    )
    out = run(cfg, run_options(args))
    print(f"report: {out}/report.html\nsummary: {out}/summary.json\nmanifest: {out}/manifest.json")
    return 0
