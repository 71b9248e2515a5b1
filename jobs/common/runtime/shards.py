"""The shard contract: a job says what to set up once per worker and what to do with one shard;
the runner owns everything else.

A *shard* is a unit of work with a content-derived id (a file, a row-group range, a set of
questions): a typed ``connectors.io.shards.Shard``, which the runner ships to a worker as JSON and
the worker gets back as itself. A job supplies a ``ShardTask``:

* ``setup()`` -- build heavy state once per worker (a compiled lexicon, an inventory, a model);
* ``process(shard, out)`` -- read the shard, run the science, write per-shard tables through
  ``out`` and return a ``ShardResult``: rows seen, rows skipped by reason, rows it could not read,
  and a small mergeable ``partial`` (counts) for the driver.

The runner (``run_shards``) skips shards an earlier attempt finished, runs the rest on a Ray Data
actor pool (``map_batches`` with a class: the worker state lives in the actor, not in module
globals), turns any exception into a failed shard with its message and traceback, applies
``--on-error``, writes the ``shards/<id>.json`` done-marker, times each shard and reports progress
in rows. A Ray node lost mid-scan is survived where Ray can rerun its shards elsewhere, and stops the
scan resumably where it cannot (``jobs.common.runtime.nodes``); when Ray itself gives the loss up (its actors or the
blocks they made are gone for good: ``lost_to_ray``), the runner starts the scan again over the shards not
yet back, on the nodes that remain. Adding a CPU audit means writing a
``ShardTask``, nothing else.
"""
from __future__ import annotations

import json
import logging
import math
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
from fsspec.core import url_to_fs

from connectors.io.shards import Shard
from connectors.runs.rundir import RunDir, join, read_json, write_json
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.errors import JobError, is_transient, one_line
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.nodes import watch_nodes
from jobs.common.runtime.progress import Progress

log = logging.getLogger("benchaudit")


@dataclass
class ShardResult:
    """What ``process`` returns: counts for the manifest and a small mergeable partial."""

    rows_in: int
    partial: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)  # rows read but unusable, by reason
    unread_rows: int = 0  # rows a reader could not split out (lines of the byte ranges it gave up on)
    unread: list[dict] = field(default_factory=list)  # those ranges: {file, bytes: [start, stop], lines, why}


class ShardOutputs:
    """Per-shard parts of the run's tables: ``data/<table>/[<key>=<value>/]<shard-id>.parquet``.

    Why the runner hands them out: a failed shard's partly written files are removed with it, and a
    retried shard overwrites its own part instead of adding a duplicate. ``partition`` is
    ``(key, input name)`` for jobs whose runs take named inputs (``("corpus", "coco")``); the value
    lives in the folder name, not in the file (see ``connectors.runs.tables``).
    """

    def __init__(self, partial_dir: str, shard_id: str, report: Callable[[str, int], None] | None = None):
        self.partial_dir, self.shard_id = partial_dir, shard_id
        self._writers: list[Any] = []
        self._report = report or _write_live_rows(partial_dir)
        self._reported = 0.0

    def rows_read(self, rows: int) -> None:
        """Tell the driver how many rows this shard has read so far (at most once a second), so
        progress moves inside a large file too."""
        now = time.monotonic()
        if now - self._reported >= LIVE_INTERVAL_S:
            self._reported = now
            self._report(self.shard_id, rows)

    def writer(self, table: str, schema: pa.Schema, partition: tuple[str, str] | None = None):
        from connectors.runs.tables import part_writer

        w = part_writer(self.partial_dir, table, self.shard_id, schema, partition)
        self._writers.append(w)
        return w

    def close(self) -> None:
        for w in self._writers:
            w.close()

    def abort(self) -> None:
        for w in self._writers:
            w.abort()


LIVE_INTERVAL_S = 1.0
WORKER_CPUS = 1.0  # what one shard worker (a pool actor) asks of a node
LIVE_DIR = ".progress"  # <partial>/.progress/<shard>.json: rows read by running shards (removed at commit)


