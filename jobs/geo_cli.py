"""``benchaudit geo``: command-line options of the geo job (parsed here, validated by GeoConfig)."""
from __future__ import annotations

import argparse

import yaml

from jobs.cli_common import add_run_options, run_options, split_list


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("geo", help="country visibility of caption corpora (the main job)",
                       description="Resolve the countries captions mention, their shares and their association with "
                                   "World Bank indicators; with no input, scans the shipped COCO and CC3M captions.")
    c = p.add_argument_group("corpora (default: the shipped COCO 2017 val and Conceptual Captions val samples)")
    c.add_argument("--corpus", action="append", metavar="NAME:PRESET:PATH",
                   help="a corpus by preset (datacomp, coyo, cc12m, redcaps, wit, coco, cc3m); PATH is a file, directory, "
                        "glob or URL (s3://, gs://). Repeat for several corpora: one table row each")
    c.add_argument("--corpora", metavar="YAML", help="a YAML list of corpora: name, paths, preset or format/text/context/url/id")
    c.add_argument("--input", action="append", metavar="PATH", help="one custom corpus: files, directories, globs or URLs")
    c.add_argument("--name", default="corpus", help="name of the --input corpus in the report")
    c.add_argument("--preset", help="column preset for --input")
    c.add_argument("--format", choices=["parquet", "jsonl", "csv", "tsv", "webdataset"], help="input format (default: from extension)")
    c.add_argument("--text-column", help="column holding the caption")
    c.add_argument("--context-columns", help="comma-separated extra text columns resolved with the caption (page title, alt text …)")
    c.add_argument("--url-column", help="column holding the URL (for the ccTLD signal)")
    c.add_argument("--id-column", help="record id column (default: source file + row number)")
    c.add_argument("--no-header", action="store_true", help="CSV/TSV without a header line (give --column-names)")
    c.add_argument("--column-names", help="comma-separated column names of a header-less CSV/TSV")
    c.add_argument("--group-by", help="also give the whole analysis per value of this column (e.g. WIT language, RedCaps subreddit)")
    a = p.add_argument_group("analysis")
    a.add_argument("--lexicon-profile", choices=["paper", "extended"], default="paper",
                   help="paper: the reference study's sources (default); extended: adds ISO 3166-2 regions and 'City, Region' pairs")
    a.add_argument("--lexicon", help="a lexicon Parquet saved by 'benchaudit geo lexicon' instead of the shipped one")
    a.add_argument("--lexicon-edits", help="CSV of action,alias,country_alpha2,match_type edits (add/remove entries)")
    a.add_argument("--indicators", help="indicator CSV (alpha3,indicator,year,value) instead of the shipped World Bank table")
    a.add_argument("--write-records", action="store_true", help="write per-record assignments (records/<corpus>/*.parquet)")
    a.add_argument("--top-n", type=int, default=20, help="countries listed in the top table and bar chart")
    a.add_argument("--min-population", type=float, default=1_000_000, help="countries below this population are left out of the fits")
    a.add_argument("--min-records", type=int, default=1, help="countries with fewer resolved records are left out of the fits")
    a.add_argument("--bootstrap", type=int, default=2_000, help="bootstrap replicates (countries resampled) for the r and ρ intervals")
    a.add_argument("--seed", type=int, default=2026, help="seed of every random choice (recorded in the manifest)")
    a.add_argument("--shard-rows", type=int, default=500_000, help="target rows per Parquet shard (unit of work and of --resume)")
    add_run_options(p)
    p.set_defaults(run=_run_geo)

    lp = sub.add_parser("geo-lexicon", help="export the country lexicon for review (also: 'benchaudit geo lexicon')",
                        description="Write the lexicon (Parquet or CSV by extension) and, optionally, every rejected candidate with its reason.")
    lp.add_argument("--profile", choices=["paper", "extended"], default="paper")
    lp.add_argument("--out", default="lexicon.csv", help="output file (.csv or .parquet)")
    lp.add_argument("--rejected", help="also write rejected candidates with reasons to this CSV")
    lp.add_argument("--edits", help="apply a CSV of edits first")
    lp.add_argument("--rebuild", action="store_true", help="rebuild from the source packages instead of loading the shipped artifact")
    lp.set_defaults(run=_run_geo_lexicon)


def _corpora_from_args(args: argparse.Namespace):
    from jobs.geo import CorpusConfig

    corpora = []
    if args.corpora:
        with open(args.corpora, encoding="utf-8") as fh:
            entries = yaml.safe_load(fh) or []
        corpora += [CorpusConfig(**e) for e in entries]
    for spec in args.corpus or []:
        parts = spec.split(":", 2)
        if len(parts) != 3:
            raise ValueError(f"--corpus {spec!r}: expected NAME:PRESET:PATH")
        corpora.append(CorpusConfig(name=parts[0], preset=parts[1], paths=[parts[2]]))
    if args.input:
        corpora.append(CorpusConfig(
            name=args.name, paths=args.input, preset=args.preset, format=args.format, text=args.text_column,
            context=split_list(args.context_columns), url=args.url_column, id=args.id_column,
            header=False if args.no_header else None, column_names=split_list(args.column_names),
        ))
    return corpora


def _run_geo(args: argparse.Namespace) -> int:
    from jobs.geo import GeoConfig, run

    corpora = _corpora_from_args(args)
    cfg = GeoConfig(
        **({"corpora": corpora} if corpora else {}),
        lexicon_profile=args.lexicon_profile, lexicon_path=args.lexicon, lexicon_edits=args.lexicon_edits,
        indicators_path=args.indicators, group_by=args.group_by, write_records=args.write_records, top_n=args.top_n,
        min_population=args.min_population, min_records=args.min_records, bootstrap_replicates=args.bootstrap,
        seed=args.seed, shard_rows=args.shard_rows,
    )
    out = run(cfg, run_options(args))
    print(f"report: {out}/report.html\nsummary: {out}/summary.json\nmanifest: {out}/manifest.json")
    return 0


def _run_geo_lexicon(args: argparse.Namespace) -> int:
    from audit.geo.lexicon import LexiconConfig, apply_edits, build_lexicon
    from connectors.lexicon import load_lexicon, read_edits, save_lexicon

    config = LexiconConfig(profile=args.profile)
    lex = build_lexicon(config) if args.rebuild else load_lexicon(args.profile)
    if args.edits:
        lex = apply_edits(lex, read_edits(args.edits), args.edits)
    if args.out.endswith(".parquet"):
        save_lexicon(lex, args.out)
    else:
        lex.entries.to_pandas().to_csv(args.out, index=False)
    if args.rejected:
        # rejection reasons live with a build, not with the saved artifact
        rejected = lex.rejected if not lex.rejected.empty else build_lexicon(config).rejected
        rejected.to_csv(args.rejected, index=False)
    print(f"{lex.entries.num_rows:,} entries ({lex.profile}, sha256 {lex.sha256[:12]}…) → {args.out}")
    return 0
