"""The command line answers at once: help, --version and a flag error load no science, data frame,
statistics, scoring, model or Ray library (checked in a fresh interpreter, by module name, not timed)."""
from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pyarrow", "pandas", "numpy", "scipy", "statsmodels", "nltk", "rouge_score", "sacrebleu", "torch", "transformers",
         "ray", "fsspec", "duckdb")


def loaded_after(code: str) -> dict:
    """Top-level packages and project modules in ``sys.modules`` after ``code`` runs in a new interpreter."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()[-1]
    modules = json.loads(out)
    return {"heavy": sorted({m.split(".")[0] for m in modules} & set(HEAVY)),
            "project": sorted(m for m in modules if m.split(".")[0] in ("audit", "connectors"))}


def test_building_every_parser_loads_no_heavy_module():
    found = loaded_after("from jobs.common.cli.flags import leaf_parser, walk\nfrom jobs.common.cli.registry import COMMANDS\n"
                         "for path in walk(COMMANDS):\n    leaf_parser(path).format_help()")
    assert found["heavy"] == []
    # the only project modules a parser may load are the ones holding names as data
    assert [m for m in found["project"] if m.rsplit(".", 1)[-1] not in ("choices", "presets", "spec")
            and m not in ("audit", "connectors") and m.count(".") > 1] == []


def test_help_version_and_a_flag_error_load_no_heavy_module():
    for argv in (["--help"], ["--version"], ["geo", "--help"], ["landscape", "--no-such-flag"], ["gep"]):
        code = f"import sys\nfrom jobs.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
        assert loaded_after(code)["heavy"] == [], argv


def test_a_mistyped_option_names_itself_and_the_close_match():
    done = subprocess.run([sys.executable, "-m", "jobs.cli", "geo", "--lexicon-profle", "paper"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "benchaudit geo: error: unknown option --lexicon-profle (did you mean '--lexicon-profile'?)"
    done = subprocess.run([sys.executable, "-m", "jobs.cli", "coreset", "biuld"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown command 'biuld' (did you mean 'build'?)" in done.stderr


# the statistics libraries a run uses on the driver after its scan or model stage; each costs ~1 s to import
DRIVER_STATISTICS = ("scipy.stats", "statsmodels.api", "statsmodels")


# (coreset's build and study programs are Ray tasks at module level: they import Ray, so they are not in this tier;
# the statistics they share with ``coreset.estimate`` are checked through it)
RUN_MODULES = ("geo.run", "landscape.run", "contamination.run", "coreset.estimate", "conventions.run", "docs.run",
               "traces.run")


def test_a_jobs_run_modules_start_without_the_statistics_libraries():
    """What a worker and each run's start import (``jobs.<job>.run``) loads no statistics library: they are imported
    where a statistic is computed. Before, importing ``jobs.contamination.run`` took 2.5 s, 1.5 of it scipy.stats.
    One interpreter imports them one after the other and says which one loaded what."""
    probe = (f"import importlib, json, sys\nfound = {{}}\nfor m in {RUN_MODULES!r}:\n    importlib.import_module('jobs.' + m)\n"
             f"    found[m] = sorted(set(sys.modules) & set({DRIVER_STATISTICS!r}))\nprint(json.dumps(found))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()[-1]
    assert {m: heavy for m, heavy in json.loads(out).items() if heavy} == {}