def _write_live_rows(partial_dir: str) -> Callable[[str, int], None]:
    def report(shard_id: str, rows: int) -> None:
        try:
            write_json(join(partial_dir, LIVE_DIR, f"{shard_id}.json"), {"rows": rows})
        except OSError:
            pass  # progress is advice: a failed write must never fail the shard
    return report


def read_live_rows(partial_dir: str, running: set[str]) -> int:
    """Rows read so far by the running shards, from their workers' counters."""
    fs, path = url_to_fs(join(partial_dir, LIVE_DIR))
    total = 0
    try:
        entries = fs.ls(path, detail=False) if fs.exists(path) else []
    except OSError:
        return 0
    for p in entries:
        name = p.rsplit("/", 1)[-1]
        if name.endswith(".json") and name[:-5] in running:
            try:
                total += int(read_json(join(partial_dir, LIVE_DIR, name)).get("rows", 0))
            except (OSError, ValueError):
                continue
    return total


class ShardTask:
    """What a job supplies: ``setup`` once per worker, ``process`` per shard (see the module doc).

    ``local_rows``: with ``--executor auto``, a plan of at most this many expected rows runs in the
    driver process, without starting Ray: for small inputs Ray's start-up costs more than the work.
    Set it from the stage's speed: the rows one core does in ~2 s. ``local_bytes``: shards whose rows
    are not known up front (a JSON document, a compressed text release) count by their stored bytes
    instead, within this budget (4 MiB: ~10,000 benchmark items).
    """

    local_rows: int = 100_000
    local_bytes: int = 4 << 20

    def setup(self) -> None:
        """Build per-worker state; the default has none."""

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        raise NotImplementedError


def limited(batches: Iterator[pa.RecordBatch], limit: int | None) -> Iterator[pa.RecordBatch]:
    """The first ``limit`` rows of a batch stream (``--limit``), all of them when ``limit`` is None."""
    if limit is None:
        yield from batches
        return
    left = limit
    for batch in batches:
        if left <= 0:
            return
        yield batch.slice(0, left) if batch.num_rows > left else batch
        left -= batch.num_rows


def apply_limit(shards: list[Shard], limit: int | None) -> list[Shard]:
    """The shards holding the first ``limit`` rows of each input, in plan order, the last one cut.

    A shard whose row count is not known up front (a CSV, JSONL or tar file) ends the input's
    selection: it is read up to the rows still wanted, so an input yields at most ``limit`` rows.
    """
    if limit is None:
        return shards
    out: list[Shard] = []
    wanted: dict[str, int | None] = {}
    for s in shards:
        left = wanted.get(s.input, limit)
        if left is None or left <= 0:
            continue
        rows = None if s.estimated else s.expected_rows  # an estimate cannot decide where the first N rows end
        out.append(s if rows is not None and rows <= left else s.limited(left))
        wanted[s.input] = None if rows is None else left - rows
    return out


