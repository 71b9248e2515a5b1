"""Every README and docs/ command runs here, as written, on the shipped data: only its outputs go to a
temporary root, where it has them and sets none ``--limit`` and ``--bootstrap`` are made small, and a model command's
``--sample`` is capped at 3 and its ``--router-max-tokens`` at 16 (the same code path on fewer items and shorter rewrites).
The commands that cannot are listed one by one in ``ELSEWHERE`` with why (a cluster, an object store,
an endpoint, a GPU-class model, or runs and files only the reader has); a command that needs any of
these and is not listed there fails ``test_every_command_that_cannot_run_here_is_listed``."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from jobs.cli import main
from jobs.common.cli.flags import resolve
from tests.test_readme import ROOT, argv_of, readme_commands

pytestmark = [pytest.mark.ray, pytest.mark.slow]

OUTPUTS = ("--out", "--to", "--rejected", "--fetch-to")  # where a command writes: sent to the test's root
SMALL = {"--limit": "30", "--bootstrap": "50"}
# a model command's items and rewrite lengths, capped: the run as written, on fewer and shorter calls (a test of "it runs")
CAPS = {"--sample": 3, "--router-max-tokens": 16}
PLACEHOLDER = re.compile(r"<[^>]*>|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b(?![.\w])")  # <id>, RUN_ID, MODEL (not TruthfulQA.csv)
NEEDS_OUTSIDE = ("://", "--address", "submit ")


def _paths(value: str) -> list[str]:
    """The file paths inside one argument: ``NAME:PRESET:PATH``, ``name=PATH`` or the value itself."""
    if value.startswith("-"):
        return []
    last = value.rsplit(":", 1)[-1].split("=", 1)[-1]
    return [last] if "/" in last or re.search(r"\.[A-Za-z][\w.]{1,8}$", last) else []


def why_not_runnable(line: str) -> str | None:
    argv = argv_of(line)
    if any(token in line for token in NEEDS_OUTSIDE):
        return "needs a cluster, an endpoint or an object store"
    if PLACEHOLDER.search(" ".join(argv)):
        return "has a placeholder"
    skip_next = False
    for token in argv:
        if skip_next:
            skip_next = False
            continue
        if token in OUTPUTS:
            skip_next = True
            continue
        for path in _paths(token):
            if not (ROOT / path).exists():
                return f"names {path}, a file of the reader's own"
    return None


def as_run(line: str, root: Path) -> list[str]:
    """The command's arguments with its outputs under ``root`` and small limits where it takes them."""
    argv, out = [], []
    tokens = iter(argv_of(line))
    for token in tokens:
        if token in CAPS:
            value = next(tokens)
            argv += [token, str(min(int(value), CAPS[token])) if value.isdigit() else value]
            continue
        if token in OUTPUTS:
            value = next(tokens)
            out += [token, str(root / Path(value).name)] if token != "--out" else []
            continue
        argv.append(token)
    bound = resolve(argv) if "--help" not in argv else None
    # the flags a reader is shown: a deprecated spelling (hidden from help, e.g. geo lexicon's old --out for --to)
    # is not one to add
    accepted = ({o for a in bound.parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings}
                if bound else set())
    if "--out" in accepted:
        out += ["--out", str(root / "runs")]
    for flag, value in SMALL.items():
        if flag in accepted and flag not in argv:
            out += [flag, value]
    return [*argv, *out]


