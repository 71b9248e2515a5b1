"""``benchaudit runs``: read the run store of a run root and print it for people (a table) or scripts (``--json``)."""
from __future__ import annotations

import json
from collections.abc import Sequence

from audit.stats.deltas import MetricDelta, compare_headlines
from connectors.runs.output import check_run_root
from connectors.runs.store import RunEntry, get_run, list_runs, store_of
from jobs.common.config import ConfigError, RunOptions
from jobs.runs.config import RunsCompareConfig, RunsListConfig, RunsShowConfig


def text_table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """Columns padded to their widest cell (``-`` for a missing value)."""
    cells = [[str(h) for h in header]] + [["-" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)


def number(v: float | None) -> str | None:
    return None if v is None else f"{v:.4g}"


def _store(opts: RunOptions) -> str:
    """The run store of --out; a bucket that does not exist or refuses the credentials is an error naming it,
    not an empty history."""
    check_run_root(opts.out)
    return store_of(opts.out)


def list_command(cfg: RunsListConfig, opts: RunOptions) -> str:
    store = _store(opts)
    runs = [e for e in list_runs(store, cfg.job) if cfg.status is None or e.status == cfg.status]
    if cfg.as_json:
        return json.dumps([e.to_json() for e in runs], indent=1)
    if not runs:
        return f"no runs recorded in {store}"
    return text_table([(e.run_id, e.job, e.status, (e.started_at or "")[:19], e.code_version, e.path) for e in runs],
                      ("RUN ID", "JOB", "STATUS", "STARTED (UTC)", "CODE", "PATH"))


def _need_run_id(opts: RunOptions) -> str:
    if not opts.run_id:
        raise ConfigError("--run-id: give the run (a unique prefix of its id is enough; see 'benchaudit runs list')")
    return opts.run_id


def show_command(cfg: RunsShowConfig, opts: RunOptions) -> str:
    entry = get_run(_store(opts), _need_run_id(opts))
    if cfg.as_json:
        return json.dumps(entry.to_json(), indent=1)
    lines = [f"run {entry.run_id}  job {entry.job}  {entry.status}" + (f": {entry.error}" if entry.error else ""),
             f"path      {entry.path}", f"started   {entry.started_at}", f"finished  {entry.finished_at or '-'}",
             f"config    {entry.config_hash or '-'}", f"code      {entry.code_version or '-'}"]
    for name, info in entry.inputs.items():
        fp = info.get("fingerprint") if isinstance(info, dict) else info
        lines.append(f"input     {name}: {fp}")
    if entry.headline:
        lines += ["", text_table([(r["input"], r["metric"], number(r["value"]), number(r["ci_low"]), number(r["ci_high"]))
                                  for r in entry.headline], ("INPUT", "METRIC", "VALUE", "CI LOW", "CI HIGH"))]
    return "\n".join(lines)


def previous_complete(runs: Sequence[RunEntry], entry: RunEntry) -> RunEntry | None:
    """The last complete run of the same job started before ``entry``."""
    earlier = [e for e in runs if e.job == entry.job and e.status == "complete" and e.run_id != entry.run_id
               and (e.started_at or "") <= (entry.started_at or "")]
    return earlier[-1] if earlier else None


def delta_table(deltas: Sequence[MetricDelta]) -> str:
    return text_table([(d.input, d.metric, number(d.old), number(d.new), number(d.delta),
                        None if d.delta_low is None else f"[{d.delta_low:.4g}, {d.delta_high:.4g}]", d.status)
                       for d in deltas], ("INPUT", "METRIC", "OLD", "NEW", "DELTA", "INTERVAL", "STATUS"))


def compare_command(cfg: RunsCompareConfig, opts: RunOptions) -> str:
    store = _store(opts)
    entry = get_run(store, _need_run_id(opts))
    if cfg.base:
        base = get_run(store, cfg.base)
    else:
        base = previous_complete(list_runs(store, entry.job), entry)
        if base is None:
            raise ConfigError(f"--base: run {entry.run_id} has no earlier complete {entry.job} run to compare with; give --base")
    if base.job != entry.job:
        raise ConfigError(f"--base {base.run_id} is a {base.job} run, --run-id {entry.run_id} a {entry.job} run")
    deltas = compare_headlines(base.headline, entry.headline)
    if cfg.as_json:
        return json.dumps({"base": base.run_id, "run": entry.run_id, "job": entry.job,
                           "metrics": [d.as_dict() for d in deltas]}, indent=1)
    head = f"{entry.job}: {entry.run_id} against {base.run_id} (intervals: MOVER from both runs' intervals)"
    return head + "\n" + delta_table(deltas)