class _ShardWorker:
    """The actor-side wrapper: one task instance per actor, set up once, every failure caught."""

    def __init__(self, task: ShardTask, partial_dir: str, report: Callable[[str, int], None] | None = None):
        self.task, self.partial_dir, self.report = task, partial_dir, report
        self.task.setup()

    def __call__(self, batch: pa.Table) -> pa.Table:
        results = [self._run(Shard.from_json(s)) for s in batch.column("shard").to_pylist()]
        return pa.table({"result": [json.dumps(r) for r in results]})

    def one(self, shard: Shard) -> dict:
        """Run one shard sent as the Ray scan sends it (JSON, rebuilt typed), so both executors hand a
        task the same object."""
        return json.loads(self(shard_batch([shard])).column("result")[0].as_py())


    def _run(self, shard: Shard) -> dict:
        started = time.monotonic()
        out = ShardOutputs(self.partial_dir, shard.shard_id, self.report)
        record: dict[str, Any] = {"shard_id": shard.shard_id, "input": shard.input, "file": shard.source}
        try:
            result = self.task.process(shard, out)
            out.close()
            record.update(status="ok", error=None, **asdict(result))
        except Exception as exc:  # noqa: BLE001 -- every failure becomes the shard's own message
            out.abort()
            message = one_line(exc)
            if shard.source and shard.source not in message and not getattr(exc, "filename", None):
                message = f"{shard.source}: {message}"  # an error naming its own file (an output: disk full) keeps it
            record.update(status="failed", error=message, transient=is_transient(exc),
                          traceback=traceback.format_exc(), **asdict(ShardResult(0)))
        record["seconds"] = round(time.monotonic() - started, 3)
        if record["status"] == "ok":  # the done-marker --resume skips; a failed shard is always rerun
            write_json(join(self.partial_dir, "shards", f"{shard.shard_id}.json"), record)
        return record


def shard_batch(shards: list[Shard]) -> pa.Table:
    """Shards as the runner ships them to a worker: one JSON string per shard (``Shard.to_json``)."""
    return pa.table({"shard": [s.to_json() for s in shards]})


def finished_shards(run: RunDir, planned: set[str]) -> dict[str, dict]:
    """Results of the shards an earlier attempt of this run finished (only those still planned).

    A finished shard this plan no longer has (its file's content changed, so its id did) is removed
    with its per-shard tables: they describe content the run no longer reads.
    """
    if not run.resumed:
        return {}
    fs, path = url_to_fs(run.path("shards"))
    if not fs.exists(path):
        return {}
    done, stale = {}, set()
    for p in fs.ls(path, detail=False):
        if not p.endswith(".json"):
            continue
        url = run.path("shards", p.rsplit("/", 1)[-1])
        try:
            data = read_json(url)
        except ValueError as exc:
            raise JobError(f"{url}: unreadable done-marker of an earlier attempt ({one_line(exc)}); "
                           "delete it to rerun that shard") from exc
        if data.get("status") == "ok" and data.get("shard_id") in planned:
            done[data["shard_id"]] = data
        elif data.get("shard_id"):
            stale.add(str(data["shard_id"]))
            fs.rm(p)
    _drop_parts(run, stale)
    return done


def _drop_parts(run: RunDir, shard_ids: set[str]) -> None:
    """Remove the per-shard table parts (``data/<table>/.../<shard-id>.parquet``) of ``shard_ids``."""
    fs, data = url_to_fs(run.path("data"))
    if not shard_ids or not fs.exists(data):
        return
    for p in fs.find(data):
        if p.rsplit("/", 1)[-1].split(".", 1)[0] in shard_ids:
            fs.rm(p)


