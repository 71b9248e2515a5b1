"""One invocation of a job, from start to commit: Ray, the run directory, errors, skip limits, manifest.

Every job's ``run`` plans and validates its inputs first (bad config or input fails before any
run directory exists), then makes a ``JobRun``, which checks the run root (an object store's bucket
must exist and accept the credentials; it is never created) before any work. Entered, it joins or
starts Ray (failing fast on an address that does not answer), creates and locks the run directory,
runs the shard scan, and on ``commit`` checks the skip limits, writes the manifest and moves the
run into place. When anything fails inside, the traceback goes to ``<run>/.partial/error.log``,
the lock is released and the exception carries the partial folder and whether ``--resume`` can
help. A Ray that did not start is transient (exit 1); a run it stopped before any work is removed
with its history entry, so it leaves no empty unfinished run.

Every run is also recorded in the run store of its run root (``<out>/_runs``, see
``connectors.runs.store``): ``incomplete`` when its directory is created, ``complete`` with its
inputs, code version and headline rows at commit, and ``failed`` (or ``incomplete`` when
``--resume`` can finish it) when it stops.
"""
from __future__ import annotations

import logging
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fsspec.core import url_to_fs
from pydantic import BaseModel

from connectors.io.read_report import InputError
from connectors.runs.output import check_run_root
from connectors.runs.rundir import RunDir, join, new_run_id, read_json, remove_if_only_folders, write_json, write_parquet, write_text
from connectors.runs.store import RunEntry, Status, code_version, drop_run, record_run, store_of
from jobs.common.cli.config import ConfigError, RunOptions, config_hash, non_default_options
from jobs.common.models.answers import Skips
from jobs.common.runtime.errors import JobError, format_traceback, is_transient, one_line
from jobs.common.runtime.manifest import StageTimer, base_manifest
from jobs.common.runtime.ray_start import RayStartError, init_ray
from jobs.common.runtime.shards import LIVE_DIR, Shard, ShardScan, ShardTask, choose_executor, run_shards
from jobs.common.runtime.summaries import check_summary

log = logging.getLogger(__name__)


def job_code_version(config: BaseModel) -> str | None:
    """The code version of the job package that declares ``config`` (``jobs.geo`` for GeoConfig)."""
    parts = type(config).__module__.split(".")
    if parts[0] != "jobs" or len(parts) < 2:
        return None
    return code_version(".".join(parts[:2]))


@dataclass(frozen=True)
class SkipCheck:
    """What ``JobRun.check_skips`` weighs (see there): rows read, usable, skipped, left unread, inputs failed."""

    rows_in: int
    rows_out: int
    skipped: int
    unread: int = 0
    failed: list[dict] = field(default_factory=list)
    first_skip: str | None = None
    reasons: Skips | None = None
    unit: str = "rows"


