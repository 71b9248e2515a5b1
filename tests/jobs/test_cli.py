"""The benchaudit command line: one naming convention, defaults in --help, old spellings, nested commands."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.geo.sources import article_forms
from jobs.cli import main
from jobs.common.cli.flags import leaf_parser, make_config, resolve, walk
from jobs.common.cli.registry import COMMANDS

SCANNING = {"geo", "conventions", "scorers", "docs"}  # jobs that read inputs row by row: --limit applies
PRINTING_ONLY = {("ls",), ("validate",), ("models", "fetch")}  # they write no file: what they find goes to the terminal
PATHS = {tuple(c.name for c in path): path for path in walk(COMMANDS)}


def parser_of(path: tuple[str, ...]) -> argparse.ArgumentParser:
    return leaf_parser(PATHS[path])


def options(p: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.option_strings[0]: a for a in p._actions if a.option_strings and a.help != argparse.SUPPRESS
            and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))}


RUNNABLE = [(names, path[-1]) for names, path in PATHS.items() if path[-1].run is not None and not path[-1].replaced_by]


@pytest.mark.parametrize(("path", "command"), RUNNABLE, ids=[" ".join(p) for p, _ in RUNNABLE])
def test_every_command_follows_the_naming_convention(path, command):
    opts = options(parser_of(path))
    for flag, action in opts.items():
        assert "(default: " in action.help, f"{' '.join(path)} {flag}: --help must show the default"
        assert not flag.endswith(("-field", "-by")) and flag not in ("--alpha", "--root-seed"), flag
        assert not flag.startswith("--shard-") or flag == "--shard-rows", flag
    assert "--log-level" in opts
    if "--out" in opts:
        assert opts["--out"].help.startswith("root of run directories")
    else:  # a single-file export (--to FILE, never --out) or a command that only prints
        assert command.outputs == () and ("--to" in opts or path in PRINTING_ONLY), path
    if "--bootstrap" in opts:
        assert "(default: 10,000)" in opts["--bootstrap"].help  # one default everywhere
    if "--level" in opts:
        assert "(default: 0.95)" in opts["--level"].help
    if path[0] in SCANNING and len(path) == 1:
        assert "--limit" in opts, path
    column_like = [f for f in opts if "column" in f and f != "--column-names"]
    assert all(f.endswith(("-column", "-columns")) for f in column_like), column_like


def test_canonical_inputs_exist_on_every_job():
    assert {"--corpus", "--corpora", "--input", "--text-column", "--id-column", "--group-column"} <= set(options(parser_of(("geo",))))
    for job in ("conventions", "scorers"):
        assert {"--benchmark", "--benchmarks", "--input", "--question-column", "--id-column", "--options-column",
                "--gold-column", "--shard-rows", "--seed", "--level", "--bootstrap"} <= set(options(parser_of((job,))))
    assert {"--input", "--id-column", "--label-column", "--group-column", "--seed"} <= set(options(parser_of(("coreset", "build"))))
    assert {"--level", "--seed"} <= set(options(parser_of(("coreset", "study"))))


@pytest.mark.parametrize(("argv", "field", "value"), [
    (["geo", "--group-by", "lang"], "group_column", "lang"),
    (["geo", "--bootstrap-replicates", "5"], "bootstrap", 5),
    (["conventions", "--shard-items", "7"], "shard_rows", 7),
    (["conventions", "--input", "x.csv", "--question-field", "q"], "question_column", "q"),
    (["scorers", "--shard-questions", "9"], "shard_rows", 9),
    (["coreset", "estimate", "--design", "d", "--predictions", "m=p.csv", "--alpha", "0.1"], "level", 0.9),
    (["coreset", "study", "--input", "t.parquet", "--direction", "a:s:p:0.5", "--root-seed", "3"], "seed", 3),
    (["geo", "lexicon", "--out", "lex.csv"], "to", "lex.csv"),
    (["docs", "template", "--conventions-run", "r", "--benchmark", "tqa"], "conventions_benchmark", "tqa"),
])
def test_old_spellings_warn_and_reach_the_new_option(argv, field, value, capsys):
    bound = resolve(argv)
    cfg = make_config(bound.command.config, bound.given)
    assert getattr(cfg, field) == pytest.approx(value) if isinstance(value, float) else getattr(cfg, field) == value
    err = capsys.readouterr().err
    assert "is deprecated; use --" in err and argv[-2] in err


def test_nested_subcommands_parse_without_rewriting_argv():
    for argv, name in ((["geo", "lexicon", "--profile", "extended"], "lexicon"),
                       (["coreset", "build", "--input", "x", "--tau", "0.5"], "build"),
                       (["docs", "template", "--name", "x"], "template"), (["geo", "--seed", "3"], "geo")):
        assert resolve(argv).command.name == name
    top = subprocess.run([sys.executable, "-m", "jobs.cli", "--help"], capture_output=True, text=True).stdout
    assert "-lexicon" not in top and "-template" not in top and "coreset-build" not in top
    listed = [line.split()[0] for line in top.splitlines() if line.startswith("  ") and not line.lstrip().startswith("-")]
    assert listed == [c.name for c in COMMANDS]
    lexicon_help = subprocess.run([sys.executable, "-m", "jobs.cli", "geo", "lexicon", "--help"], capture_output=True, text=True).stdout
    assert lexicon_help.startswith("usage: benchaudit geo lexicon") and "--rejected" in lexicon_help


def test_version_prints_the_package_version():
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"benchaudit {metadata.version('benchaudit')}"


def test_an_option_that_cannot_apply_is_an_error(capsys):
    assert main(["geo", "--url-column", "url", "--out", "/nonexistent/never"]) == 2
    assert "--url-column applies only together with --input" in capsys.readouterr().err
    assert main(["scorers", "--answer-column", "a"]) == 2
    assert "--answer-column applies only together with --answers" in capsys.readouterr().err
    assert not Path("/nonexistent/never").exists()


def test_config_errors_name_the_flag(capsys):
    assert main(["geo", "--bootstrap", "-5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["benchaudit geo: error: --bootstrap: Input should be greater than or equal to 0"]
    for job in (["conventions"], ["contamination"], ["coreset", "study"], ["landscape"]):  # 95 meant 95%: say a fraction
        assert main([*job, "--level", "95"]) == 2
        err = capsys.readouterr().err
        assert "--level: give a fraction between 0 and 1, e.g. 0.95 for a 95% interval (got 95" in err, (job, err)
    assert main(["geo", "--corpus", "no-colons"]) == 2
    assert "--corpus: 'no-colons': expected NAME:PRESET:PATH" in capsys.readouterr().err
    assert main(["geo", "--corpus", "x:nosuchpreset:/tmp"]) == 2
    assert "unknown preset 'nosuchpreset'" in capsys.readouterr().err


def test_help_explains_every_geo_option():
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "geo", "--help"], capture_output=True, text=True, check=True).stdout
    for flag in ("--corpus", "--group-column", "--write-records", "--lexicon-profile", "--address", "--resume", "--on-error",
                 "--seed", "--limit", "--max-skipped", "--connect-timeout", "--log-level"):
        assert flag in out
    assert "ray://" in out and "preset" in out and "--group-by" not in out  # old spellings stay out of help


@pytest.mark.slow  # exports two lexicons with their rejected candidates
def test_geo_lexicon_export(tmp_path, capsys):
    assert main(["geo", "lexicon", "--profile", "extended", "--to", str(tmp_path / "lex.csv"),
                 "--rejected", str(tmp_path / "rej.csv")]) == 0
    lex, rej = pd.read_csv(tmp_path / "lex.csv"), pd.read_csv(tmp_path / "rej.csv")
    assert "region" in set(lex.match_type) and {"alias", "reason"} <= set(rej.columns) and len(rej) > 100
    err = capsys.readouterr().err.splitlines()  # the rebuild behind --rejected takes seconds: it says what it does
    assert err[0].startswith("benchaudit geo lexicon: listing rejected candidates rebuilds the lexicon")
    assert err[1].startswith("benchaudit geo lexicon: step 1: the extended lexicon from its sources (")
    assert err[-1].startswith("benchaudit geo lexicon: done in ")
    assert main(["geo", "lexicon", "--to", str(tmp_path / "paper.parquet")]) == 0
    assert main(["geo", "lexicon", "--to", str(tmp_path / "paper.csv")]) == 0
    paper = pq.read_table(tmp_path / "paper.parquet").to_pandas()
    assert len(paper) == len(pd.read_csv(tmp_path / "paper.csv")) and "region" not in set(paper.match_type)
    # extended = paper + regions + the cased "US" (matched in capitals only) + country names without their article
    added = set(lex.query("match_type != 'region'").alias) - set(paper.alias)
    assert "US" in added and "Democratic Republic of Congo" in added
    assert added - {"US"} <= {form for form, *_ in article_forms()}


def test_bad_corpus_is_a_clear_error_with_exit_code_2(tmp_path, capsys):
    pq.write_table(pa.table({"caption": ["x"]}), tmp_path / "a.parquet")
    code = main(["geo", "--corpus", f"dc:datacomp:{tmp_path / 'a.parquet'}", "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and "a.parquet: mapped column(s)" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()  # refused before any work: nothing on disk


@pytest.mark.ray
def test_limit_is_recorded_in_the_manifest(ray_local, tmp_path, capsys):
    assert main(["conventions", "--limit", "5", "--bootstrap", "100", "--out", str(tmp_path)]) == 0
    run_dir = capsys.readouterr().out.split("manifest: ")[1].strip()
    manifest = json.loads(Path(run_dir).read_text())
    assert manifest["limit"] == 5 and manifest["config"]["limit"] == 5
    assert manifest["rows"]["in"] == 10  # the first 5 items of each of the two shipped benchmarks


def test_a_run_says_where_the_index_of_runs_is(tmp_path, capsys):
    assert main(["geo", "--limit", "50", "--bootstrap", "0", "--out", str(tmp_path / "runs")]) == 0
    first, *rest = capsys.readouterr().out.strip().splitlines()
    assert first == f"index: {tmp_path / 'runs' / 'index.html'}" and (tmp_path / "runs" / "index.html").is_file()
    assert [line.split(":")[0] for line in rest] == ["report", "summary", "manifest"]


def test_ls_presets_advises_only_current_flags(capsys):
    """A preset's note ("add --group-column language ...") names flags as ``--help`` shows them, never an old spelling."""
    import re

    assert main(["ls", "presets"]) in (0, None)
    advised = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", capsys.readouterr().out))
    current = {flag for path in PATHS for flag in options(parser_of(path))}
    assert "--group-column" in advised and advised <= current, sorted(advised - current)