@dataclass
class ShardScan:
    """What a job needs after its scan: every shard's result and the facts for the manifest."""

    results: list[dict]  # in plan order
    resumed: int
    run: int
    progress: Progress

    @property
    def ok(self) -> list[dict]:
        return [r for r in self.results if r["status"] == "ok"]

    @property
    def failed(self) -> list[dict]:
        return [{"input": r["input"], "file": r["file"], "error": r["error"]} for r in self.results if r["status"] == "failed"]

    def skipped(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.ok:
            for k, v in r["skipped"].items():
                out[k] = out.get(k, 0) + v
        return out

    def rows_in(self) -> int:
        return sum(r["rows_in"] for r in self.ok)

    def unread_rows(self) -> int:
        return sum(r["unread_rows"] for r in self.ok)

    def partially_read(self) -> list[dict]:
        """Shards read only in part: the byte ranges given up on and their line counts."""
        return [{"file": r["file"], "unread_rows": r["unread_rows"], "ranges": r["unread"]} for r in self.ok if r["unread"]]


def actors_needed(shards: list[Shard], task: ShardTask) -> int:
    """How many pool actors the planned work is worth: one per shard, and no more than one per ``task.local_rows``
    planned rows (per ``task.local_bytes`` stored bytes of shards whose rows are unknown up front; a shard of
    unknown size counts one).

    Why: every actor pays the task's setup (a lexicon compile, a model load) before its first row, and
    ``local_rows`` is the work one process does in about that time. A 40-row rescan on a 16-CPU cluster
    starts one actor, not sixteen that each compile the lexicon for three rows."""
    planned = [_planned(s) for s in shards]
    rows = sum(p for p in planned if p is not None)
    unsized = [s for s, p in zip(shards, planned) if p is None]
    needed = (math.ceil(rows / task.local_rows) + math.ceil(sum(s.size_bytes or 0 for s in unsized) / task.local_bytes)
              + sum(s.size_bytes is None for s in unsized))
    return max(1, min(len(shards), needed))


def _pool_size(shards: list[Shard], task: ShardTask) -> int:
    import ray

    return max(1, min(actors_needed(shards, task), int(ray.available_resources().get("CPU", 1) or 1)))


def choose_executor(opts: RunOptions, shards: list[Shard], task: ShardTask) -> str:
    """``local`` (in this process) or ``ray``.

    ``--executor auto`` runs locally only when that cannot be slower: no ``--address``, and a plan
    whose every shard is sized, with at most ``task.local_rows`` rows in all and, for shards whose
    rows are unknown up front, at most ``task.local_bytes`` stored bytes.

    A Ray already running in this process (a notebook's ``ray.init()``, a plan of several jobs) does
    not change that: Ray would give such a plan one pool actor (``actors_needed``), which is this
    process's own work plus a worker start and the task's setup (a lexicon compile, 2.4 s for the
    gazetteer), a setup this process keeps between runs (``connectors.geo.compiled``).
    """
    if opts.executor != "auto":
        return opts.executor
    if opts.address:
        return "ray"
    sizes = [_planned(s) for s in shards]
    unsized = [s for s, rows in zip(shards, sizes) if rows is None]
    if any(s.size_bytes is None for s in unsized):
        return "ray"
    small = (sum(r for r in sizes if r is not None) <= task.local_rows
             and sum(s.size_bytes or 0 for s in unsized) <= task.local_bytes)
    return "local" if small else "ray"


def _planned(s: Shard) -> int | None:
    return s.expected_rows if s.limit is None else min(s.limit, s.expected_rows or s.limit)


def _progress(job: str, opts: RunOptions, shards: list[Shard]) -> Progress:
    planned = [_planned(s) for s in shards]
    return Progress(job, sum(p for p in planned if p is not None), len(shards),
                    unknown_shards=sum(p is None for p in planned),
                    estimated_shards=sum(s.estimated and p is not None for s, p in zip(shards, planned)),
                    quiet=opts.log_level in ("warning", "error"))


class _LiveRows(threading.Thread):
    """Polls the running shards' row counters every interval while a Ray scan runs."""

    def __init__(self, partial: str, progress: Progress, running: set[str]):
        super().__init__(name="progress", daemon=True)
        self.partial, self.progress, self.running, self.stop = partial, progress, running, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.progress.interval_s):
            self.progress.live(read_live_rows(self.partial, set(self.running)))


# How often a scan whose workers Ray lost for good (their node, or the node of their owner, died; the blocks they
# made are gone) is started again over its unfinished shards before the run fails. Ray's own retries come first.
MAX_RESCANS = 3


def lost_to_ray(exc: BaseException) -> bool:
    """Whether a scan failed because Ray lost its workers or what they made (a node died: the actors on it, the actors
    a worker there owned, the blocks it held), not because of the job's own code or input (an actor whose setup
    raised: a rerun raises again)."""
    import ray.exceptions as rx

    if isinstance(exc, rx.RayActorError):
        return not exc.actor_init_failed
    return isinstance(exc, (rx.WorkerCrashedError, rx.NodeDiedError, rx.ObjectLostError))