class JobRun:
    """``with JobRun(job, cfg, opts, payload) as run:`` ... ``return run.finish(summary, render, ...)``."""

    def __init__(self, job: str, config: BaseModel, opts: RunOptions, payload: dict, *, seed: int | None,
                 timer: StageTimer | None = None, use_ray: bool | str = True):
        self.job, self.config, self.opts, self.payload, self.seed = job, config, opts, payload, seed
        self.timer = timer or StageTimer()
        self.use_ray = use_ray
        self.hash = config_hash(payload)
        self.options = non_default_options(config)
        self.ray_info: dict | None = None
        self.scan_result: ShardScan | None = None
        self._dir: RunDir | None = None
        self.executor = "ray" if use_ray else "driver"
        self.store = store_of(opts.out)
        self.code_version = job_code_version(config)
        check_run_root(opts.out)
        fs, root = url_to_fs(opts.out)
        # a local run root this run makes is removed again with a run that did no work (see ``_discard``)
        self._made_root: str | None = None if "://" in opts.out or fs.exists(root) else root

    def start_ray(self) -> None:
        """Join or start Ray (bounded by --connect-timeout); a job whose work leaves nothing to resume
        calls it before ``with``, so a failure of that work leaves no run directory at all."""
        if self.ray_info is None:
            with self.timer("ray_init"):
                self.ray_info = init_ray(self.opts.address, self.opts.num_cpus, self.opts.connect_timeout, self.opts.log_level)

    def __enter__(self) -> JobRun:
        # use_ray="scan": Ray only when the shard scan runs on it; a given --address is still joined
        # here, so an address that does not answer fails before any run directory exists.
        if self.use_ray is True or (self.use_ray == "scan" and self.opts.address):
            self.start_ray()
        # A new run's id is made from the moment the job started (its recorded start), not from now:
        # planning may have taken a while, and the id should say when the run began.
        run_id = self.opts.run_id or (None if self.opts.resume else new_run_id(self.timer.start_time))
        self._dir = RunDir(self.opts.out, self.job, run_id, self.payload, self.hash, self.opts.resume)
        try:
            self.record("incomplete")
        except BaseException:
            self.dir.release()
            raise
        return self

    @property
    def dir(self) -> RunDir:
        """The run directory; it exists from ``with`` on."""
        if self._dir is None:
            raise RuntimeError(f"{self.job}: the run directory exists only inside 'with JobRun(...)'")
        return self._dir

    def __exit__(self, exc_type, exc, tb) -> None:  # never swallows the exception
        if exc is None or self._dir is None:
            return
        if isinstance(exc, (RayStartError, InputError, ConfigError)) and not self.dir.holds_finished_work():
            # Ray did not start, or the input was found bad before any shard finished: as if validated before
            # the run began, nothing is left behind (a rerun needs Ray up, or the input fixed; nothing to resume)
            self._discard()
            return
        if getattr(exc, "partial", None) is None:  # a shard failure has already written its worker's traceback
            try:
                self.dir.write_error_log(format_traceback(exc))
            except OSError:
                pass
        self.dir.release()
        for name, value in (("partial", self.dir.partial), ("run_id", self.dir.run_id)):
            try:
                setattr(exc, name, getattr(exc, name, None) or value)
            except AttributeError:
                pass
        if not hasattr(exc, "resumable"):
            try:
                exc.resumable = is_transient(exc)
            except AttributeError:
                pass
        resumable = bool(getattr(exc, "resumable", False))
        try:
            self.record("incomplete" if resumable else "failed", error=one_line(exc), resumable=resumable)
        except Exception as err:  # noqa: BLE001 -- the run's own error is the one to report
            log.warning("%s: could not record the run in %s: %s", self.job, self.store, one_line(err))

    def _discard(self) -> None:
        """Remove a run that did no work, its history entry and the run root when this run made it and it
        holds nothing else (only the empty folders the run and its history entry needed)."""
        try:
            self.dir.discard()
            drop_run(self.store, self.job, self.dir.run_id)
            if self._made_root is not None:
                remove_if_only_folders(self._made_root)
        except OSError as err:
            log.warning("%s: could not remove the unfinished run %s: %s", self.job, self.dir.partial, one_line(err))

    def record(self, status: Status, *, path: str | None = None, inputs: dict | None = None, headline: list | None = None,
               finished_at: str | None = None, error: str | None = None, resumable: bool = False) -> None:
        """Write this run's entry in the run store (see ``connectors.runs.store``)."""
        from datetime import datetime, timezone

        record_run(self.store, RunEntry(
            run_id=self.dir.run_id, job=self.job, status=status, path=path or self.dir.partial,
            started_at=self.timer.started_at, finished_at=finished_at or (None if status == "incomplete" and error is None
                                                                         else datetime.now(timezone.utc).isoformat()),
            config_hash=self.hash, config=self.options, code_version=self.code_version, inputs=inputs or {}, headline=headline or [],
            error=error, resumable=resumable))

    # -- work --------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self.dir.run_id

    def path(self, *parts: str) -> str:
        return self.dir.path(*parts)

    def scan(self, shards: list[Shard], task: ShardTask) -> ShardScan:
        """The shard scan on Ray, or in this process when ``choose_executor`` says it is small enough."""
        self.executor = choose_executor(self.opts, shards, task)
        self.scan_result = run_shards(self.job, self.dir, self.opts, self.timer, shards, task, self.executor, self.start_ray)
        return self.scan_result

    def write_json(self, name: str, obj: Any) -> None:
        write_json(self.path(name), obj)

    def write_text(self, name: str, text: str) -> None:
        write_text(self.path(name), text)

    def write_summary(self, summary: dict) -> None:
        """summary.json, checked: every job's has ``table``, tidy ``headline`` rows and a schema version."""
        write_json(self.path("summary.json"), check_summary(summary))

    def write_parquet(self, name: str, table) -> None:
        write_parquet(self.path(name), table)

    def report_info(self, *files: str):
        """What a report links and shows in its footer: this run, its config and seed, the data tables
        written so far (write the tables before the report) and ``files`` (other files of the run)."""
        from connectors.runs.tables import describe_tables
        from jobs.common.pages.html import RunInfo

        return RunInfo(self.job, self.run_id, self.config.model_dump(mode="json"), self.seed,
                       describe_tables(self.dir.partial), tuple(files))

    def write_table(self, table: str, data, partition: tuple[str, str] | None = None, part: str = "part-0") -> None:
        """A table the driver computed (a pandas or Arrow table), in the run-data convention:
        ``data/<table>/[<key>=<value>/]<part>.parquet`` (see ``connectors.runs.tables``)."""
        import pyarrow as pa

        from connectors.runs.tables import write_table

        if not isinstance(data, pa.Table):
            data = pa.Table.from_pandas(data, preserve_index=False)
        write_table(self.dir.partial, table, data, part, partition)

    # -- finish ------------------------------------------------------------------------------
    def check_skips(self, rows_in: int, rows_out: int, skipped_rows: int, unread_rows: int, failed_inputs: list[dict],
                    first_skip: str | None = None, reasons: Skips | None = None, unit: str = "rows") -> dict:
        """Refuse to report success when too much was skipped; the numbers go in the manifest.

        Skipped share = (rows skipped by reason + rows left unread) / (rows read + rows left unread).
        A run with no usable row is always an error. ``first_skip``: the first skipped row's message
        (file, row, field), named in the error so the user sees what to fix. ``reasons``: the skipped
        rows by reason (a model job's unusable answers, ``unit="model answers"``), whose top reasons the
        error names, whose transient share decides whether ``--resume`` is advised, and which a run
        within the limit shows as a warning on the terminal.
        """
        total = rows_in + unread_rows
        share = (skipped_rows + unread_rows) / total if total else 0.0
        limits = {"max_skipped": self.opts.max_skipped, "max_skipped_inputs": self.opts.max_skipped_inputs}
        facts = {"skipped_share": round(share, 6), "skipped_inputs": len(failed_inputs), **limits}
        why = f"; top reasons: {reasons.top()}" if reasons is not None and reasons.total else ""
        where = why + (f"; first skipped: {first_skip}" if first_skip else "") + f"; partial results are in {self.dir.partial}"
        allowed = math.floor(self.opts.max_skipped * total + 1e-9)
        resumable = reasons is not None and unread_rows == 0 and reasons.resumable(allowed)
        if rows_out == 0:
            counts = (f" (read {rows_in:,}, skipped {skipped_rows:,}, unread {unread_rows:,}, inputs skipped {len(failed_inputs)})"
                      if unit == "rows" else f": all {rows_in:,} unusable")
            raise JobError(f"{self.job}: no usable {unit}{counts}{where}", resumable=resumable)
        if len(failed_inputs) > self.opts.max_skipped_inputs:
            first = failed_inputs[0]
            what = first["error"] if first["file"] in first["error"] else f"{first['file']}: {first['error']}"
            raise JobError(f"{self.job}: {len(failed_inputs)} input(s) skipped, over --max-skipped-inputs "
                           f"{self.opts.max_skipped_inputs} (first: {what}){where}")
        if share > self.opts.max_skipped:
            accept = math.ceil(share * 1000) / 1000  # the smallest limit, to 0.001, that would let this run succeed
            lost = "skipped or unread" if unit == "rows" else "unusable"
            raise JobError(f"{self.job}: {share:.2%} of {unit} {lost} ({skipped_rows + unread_rows:,} of {total:,}), "
                           f"over --max-skipped {self.opts.max_skipped:g} (--max-skipped {accept:g} would accept it){where}",
                           resumable=resumable)
        if reasons is not None and reasons.total and self.opts.log_level != "error":
            print(f"{self.job}: warning: {reasons.total:,} of {total:,} {unit} unusable ({share:.2%}, within --max-skipped "
                  f"{self.opts.max_skipped:g}): {reasons.top()}", file=sys.stderr, flush=True)
        return facts

    def finish(self, summary: dict, render: Callable[[dict, Any], str], *, files: tuple[str, ...] = (),
               skips: SkipCheck | None = None, timings: dict | None = None, **extra: Any) -> str:
        """The end every job shares, in its order: ``summary.json``, ``report.html`` (``render(summary,
        report_info)``; write the run's tables before, so the report lists them; ``files``: other
        files it links), the skip limits (``skips``: refuse to report success on too little read),
        the manifest (the shared fields, ``skip_limits``, the failed inputs, ``timings`` added to the
        stage times, then ``extra``) and the commit (``commit_checked``: a run the limits refuse keeps its
        manifest in the partial folder). Returns the final run directory."""
        with self.timer("report"):
            self.write_summary(summary)
            self.write_text("report.html", render(summary, self.report_info(*files)))
        manifest = self.manifest(**extra)
        manifest["timings"].update(timings or {})
        if skips is None:
            return self.commit(manifest)
        if "shards" in manifest:
            manifest["shards"]["failed"] = skips.failed  # a job's own unreadable inputs too (a file no planner could open)
        return self.commit_checked(manifest, skip_limits=lambda: self.check_skips(
            skips.rows_in, skips.rows_out, skips.skipped, skips.unread, skips.failed, skips.first_skip, skips.reasons, skips.unit))

    def manifest(self, **extra: Any) -> dict:
        """The shared manifest fields, the scan's shard and timing facts, then the job's own."""
        m = base_manifest(self.job, self.run_id, self.config, self.opts, self.hash, self.seed, self.timer, self.ray_info)
        m["code_version"] = self.code_version
        scan = self.scan_result
        m["timings"] = {**self.timer.seconds, "wall_s": self.timer.wall()}
        m["executor"] = self.executor
        if scan is not None:
            m["shards"] = {"total": len(scan.results), "resumed": scan.resumed, "run": scan.run, "failed": scan.failed,
                           "partially_read": scan.partially_read()}
            m["timings"].update(scan_rows_per_s=round(scan.progress.rate(), 1), progress=scan.progress.samples)
        m.update(extra)
        return m

    def commit_checked(self, manifest: dict, **checks: Callable[[], dict]) -> str:
        """Run the skip checks (each one's facts go in the manifest under its name), then commit: manifest.json
        is written once. A check that refuses the run leaves the manifest, with the checks that passed, in the
        partial folder (``--resume`` and people read it there) before its error goes on."""
        for name, check in checks.items():
            try:
                manifest[name] = check()
            except JobError:
                self.write_json("manifest.json", manifest)
                raise
        return self.commit(manifest)

    def commit(self, manifest: dict) -> str:
        """Write the manifest (with the ``data`` tables the run wrote), move the run into place, and
        refresh the run root's ``index.html``."""
        from connectors.runs.tables import describe_tables
        from jobs.common.pages.index import refresh_index

        manifest.setdefault("data", describe_tables(self.dir.partial))
        fs, live = url_to_fs(join(self.dir.partial, LIVE_DIR))  # the running shards' row counters
        if fs.exists(live):
            fs.rm(live, recursive=True)
        self.write_json("manifest.json", manifest)
        final = self.dir.commit()
        self._record_complete(final, manifest)
        refresh_index(self.opts.out, quiet=self.opts.log_level in ("warning", "error"))
        return final

    def _record_complete(self, final: str, manifest: dict) -> None:
        try:
            summary = read_json(join(final, "summary.json"))
        except (OSError, ValueError):
            summary = {}
        headline = summary.get("headline") if isinstance(summary.get("headline"), list) else []
        try:
            self.record("complete", path=final, inputs=manifest.get("inputs") or {}, headline=headline,
                        finished_at=manifest.get("finished_at"))
        except Exception as err:  # noqa: BLE001 -- the run is complete; only its history entry is missing
            log.warning("%s: run %s is complete but could not be recorded in %s: %s", self.job, self.run_id, self.store,
                        one_line(err))
