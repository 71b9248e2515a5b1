"""``benchaudit coreset build|estimate|study|traces``: command-line options (parsed here, validated by the configs)."""
from __future__ import annotations

import argparse

from jobs.cli_common import add_run_options, run_options, split_list
from jobs.config import RunOptions

DESCRIPTION = """HT-Coreset: evaluate a model on a small importance-weighted subset of a huge binary test set
and estimate its full-table precision, recall and F1 with Horvitz-Thompson weights.

  benchaudit coreset build     draw a design from a target table (id, label, scorer probabilities), on Ray
  benchaudit coreset estimate  full-table metrics of models whose predictions cover the design
  benchaudit coreset study     compare samplers over repeated draws on a fully labelled table, on Ray
  benchaudit coreset traces    audit reasoning traces with regex rubric steps by correct/incorrect verdict"""


def _floats(value: str) -> list[float]:
    return [float(v) for v in split_list(value) or []]


def add_parser(sub: argparse._SubParsersAction) -> None:
    top = sub.add_parser("coreset", help="HT-Coreset: build | estimate | study | traces (see 'benchaudit coreset build --help')",
                         description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.set_defaults(run=lambda args: _usage(top))
    _add_build(sub)
    _add_estimate(sub)
    _add_study(sub)
    _add_traces(sub)


def _usage(parser: argparse.ArgumentParser) -> int:
    """'benchaudit coreset' alone: show the four commands."""
    parser.print_help()
    return 2


def _design_rules(p: argparse.ArgumentParser, with_tau: bool) -> None:
    g = p.add_argument_group("design rules (fractions, not percentages)")
    if with_tau:
        g.add_argument("--tau", type=float, required=True, help="operating threshold of the construction scorer (probability)")
    g.add_argument("--hard-cut-fraction", type=float, default=0.5, help="a negative is hard if its score >= this × tau (default 0.5)")
    g.add_argument("--hard-reserve-fraction", type=float, default=0.3, help="share of the negative budget reserved for hard negatives (default 0.3)")
    g.add_argument("--easy-strata", type=int, default=3, help="difficulty strata over the other negatives (default 3: terciles)")


def _add_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("coreset-build", help="draw an HT-Coreset design from a target table (also: 'benchaudit coreset build')",
                       description="Keep every positive (weight 1), the negatives the scorer finds hard (up to a reserve), and a "
                                   "seeded hash-key sample of difficulty strata over the rest, weighted N_h/n_h. Scales to tables "
                                   "of 10M+ rows on Ray: only counts and the drawn rows reach the driver; the design does not "
                                   "depend on shard sizes or cluster size. Writes design.parquet (id, stratum, label, pi, w, score"
                                   "[, group]) and design.json.")
    g = p.add_argument_group("target table")
    g.add_argument("--input", action="append", required=True, metavar="PATH",
                   help="Parquet/CSV/JSONL files, directories, globs or URLs (s3://, gs://); repeat for several")
    g.add_argument("--format", choices=["parquet", "csv", "jsonl"], help="input format (default: from extension)")
    g.add_argument("--id-column", default="id", help="target id: integer or string, unique (default id)")
    g.add_argument("--label-column", default="label", help="0/1 label (default label)")
    g.add_argument("--score-columns", default="score", help="comma-separated scorer probabilities, averaged into the ensemble score")
    g.add_argument("--group-column", help="optional group (e.g. typology) carried into the design for per-group recall")
    _design_rules(p, with_tau=True)
    p.add_argument("--budget-multiplier", type=float, default=2.0, help="negatives drawn per positive (default 2: a 1:2 design)")
    p.add_argument("--no-hard-stratum", action="store_true", help="difficulty strata only (hard negatives stay in the pool)")
    p.add_argument("--seed", type=int, default=0, help="hash-draw seed (integer in [0, 2**64))")
    p.add_argument("--shard-rows", type=int, default=1_000_000, help="rows per shard (Parquet row groups are never split)")
    add_run_options(p)
    p.set_defaults(run=_run_build)


def _add_estimate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("coreset-estimate", help="full-table metrics from predictions on a design (also: 'benchaudit coreset estimate')",
                       description="Join prediction files to a design by id and estimate HT precision, recall (exact), F1, lift "
                                   "and FP with linearised SEs, conservative hypergeometric intervals, the unweighted subset "
                                   "values side by side, the predict-all floor, and paired contrasts between predictors; "
                                   "recall by group, macro-F1 of the group named for detected positives, and a failure "
                                   "taxonomy per model. Runs on the driver without Ray (the design is small).")
    p.add_argument("--design", required=True, metavar="RUN_DIR", help="run directory of 'benchaudit coreset build'")
    p.add_argument("--predictions", action="append", required=True, metavar="NAME=PATH",
                   help="a predictor's CSV/Parquet/JSONL file(s); repeat the same NAME for sharded outputs, another NAME "
                        "for another model (two or more give paired contrasts)")
    p.add_argument("--id-column", default="id", help="id column of the prediction files (default id)")
    p.add_argument("--prediction-column", default="prediction", help="0/1 prediction column (default prediction)")
    p.add_argument("--run-column", help="run/seed column: each value becomes one run of the model (averaged, SD reported apart)")
    p.add_argument("--missing", choices=["error", "negative"], default="error",
                   help="a missing prediction (nothing returned, unparsable) is an error (default) or counted as negative")
    p.add_argument("--alpha", type=float, default=0.05, help="1 - coverage of the conservative intervals (default 0.05)")
    p.add_argument("--metrics", default="precision,recall,f1,lift,fp", help="comma-separated metrics")
    d = p.add_argument_group("diagnostics (optional columns: in every file of a predictor or in none)")
    d.add_argument("--group-column", help="group (typology) the model names for a positive verdict; with a design built "
                                          "with --group-column gives macro-F1 among detected positives and wrong_group")
    d.add_argument("--response-column", help="raw model output: null or blank = no response; text with an empty "
                                             "prediction = unparsable; gives the failure taxonomy per model")
    _driver_run_options(p)
    p.set_defaults(run=_run_estimate)


def _driver_run_options(p: argparse.ArgumentParser) -> None:
    """--out and --run-id only: jobs on the driver have no Ray address, CPUs or shards to skip."""
    g = p.add_argument_group("running")
    for name in ("out", "run_id"):
        field = RunOptions.model_fields[name]
        g.add_argument("--" + name.replace("_", "-"), default=field.default, help=field.description)


def _add_traces(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("coreset-traces", help="audit reasoning traces with regex rubric steps (also: 'benchaudit coreset traces')",
                       description="Check every trace against a rubric of named regex steps and report, per model and "
                                   "step, the pass rate among correct and among incorrect verdicts; write an "
                                   "outcome-stratified sample (up to N correct and N incorrect traces per model, by seeded "
                                   "hash key) for reading or rating; with --ratings, agreement between raters or judges "
                                   "(Fleiss' kappa, pairwise Cohen's kappa). Small data: runs on the driver, no Ray needed.")
    p.add_argument("--rubric", required=True, metavar="FILE",
                   help="YAML/JSON: {description: ..., steps: [{name: ..., pattern: <regex>, ignore_case: true}]}")
    g = p.add_argument_group("traces")
    g.add_argument("--traces", action="append", required=True, metavar="PATH",
                   help="CSV/Parquet/JSONL file(s), one row per (id, model); repeat for several")
    g.add_argument("--id-column", default="id", help="id column of traces, predictions and ratings (default id)")
    g.add_argument("--model-column", default="model", help="model column of traces and ratings (default model)")
    g.add_argument("--trace-column", default="trace", help="trace text column (default trace)")
    v = p.add_argument_group("verdicts: a column of the traces, or joined from a design and predictions")
    v.add_argument("--verdict-column", help="correct/incorrect, true/false or 1/0 (1 = correct)")
    v.add_argument("--design", metavar="RUN_DIR", help="run directory of 'benchaudit coreset build' (the labels)")
    v.add_argument("--predictions", action="append", default=[], metavar="NAME=PATH",
                   help="a model's prediction file(s), NAME as in the model column; correct = prediction equals the "
                        "label; an empty prediction is incorrect")
    v.add_argument("--prediction-column", default="prediction", help="0/1 prediction column (default prediction)")
    r = p.add_argument_group("sample and agreement")
    r.add_argument("--per-outcome", type=int, default=20, help="traces per verdict and model in the sample (default 20)")
    r.add_argument("--seed", type=int, default=0, help="hash-key seed of the sample (default 0)")
    r.add_argument("--ratings", metavar="FILE", help="one row per rated trace (id, model) and one column per rater")
    r.add_argument("--rater-columns", help="comma-separated rater columns (default: every other column)")
    _driver_run_options(p)
    p.set_defaults(run=_run_traces)


def _add_study(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("coreset-study", help="compare samplers over repeated draws (also: 'benchaudit coreset study')",
                       description="On a fully labelled table with scores and predictions, draw each design K times "
                                   "(uniform+HT, difficulty strata+HT, HT-Coreset, HT-Coreset without weights) and report, "
                                   "per sampler and metric, bias, MAE, RMSE, SD, mean interval width and coverage. "
                                   "protocol.json is written before any draw.")
    g = p.add_argument_group("table")
    g.add_argument("--input", action="append", required=True, metavar="PATH", help="Parquet/CSV/JSONL files, directories, globs or URLs")
    g.add_argument("--format", choices=["parquet", "csv", "jsonl"], help="input format (default: from extension)")
    g.add_argument("--dataset", default="targets", help="dataset name in the protocol and seeds")
    g.add_argument("--label-column", default="label", help="0/1 label (default label)")
    g.add_argument("--direction", action="append", required=True, metavar="NAME:SCORES:PREDICTIONS[:TAU]",
                   help="strata from the comma-separated SCORES columns (averaged), predictions from the comma-separated "
                        "PREDICTIONS columns (one per run); e.g. 'lgb->xgb:lgb_0,lgb_1:xgb_pred_0,xgb_pred_1'. Repeat")
    g.add_argument("--tau", type=float, help="construction scorer threshold for directions that give none")
    g.add_argument("--prediction-threshold", type=float,
                   help="PREDICTIONS are probabilities: predict positive at >= this value (default: they are 0/1)")
    _design_rules(p, with_tau=False)
    s = p.add_argument_group("study")
    s.add_argument("--draws", type=int, default=500, help="draws K per configuration (default 500)")
    s.add_argument("--budget-multipliers", default="2", help="comma-separated negatives per positive, e.g. 2,4,8")
    s.add_argument("--samplers", default="uniform_ht,difficulty_ht,ht_coreset,ht_coreset_unweighted", help="comma-separated samplers")
    s.add_argument("--metrics", default="precision,recall,f1", help="comma-separated metrics")
    s.add_argument("--alpha", type=float, default=0.05, help="1 - coverage of the conservative intervals")
    s.add_argument("--root-seed", type=int, default=20260930, help="root of the SeedSequence of every draw")
    add_run_options(p)
    p.set_defaults(run=_run_study)


def _run_build(args: argparse.Namespace) -> int:
    from jobs.coreset_build import BuildConfig, run

    cfg = BuildConfig(
        paths=args.input, format=args.format, id_column=args.id_column, label_column=args.label_column,
        score_columns=split_list(args.score_columns) or [], group_column=args.group_column, tau=args.tau,
        hard_cut_fraction=args.hard_cut_fraction, hard_reserve_fraction=args.hard_reserve_fraction,
        budget_multiplier=args.budget_multiplier, n_easy_strata=args.easy_strata, use_hard_stratum=not args.no_hard_stratum,
        seed=args.seed, shard_rows=args.shard_rows,
    )
    out = run(cfg, run_options(args))
    print(f"design: {out}/design.parquet\nreport: {out}/report.html\nsummary: {out}/summary.json\nmanifest: {out}/manifest.json")
    return 0


def _predictors(specs: list[str]) -> list[dict]:
    paths: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--predictions {spec!r}: expected NAME=PATH")
        paths.setdefault(name, []).append(path)
    return [{"name": n, "paths": p} for n, p in paths.items()]


def _run_estimate(args: argparse.Namespace) -> int:
    from jobs.coreset_estimate import EstimateConfig, run

    cfg = EstimateConfig(
        design=args.design, predictors=_predictors(args.predictions), id_column=args.id_column,
        prediction_column=args.prediction_column, run_column=args.run_column, group_column=args.group_column,
        response_column=args.response_column, missing=args.missing, alpha=args.alpha, metrics=split_list(args.metrics) or [],
    )
    out = run(cfg, RunOptions(out=args.out, run_id=args.run_id))
    print(f"estimates: {out}/estimates.csv\nreport: {out}/report.html\nsummary: {out}/summary.json")
    return 0


def _run_traces(args: argparse.Namespace) -> int:
    from jobs.coreset_traces import TracesConfig, run

    cfg = TracesConfig(
        rubric=args.rubric, traces=args.traces, id_column=args.id_column, model_column=args.model_column,
        trace_column=args.trace_column, verdict_column=args.verdict_column, design=args.design,
        predictors=_predictors(args.predictions), prediction_column=args.prediction_column, ratings=args.ratings,
        rater_columns=split_list(args.rater_columns), per_outcome=args.per_outcome, seed=args.seed,
    )
    out = run(cfg, RunOptions(out=args.out, run_id=args.run_id))
    print(f"trace audit: {out}/trace_audit.csv\nsample: {out}/trace_sample.csv\nreport: {out}/report.html")
    return 0


def _directions(specs: list[str], tau: float | None, threshold: float | None) -> list[dict]:
    out = []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (3, 4) or not all(parts[:3]):
            raise ValueError(f"--direction {spec!r}: expected NAME:SCORES:PREDICTIONS[:TAU]")
        direction_tau = float(parts[3]) if len(parts) == 4 else tau
        if direction_tau is None:
            raise ValueError(f"--direction {spec!r}: no TAU in the spec and no --tau")
        out.append({"name": parts[0], "construction_scores": split_list(parts[1]), "tau": direction_tau,
                    "predictions": split_list(parts[2]), "prediction_threshold": threshold})
    return out


def _run_study(args: argparse.Namespace) -> int:
    from jobs.coreset_study import StudyJobConfig, run

    cfg = StudyJobConfig(
        paths=args.input, format=args.format, dataset=args.dataset, label_column=args.label_column,
        directions=_directions(args.direction, args.tau, args.prediction_threshold), draws=args.draws,
        budget_multipliers=_floats(args.budget_multipliers), samplers=split_list(args.samplers) or [],
        metrics=split_list(args.metrics) or [], hard_cut_fraction=args.hard_cut_fraction,
        hard_reserve_fraction=args.hard_reserve_fraction, n_easy_strata=args.easy_strata, alpha=args.alpha,
        root_seed=args.root_seed,
    )
    out = run(cfg, run_options(args))
    print(f"sampler study: {out}/sampler_study.csv\nprotocol: {out}/protocol.json\nreport: {out}/report.html")
    return 0