def _scan(shards: list[Shard], task: ShardTask, partial_dir: str):
    """The Ray Data pipeline over ``shards``: one row per shard through an actor pool of ``_ShardWorker``.

    The pool starts at its full size (``actors_needed``, within the free CPUs): every shard is queued already, and
    each actor's setup (a lexicon compile, a model load) is paid by all actors at once rather than one after
    another while the first one works. It may still shrink to one when the cluster needs the CPUs."""
    import ray

    ds = ray.data.from_items(shard_batch(shards).to_pylist(), override_num_blocks=len(shards))
    size = _pool_size(shards, task)
    return ds.map_batches(_ShardWorker, fn_constructor_kwargs={"task": task, "partial_dir": partial_dir},
                          batch_size=1, batch_format="pyarrow", num_cpus=WORKER_CPUS,
                          compute=ray.data.ActorPoolStrategy(min_size=1, max_size=size, initial_size=size))


def run_shards(job: str, run: RunDir, opts: RunOptions, timer: StageTimer, shards: list[Shard], task: ShardTask,
               executor: str = "ray", on_ray: Callable[[], None] | None = None) -> ShardScan:
    """The scan every sharded job shares: skip finished shards, run the rest on an actor pool (or,
    ``executor="local"``, one after another in this process).

    With ``--on-error fail`` the first failed shard stops the scan with its own message (finished
    shards stay for ``--resume``); with ``skip`` failed shards are counted and the job goes on.
    """
    finished = finished_shards(run, {s.shard_id for s in shards})
    todo = [s for s in shards if s.shard_id not in finished]
    by_id = {s.shard_id: s for s in shards}
    progress = _progress(job, opts, shards)
    for data in finished.values():
        s = by_id[data["shard_id"]]
        progress.resume(data["rows_in"], planned=_planned(s), estimated=s.estimated)
    results = dict(finished)

    def take(result: dict) -> None:
        if result["status"] == "failed" and (opts.on_error != "skip" or result["transient"]):
            run.write_error_log(result["traceback"])
            raise JobError(f"{job}: {result['error']}", resumable=result["transient"], partial=run.partial, run_id=run.run_id)
        result.pop("traceback", None)
        results[result["shard_id"]] = result
        s = by_id[result["shard_id"]]
        running.discard(s.shard_id)
        progress.update(result["rows_in"], planned=_planned(s), estimated=s.estimated)

    running = {s.shard_id for s in todo}
    with timer("scan"):
        if todo and executor == "local":
            progress.start()
            worker = _ShardWorker(task, run.partial, lambda shard_id, rows: progress.live(rows))
            for s in todo:
                take(worker.one(s))
        elif todo:
            import ray

            if on_ray is not None:
                on_ray()  # start or join Ray now, and only now that the scan needs it
            progress.start()
            live = _LiveRows(run.partial, progress, running)
            live.start()
            try:
                with watch_nodes(job, "", {"CPU": WORKER_CPUS}, opts.lost_node_timeout):
                    for rescan in range(MAX_RESCANS + 1):
                        pending = [s for s in todo if s.shard_id not in results]
                        try:
                            for row in _scan(pending, task, run.partial).iter_rows():
                                take(json.loads(row["result"]))
                            break
                        except ray.exceptions.RayError as exc:
                            if not lost_to_ray(exc) or rescan == MAX_RESCANS:
                                raise
                            left = sum(s.shard_id not in results for s in todo)
                            log.warning("%s: warning: Ray lost workers of the scan (%s); its %d unfinished shard(s) are rerun "
                                        "on the nodes that remain", job, type(exc).__name__, left)
            finally:
                live.stop.set()
        progress.emit()
    return ShardScan([results[s.shard_id] for s in shards if s.shard_id in results], len(finished), len(todo), progress)
