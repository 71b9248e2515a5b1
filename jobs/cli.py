"""``benchaudit``: one command, a subcommand per job.

    benchaudit geo                       # the embedded default: shipped captions, local Ray
    benchaudit geo --corpus wit:wit:s3://bucket/wit/*.tsv.gz --group-by language --address auto
    benchaudit geo lexicon --profile extended --out lexicon.csv --rejected rejected.csv
"""
from __future__ import annotations

import argparse
import importlib
import sys

from pydantic import ValidationError

# Each module adds its subcommand(s) with ``add_parser(sub)`` and sets ``run`` on them.
JOB_CLIS = ("jobs.geo_cli", "jobs.conventions_cli", "jobs.scorers_cli", "jobs.docs_cli", "jobs.coreset_cli")
# Two-word commands that map onto one subcommand name.
ALIASES = {("geo", "lexicon"): "geo-lexicon", ("docs", "template"): "docs-template", ("coreset", "build"): "coreset-build", ("coreset", "estimate"): "coreset-estimate", ("coreset", "study"): "coreset-study", ("coreset", "traces"): "coreset-traces"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchaudit", description="Audits of what AI benchmark scores and caption corpora measure, on Ray.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="JOB")
    for module in JOB_CLIS:
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if tuple(argv[:2]) in ALIASES:
        argv = [ALIASES[tuple(argv[:2])], *argv[2:]]
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValidationError, ValueError, FileNotFoundError) as exc:
        print(f"benchaudit {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
