"""``benchaudit docs`` and ``benchaudit docs template``: command-line options."""
from __future__ import annotations

import argparse
import sys

from audit.docs.criteria import CRITERIA
from jobs.cli_common import add_run_options, run_options, split_list


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("docs", help="documentation audit: six user-centric criteria over dataset cards",
                       description="Score Hugging Face dataset cards (README.md with YAML front matter), Croissant JSON-LD "
                                   "(responsible-AI fields included) and Markdown datasheets / data statements on six "
                                   "criteria (0 absent, 1 mentioned, 2 operationalized) with the evidence behind each "
                                   "proposed score; with reviewer sheets, Cohen's kappa per criterion and overall.")
    p.add_argument("--cards", action="append", required=True, metavar="PATH",
                   help="documentation files, folders (searched for .md, .json, .jsonld), globs or URLs; repeatable")
    p.add_argument("--reviews", action="append", metavar="CSV",
                   help="reviewer sheet(s): resource, annotator, one 0/1/2 column per criterion [, notes]; one row per "
                        "resource and annotator; repeatable (several annotators, in one or several files)")
    p.add_argument("--criteria", help=f"comma-separated subset of the criteria (default: all of {', '.join(CRITERIA)})")
    add_run_options(p)
    p.set_defaults(run=_run)

    t = sub.add_parser("docs-template", help="nine-field documentation template pre-filled from audit runs "
                                             "(also: 'benchaudit docs template')",
                       description="Write the nine-field user-centric documentation template for a benchmark, pre-filled "
                                   "with what conventions, geo and scorers runs measured; every other field is a TODO.")
    t.add_argument("--conventions-run", metavar="DIR", help="a finished conventions run directory")
    t.add_argument("--benchmark", help="benchmark of the conventions run (needed when it holds several)")
    t.add_argument("--geo-run", metavar="DIR", help="a finished geo run directory (geographic coverage)")
    t.add_argument("--corpus", help="corpus of the geo run (needed when it holds several)")
    t.add_argument("--scorers-run", metavar="DIR", help="a finished scorers run directory (scorer sensitivity)")
    t.add_argument("--answers-set", help="answer set of the scorers run (needed when it holds several)")
    t.add_argument("--name", help="benchmark name in the title (default: the conventions benchmark)")
    t.add_argument("--out", help="Markdown file to write (default: standard output)")
    t.set_defaults(run=_run_template)


def _run(args: argparse.Namespace) -> int:
    from jobs.docs import DocsConfig, run

    cfg = DocsConfig(cards=args.cards, reviews=args.reviews or [],
                     **({"criteria": split_list(args.criteria)} if args.criteria else {}))
    out = run(cfg, run_options(args))
    print(f"report: {out}/report.html\nsummary: {out}/summary.json\nevidence: {out}/evidence.csv\n"
          f"proposed scores (reviewer-sheet layout): {out}/proposed_scores.csv")
    return 0


def _run_template(args: argparse.Namespace) -> int:
    from jobs.docs_template import build_template

    text = build_template(args.name, args.conventions_run, args.benchmark, args.geo_run, args.corpus, args.scorers_run,
                          args.answers_set)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"template: {args.out}")
    else:
        sys.stdout.write(text)
    return 0
