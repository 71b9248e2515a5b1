"""Pieces every job's command line shares: the run options (out, run id, resume, Ray address …)."""
from __future__ import annotations

import argparse

from jobs.config import RunOptions


def add_run_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("running")
    for name, field in RunOptions.model_fields.items():
        flag = "--" + name.replace("_", "-")
        if field.annotation is bool:
            g.add_argument(flag, action="store_true", help=field.description)
        elif name == "on_error":
            g.add_argument(flag, choices=["fail", "skip"], default=field.default, help=field.description)
        else:
            g.add_argument(flag, type=int if name == "num_cpus" else str, default=field.default, help=field.description)


def run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(**{k: getattr(args, k) for k in RunOptions.model_fields})


def split_list(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None
