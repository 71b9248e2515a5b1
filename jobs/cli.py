"""``benchaudit``: one command, a subcommand per job, found in the registry (``jobs.common.cli.registry``).

    benchaudit geo                       # the embedded default: shipped captions, local Ray
    benchaudit geo --corpus wit:wit:s3://bucket/wit/*.tsv.gz --group-column language --address auto
    benchaudit geo lexicon --profile extended --to lexicon.csv --rejected rejected.csv
    benchaudit coreset build --input targets.parquet --tau 0.8

``--help``, ``--version`` and a mistyped command are answered from the registry alone; a command
line imports only the command it names (its options), and the job's science, Ray and model
libraries only when it runs.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from jobs.common.cli.registry import JOBS, OPERATIONS

DESCRIPTION = "Audits of what AI benchmark scores and caption corpora measure, on Ray."


def version() -> str:
    from importlib import metadata

    try:
        return metadata.version("benchaudit")
    except metadata.PackageNotFoundError:
        return "unknown"


def top_help() -> str:
    """``benchaudit --help``: the registry as a table."""
    width = max(len(c.name) for c in JOBS + OPERATIONS) + 2

    def rows(entries) -> str:
        return "\n".join(f"  {c.name:<{width}}{c.help}" for c in entries)

    return (f"usage: benchaudit COMMAND [options]   (benchaudit COMMAND --help: its options, with their defaults)\n\n"
            f"{DESCRIPTION}\n\njobs:\n{rows(JOBS)}\n\nother commands:\n{rows(OPERATIONS)}\n\n"
            f"options:\n  -h, --help  show this help and exit\n  --version   show the version and exit\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(top_help(), end="")
        return 0 if args else 2
    if args[0] == "--version":
        print(f"benchaudit {version()}")
        return 0
    from jobs.common.cli.flags import UsageError, resolve

    try:
        bound = resolve(args)
    except UsageError as exc:
        print(f"{exc.prog}: error: {exc}\n(see '{exc.prog} --help')", file=sys.stderr)
        return 2
    command = bound.command
    if command.run is None:  # 'benchaudit coreset' alone: show what exists
        bound.parser.print_help()
        return 2
    return run(bound, embedded=argv is not None)


def run(bound, embedded: bool) -> int:
    """Run a resolved command: at most three lines on failure, the output paths on success."""
    from jobs.common.cli.config import RunOptions
    from jobs.common.cli.flags import make_config
    from jobs.common.cli.registry import attribute
    from jobs.common.runtime.errors import failure_lines, format_traceback
    from jobs.common.runtime.ray_start import hush_native_noise

    command = bound.command
    if command.replaced_by:
        print(f"{bound.prog}: warning: deprecated; use '{command.replaced_by}'", file=sys.stderr)
    log_level = bound.given.get("log_level", "info")
    if log_level != "debug" and not embedded:  # a real command line, not a caller embedding main()
        hush_native_noise()
    import logging

    logging.basicConfig(level=logging.DEBUG if log_level == "debug" else logging.WARNING, format="%(message)s")
    try:
        opts = make_config(RunOptions, bound.given)
        cfg = make_config(command.config, bound.given) if command.config is not None else None
        result = attribute(command.run)(cfg, opts)
    except BaseException as exc:  # noqa: BLE001 -- every failure becomes at most three lines
        if isinstance(exc, SystemExit):
            raise
        if log_level == "debug":
            print(format_traceback(exc), file=sys.stderr)
        print("\n".join(failure_lines(bound.prog, exc)), file=sys.stderr)
        return 130 if isinstance(exc, KeyboardInterrupt) else (1 if getattr(exc, "resumable", False) else 2)
    if log_level in ("debug", "info"):
        lines = [f"{name.rstrip('/').split('.')[0]}: {result}/{name}" for name in command.outputs] if command.outputs else [str(result)]
        if command.outputs and "out" in command.run_options:  # every run rewrites the run root's index of runs
            from connectors.runs.rundir import join

            lines.insert(0, f"index: {join(opts.out if '://' in opts.out else os.path.abspath(opts.out), 'index.html')}")
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
