"""``benchaudit runs``: read the run store of a run root and print it for people (a table) or scripts (``--json``)."""
from __future__ import annotations

import json
import os
from collections.abc import Sequence

from audit.stats.deltas import MetricDelta, compare_headlines
from connectors.runs.output import check_run_root
from connectors.runs.store import RunEntry, get_run, list_runs, store_of
from jobs.common.cli.config import ConfigError, RunOptions
from jobs.common.pages.history import config_differences, differences_text, headline_text, inputs_text, options_text, same_config
from jobs.runs.config import RunsCompareConfig, RunsListConfig, RunsShowConfig


def text_table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """Columns padded to their widest cell (``-`` for a missing value)."""
    cells = [[str(h) for h in header]] + [["-" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)


def number(v: float | None) -> str | None:
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None if v is None else str(v)
    return f"{v:,}" if isinstance(v, int) else f"{v:.4g}"


def _store(opts: RunOptions) -> str:
    """The run store of --out; a folder or bucket that does not exist, or refuses the credentials, is an error
    naming it, not an empty history (these commands only read: nothing is created)."""
    if "://" not in opts.out and not os.path.isdir(opts.out):
        what = "is not a folder" if os.path.exists(opts.out) else "does not exist"
        raise ConfigError(f"--out {opts.out}: the folder {what}; give the run root the runs were written to (their --out)")
    check_run_root(opts.out)
    return store_of(opts.out)


def list_command(cfg: RunsListConfig, opts: RunOptions) -> str:
    store = _store(opts)
    runs = [e for e in list_runs(store, cfg.job) if cfg.status is None or e.status == cfg.status]
    if cfg.as_json:
        return json.dumps([e.to_json() for e in runs], indent=1)
    if not runs:
        return f"no runs recorded in {store}"
    return text_table([(e.run_id, e.job, e.status, (e.started_at or "")[:19], options_text(e.config), inputs_text(e) or None,
                        headline_text(e, lambda v: number(v) or "-") or None, e.code_version, e.path) for e in runs],
                      ("RUN ID", "JOB", "STATUS", "STARTED (UTC)", "CONFIG", "INPUTS", "HEADLINE", "CODE", "PATH"))


def _chosen(store: str, run_id: str | None, complete: bool) -> RunEntry:
    """The run ``--run-id`` names (a unique prefix is enough), else the latest (complete) run."""
    if run_id:
        return get_run(store, run_id)
    runs = [e for e in list_runs(store) if e.status == "complete" or not complete]
    if not runs:
        raise ConfigError(f"--run-id: no {'complete ' if complete else ''}run recorded in {store} to default to")
    return runs[-1]


def show_command(cfg: RunsShowConfig, opts: RunOptions) -> str:
    entry = _chosen(_store(opts), cfg.run_id, complete=False)
    if cfg.as_json:
        return json.dumps(entry.to_json(), indent=1)
    lines = [f"run {entry.run_id}  job {entry.job}  {entry.status}" + (f": {entry.error}" if entry.error else ""),
             f"path      {entry.path}", f"started   {entry.started_at}", f"finished  {entry.finished_at or '-'}",
             f"options   {options_text(entry.config)}", f"config    {entry.config_hash or '-'}",
             f"code      {entry.code_version or '-'}"]
    for name, info in entry.inputs.items():
        fp = info.get("fingerprint") if isinstance(info, dict) else info
        lines.append(f"input     {name}: {fp}")
    if entry.headline:
        lines += ["", text_table([(r["input"], r["metric"], number(r["value"]), number(r["ci_low"]), number(r["ci_high"]))
                                  for r in entry.headline], ("INPUT", "METRIC", "VALUE", "CI LOW", "CI HIGH"))]
    return "\n".join(lines)


def earlier_complete(runs: Sequence[RunEntry], entry: RunEntry) -> list[RunEntry]:
    """The complete runs of the same job started before ``entry``, oldest first."""
    return [e for e in runs if e.job == entry.job and e.status == "complete" and e.run_id != entry.run_id
            and (e.started_at or "") <= (entry.started_at or "")]


def previous_complete(runs: Sequence[RunEntry], entry: RunEntry) -> RunEntry | None:
    """The last complete run of the same job *and the same options* started before ``entry``: like for like."""
    like = [e for e in earlier_complete(runs, entry) if same_config(e, entry)]
    return like[-1] if like else None


def delta_table(deltas: Sequence[MetricDelta]) -> str:
    return text_table([(d.input, d.metric, number(d.old), number(d.new), number(d.delta),
                        None if d.delta_low is None else f"[{d.delta_low:.4g}, {d.delta_high:.4g}]", d.status)
                       for d in deltas], ("INPUT", "METRIC", "OLD", "NEW", "DELTA", "INTERVAL", "STATUS"))


def _no_base(entry: RunEntry, runs: Sequence[RunEntry]) -> ConfigError:
    """Why there is nothing like for like to compare with, and the runs --base could still name."""
    others = earlier_complete(runs, entry)[-3:]
    other = ("; earlier complete runs with other options: " + ", ".join(
        f"{e.run_id} ({differences_text(config_differences(e, entry))})" for e in reversed(others))
        + " (give --base RUN_ID to compare with one anyway)") if others else ""
    return ConfigError(f"run {entry.run_id} has no earlier complete {entry.job} run with the same options "
                       f"({options_text(entry.config)}) to compare with{other or ' (none with other options either)'}")


def compare_command(cfg: RunsCompareConfig, opts: RunOptions) -> str:
    store = _store(opts)
    entry = _chosen(store, cfg.run_id, complete=True)
    base: RunEntry | None
    if cfg.base:
        base = get_run(store, cfg.base)
    else:
        runs = list_runs(store, entry.job)
        base = previous_complete(runs, entry)
        if base is None:
            raise _no_base(entry, runs)
    if base.job != entry.job:
        raise ConfigError(f"--base {base.run_id} is a {base.job} run, --run-id {entry.run_id} a {entry.job} run")
    differ = config_differences(base, entry)
    deltas = compare_headlines(base.headline, entry.headline)
    if cfg.as_json:
        return json.dumps({"base": base.run_id, "run": entry.run_id, "job": entry.job,
                           "config_differences": [{"option": k, "base": a, "run": b} for k, a, b in differ],
                           "metrics": [d.as_dict() for d in deltas]}, indent=1)
    warning = (f"warning: the two runs' options differ ({differences_text(differ)}): the deltas mix a change of "
               "configuration with any change over time\n") if differ else ""
    head = f"{entry.job}: {entry.run_id} against {base.run_id} (intervals: MOVER from both runs' intervals)"
    return warning + head + "\n" + delta_table(deltas)
