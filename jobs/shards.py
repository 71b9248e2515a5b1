"""Running units of work (shards) as Ray Data tasks, with resume and honest progress.

A job plans shards with content-derived ids, asks which are already finished in its run
directory, and hands the rest to ``scan_shards``: one Ray Data task per shard, each writing its
own outputs and a small JSON result into the run directory, the results streaming back to the
driver as they complete. Any job that scans files uses this loop; only the per-shard function
differs.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import ray
from fsspec.core import url_to_fs

from jobs.config import RunOptions
from jobs.manifest import StageTimer
from jobs.progress import Progress
from jobs.rundir import RunDir, read_json
from jobs.runtime import init_ray


class ShardError(RuntimeError):
    """A shard could not be read or processed; the message names its file and shard id."""


def finished_shards(run: RunDir, planned: set[str]) -> dict[str, dict]:
    """Results of the shards an earlier attempt of this run finished (only those still planned)."""
    if not run.resumed:
        return {}
    fs, path = url_to_fs(run.path("shards"))
    if not fs.exists(path):
        return {}
    done = {}
    for p in fs.ls(path, detail=False):
        if p.endswith(".json"):
            data = read_json(run.path("shards", p.rsplit("/", 1)[-1]))
            if data["status"] == "ok" and data["shard_id"] in planned:
                done[data["shard_id"]] = data
    return done


def scan_shards(job: str, items: list[dict], fn: Callable[..., pa.Table], fn_kwargs: dict, run: RunDir,
                progress: Progress) -> Iterator[dict]:
    """Run ``fn`` on each item (one shard each) as a Ray Data task; yield each JSON result.

    ``fn`` gets a one-row pyarrow batch of the item's fields and returns a table with a ``result``
    column of JSON strings holding at least ``rows_in``. A failure stops the scan with the shard's
    own message and tells the user how to resume; finished shards stay in the run directory.
    """
    if not items:
        return
    ds = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
        fn, batch_size=1, batch_format="pyarrow", num_cpus=1, fn_kwargs=fn_kwargs,
    )
    try:
        for row in ds.iter_rows():
            result = json.loads(row["result"])
            progress.update(result["rows_in"])
            yield result
    except Exception as exc:
        raise RuntimeError(
            f"{job} scan stopped: {root_cause(exc)}\nFinished shards are kept in {run.partial}; "
            f"rerun with --resume --run-id {run.run_id} to continue."
        ) from exc


def root_cause(exc: Exception) -> str:
    """The shard's own message out of Ray's wrapped traceback (it names the file and shard)."""
    marker = f"{ShardError.__name__}: "
    for line in str(exc).splitlines():
        if marker in line:
            return line.split(marker, 1)[1]
    return str(exc)


@dataclass
class ShardScan:
    """What a job needs after its scan: every shard's result and the facts for the manifest."""

    results: list[dict]  # finished by an earlier attempt first, then this attempt's, as they came
    resumed: int
    run: int
    progress: Progress
    ray_info: dict


def run_shards(job: str, run: RunDir, opts: RunOptions, timer: StageTimer, shards: list[tuple[str, dict]],
               expected_rows: int | None, fn: Callable[..., pa.Table], make_kwargs: Callable[[], dict]) -> ShardScan:
    """The scan every job shares: skip finished shards, start or join Ray, run the rest.

    ``shards`` are (shard id, item) pairs; ``make_kwargs`` builds the worker arguments once Ray is
    up (so it may ``ray.put`` large shared state such as a lexicon).
    """
    finished = finished_shards(run, {sid for sid, _ in shards})
    todo = [item for sid, item in shards if sid not in finished]
    progress = Progress(job, expected_rows, len(shards))
    for data in finished.values():
        progress.resume(data["rows_in"])
    with timer("ray_init"):
        ray_info = init_ray(opts.address, opts.num_cpus)
    results = list(finished.values())
    with timer("scan"):
        progress.start()
        results += scan_shards(job, todo, fn, make_kwargs(), run, progress)
        progress.emit()
    return ShardScan(results, len(finished), len(todo), progress, ray_info)