CLUSTER, STORE, ENDPOINT, GPU = "a Ray cluster", "an object store", "a model endpoint", "a GPU-class model from the hub"
# Each command a page shows that cannot run on this machine (by the start of its line), and why.
ELSEWHERE = {
    "benchaudit geo --corpus datacomp:datacomp:'s3://bucket": f"{STORE} and {CLUSTER}",
    "benchaudit landscape --model hf:Qwen/Qwen2.5-7B-Instruct": GPU,
    "benchaudit landscape --from-lm-eval lm-eval-logs/": "the reader's lm-eval --log_samples output",
    "benchaudit landscape --from-lm-eval leaderboard-logs/": "the reader's lm-eval --log_samples output of many models",
    "benchaudit contamination --worker-model openai:http://127.0.0.1:8000": ENDPOINT,
    "benchaudit contamination --benchmark arc:arc:connectors/samples/benchmarks/arc_challenge_test.jsonl "
    "--worker-model hf:Qwen": GPU,
    "benchaudit contamination --outcomes runs/contamination/<id>": "a contamination run of the reader's (its id)",
    "benchaudit coreset build --input 's3://bucket": f"{STORE} and {CLUSTER}",
    "benchaudit coreset estimate --design runs/coreset-build/<run-id>": "a build run and prediction files of the reader's",
    "benchaudit coreset study --input table.parquet": "the reader's labelled table",
    "benchaudit docs --cards cards/ --cards croissant.json": "the reader's cards and reviewer sheets",
    "benchaudit docs template --conventions-run runs/conventions/<id>": "runs of the reader's (their ids)",
    "benchaudit geo --corpus datacomp:datacomp:/data/datacomp": f"the reader's corpora and {STORE}",
    "benchaudit geo --corpus wit:wit:'gs://bucket": STORE,
    "benchaudit geo --input shards/ --format webdataset": "the reader's img2dataset tars",
    "benchaudit landscape --benchmark mmlu:mmlu:connectors/samples/benchmarks/mmlu_redux --benchmark arc": f"{GPU}, {ENDPOINT} "
                                                                                                        f"and {CLUSTER}",
    "benchaudit submit geo --address http://127.0.0.1:8275": CLUSTER,
    "benchaudit submit status --address http://127.0.0.1:8275": CLUSTER,
    "benchaudit submit geo --address http://HEAD:8265": f"{CLUSTER} and {STORE}",
    "benchaudit submit reaudit --address http://HEAD:8265": f"{CLUSTER} and {STORE}",
    "benchaudit runs show --out /tmp/audits --run-id RUN_ID": "runs in the reader's run root",
    "benchaudit runs compare --out /tmp/audits --run-id RUN_ID": "runs in the reader's run root",
    "benchaudit runs compare --out /tmp/audits --base OTHER_ID": "runs in the reader's run root",
    "benchaudit scorers --benchmark tqa:truthfulqa:TruthfulQA.csv --answers": "the reader's model answers",
    "benchaudit scorers --benchmark tqa:truthfulqa:TruthfulQA.csv --variants": "the reader's reviewed variants",
    "benchaudit traces --rubric rubric.yaml --traces traces.parquet --design": "a build run and traces of the reader's",
}


def elsewhere(line: str) -> str | None:
    return next((why for start, why in ELSEWHERE.items() if " ".join(line.split()).startswith(start)), None)


RUNNABLE = list({tuple(argv_of(c)): c for c in readme_commands() if elsewhere(c) is None}.values())
# one test per distinct run: commands that differ only where a run here changes them (their --out, a --sample above
# the cap) make the same run, and one of them runs for all
RUNS = list({tuple(as_run(c, Path("/root"))): c for c in RUNNABLE}.values())


def test_every_command_that_cannot_run_here_is_listed():
    """No command is left out by a rule: one that names a placeholder, an address, a bucket or a file the
    checkout lacks is listed in ELSEWHERE with why, and every entry there is still on a page."""
    commands = [" ".join(c.split()) for c in readme_commands()]
    unlisted = [c for c in commands if why_not_runnable(c) is not None and elsewhere(c) is None]
    assert unlisted == [], unlisted
    stale = [start for start in ELSEWHERE if not any(c.startswith(start) for c in commands)]
    assert stale == [], stale
    assert len(RUNNABLE) >= 30, RUNNABLE


@pytest.mark.parametrize("line", RUNS, ids=[" ".join(argv_of(c))[:80] for c in RUNS])
def test_the_command_runs_as_written(line, ray_local, tmp_path, capsys):
    argv = as_run(line, tmp_path)
    if "--help" in argv:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        return
    (tmp_path / "runs").mkdir(exist_ok=True)  # the run root a reader's earlier commands made (runs list reads it)
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, f"{' '.join(argv)}\n{captured.err[-2000:]}"
