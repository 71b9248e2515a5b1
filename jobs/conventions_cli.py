"""``benchaudit conventions``: command-line options (parsed here, validated by ConventionsConfig)."""
from __future__ import annotations

import argparse

from audit.conventions.signals import FIELDS
from jobs.benchmark_config import add_benchmark_options, benchmarks_from_args
from jobs.cli_common import add_run_options, run_options, split_list


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("conventions", help="American vs other spelling, date, time and unit conventions in benchmarks",
                       description="Find the locale conventions benchmark text assumes (spellings, numeric and written "
                                   "dates, 12/24-hour times, US customary vs metric units): coverage, American share, "
                                   "skew and the share without spelling per benchmark, with item-bootstrap intervals. "
                                   "With no input, audits the shipped TruthfulQA and DROP samples.")
    add_benchmark_options(p, "benchmarks (default: the shipped TruthfulQA.csv and the allennlp DROP fixture)", many=True)
    a = p.add_argument_group("analysis")
    a.add_argument("--fields", help=f"comma-separated item fields to scan (default: all of {', '.join(FIELDS)})")
    a.add_argument("--include-lexical", action="store_true",
                   help="also count lexical pairs (apartment/flat, gasoline/petrol): off by default, many are polysemous")
    a.add_argument("--bootstrap", type=int, default=10_000, help="item-bootstrap replicates for every interval")
    a.add_argument("--seed", type=int, default=2026, help="bootstrap seed (recorded in summary and manifest)")
    a.add_argument("--level", type=float, default=0.95, help="two-sided interval level, a fraction")
    a.add_argument("--shard-items", type=int, default=100_000,
                   help="items per shard of a Parquet file (unit of work and of --resume); other files are one shard each")
    a.add_argument("--examples", type=int, default=5, help="example signals kept per category and variety for the report")
    add_run_options(p)
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from jobs.conventions import ConventionsConfig, run

    benchmarks = benchmarks_from_args(args)
    cfg = ConventionsConfig(
        **({"benchmarks": benchmarks} if benchmarks else {}),
        **({"fields": split_list(args.fields)} if args.fields else {}),
        include_lexical=args.include_lexical, bootstrap_replicates=args.bootstrap, seed=args.seed, level=args.level,
        shard_items=args.shard_items, examples=args.examples,
    )
    out = run(cfg, run_options(args))
    print(f"report: {out}/report.html\nsummary: {out}/summary.json\nmanifest: {out}/manifest.json")
    return 0
