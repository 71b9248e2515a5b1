"""``benchaudit``: one command, a subcommand per job (a registry line each).

    benchaudit geo                       # the embedded default: shipped captions, local Ray
    benchaudit geo --corpus wit:wit:s3://bucket/wit/*.tsv.gz --group-column language --address auto
    benchaudit geo lexicon --profile extended --to lexicon.csv --rejected rejected.csv
    benchaudit coreset build --input targets.parquet --tau 0.8
"""
from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Sequence
from importlib import metadata

from jobs.common.config import RunOptions
from jobs.common.errors import failure_lines, format_traceback
from jobs.common.flags import Command, build_parser, make_config, parse
from jobs.common.ray_start import hush_native_noise

# The registry: each module holds one top-level ``COMMAND`` (with its nested subcommands).
JOB_CLIS = ("jobs.geo.cli", "jobs.conventions.cli", "jobs.scorers.cli", "jobs.docs.cli", "jobs.coreset.cli",
            "jobs.traces.cli", "jobs.landscape.cli",
            "jobs.contamination.cli",
            "jobs.runs.cli", "jobs.reaudit.cli", "jobs.submit.cli", "jobs.report.cli")


def commands() -> list[Command]:
    return [importlib.import_module(m).COMMAND for m in JOB_CLIS]


def version() -> str:
    try:
        return metadata.version("benchaudit")
    except metadata.PackageNotFoundError:
        return "unknown"


def _import(target: str):
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(commands(), version())
    bound = parse(parser, sys.argv[1:] if argv is None else argv)
    if bound is None or bound.command.run is None:  # 'benchaudit' or 'benchaudit coreset' alone: show what exists
        (parser if bound is None else bound.parser).print_help()
        return 2
    command = bound.command
    if command.replaced_by:
        print(f"{bound.prog}: warning: deprecated; use '{command.replaced_by}'", file=sys.stderr)
    log_level = bound.given.get("log_level", "info")
    if log_level != "debug" and argv is None:  # a real command line, not a caller embedding main()
        hush_native_noise()
    logging.basicConfig(level=logging.DEBUG if log_level == "debug" else logging.WARNING, format="%(message)s")
    try:
        opts = make_config(RunOptions, bound.given)
        cfg = make_config(command.config, bound.given) if command.config is not None else None
        result = _import(command.run)(cfg, opts)
    except BaseException as exc:  # noqa: BLE001 -- every failure becomes at most three lines
        if isinstance(exc, SystemExit):
            raise
        if log_level == "debug":
            print(format_traceback(exc), file=sys.stderr)
        print("\n".join(failure_lines(bound.prog, exc)), file=sys.stderr)
        return 130 if isinstance(exc, KeyboardInterrupt) else (1 if getattr(exc, "resumable", False) else 2)
    if log_level in ("debug", "info"):
        lines = [f"{name.rstrip('/').split('.')[0]}: {result}/{name}" for name in command.outputs] if command.outputs else [str(result)]
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
