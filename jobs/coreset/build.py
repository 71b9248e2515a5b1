"""``benchaudit coreset build``: an HT-Coreset design from a target table of any size, on Ray.

Wiring only: ``connectors.coreset.targets`` plans and reads shards, ``audit.coreset`` holds every rule.
No row reaches the driver; only per-block counts, a few thousand percentile candidates and the
drawn rows do. Passes over the blocks, which stay in the Ray object store between passes:

1. read: Ray Data runs one task per shard (a Parquet row-group range), reading only the mapped
   columns and checking their values; each block keeps id, hash key, label and ensemble score,
   and the materialized dataset's blocks (``to_arrow_refs``) stay in the object store. Each task
   also writes its block to the run directory (``prepared/<shard>.parquet``, then the done-marker
   ``shards/<shard>.json``), so a build stopped at any point is finished by ``--resume``: finished
   shards are read back from there, the others read from the table;
2. summary: per-block counts (rows, positives, hard, easy pool), easy-pool min/max, and the keys
   split by range so a merge per range finds ids repeated anywhere in the table;
3. percentiles: ``exact_percentiles`` drives per-block ``count_below`` / ``values_in_buckets``;
4. strata: per-block stratum counts, then ``plan_design`` (budget and allocation) on the driver;
5. draw: per-block candidates under per-stratum key limits, then ``draw_in_blocks`` and
   ``design_table`` on the driver.

Every per-row quantity depends only on the row and the seed, and every merge is exact, so the
design does not depend on shard sizes, block counts or the cluster.
"""
from __future__ import annotations

import fsspec
import numpy as np
import pandas as pd
import pyarrow as pa
import ray

from audit.coreset import strata as st
from audit.coreset.design import DesignConfig, DesignManifest, design_table, plan_design
from audit.coreset.percentile import count_below, exact_percentiles, values_in_buckets
from audit.coreset.validate import CoresetValueError, require_positive_count
from audit.stats.draws import block_candidates, draw_in_blocks, equal_keys, hash_keys, key_partitions
from connectors.coreset.designs import DESIGN_TABLE, GROUP_COLUMN, MANIFEST_FILE
from connectors.coreset.targets import TargetBlock, TargetColumns, TargetError, plan_targets, read_target_shard
from connectors.io.read_report import InputError
from connectors.io.shards import Shard
from connectors.runs.rundir import join, read_json, resumable_run, write_json, write_parquet
from jobs.common.cli.config import ConfigError, RunOptions
from jobs.common.runtime.errors import user_code_error
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.progress import Progress
from jobs.common.runtime.ray_start import stderr_is_tty
from jobs.common.runtime.shards import finished_shards
from jobs.common.runtime.summaries import headline
from jobs.coreset.config import BuildConfig

JOB = "coreset-build"
PREPARED_DIR = "prepared"  # <run>/prepared/<shard>.parquet: each shard's block, what --resume reads back (removed at commit)
KEY_RANGES_MAX = 32  # key ranges of the duplicate-id merge (each merge task holds ~1/ranges of the keys)


# ---- worker side: one function per pass, each on one block ---------------------------------------

def _prepared(block: TargetBlock, seed: int) -> pa.Table:
    """What later passes need per row: id, hash key, label, ensemble score (and group)."""
    cols = {"id": block.ids, "key": hash_keys(block.ids, seed), "label": block.labels.view(np.uint8),
            "p": st.ensemble_score(block.scores)}
    if block.groups is not None:
        cols["group"] = block.groups
    return pa.table(cols)


def _read_shards(batch: pa.Table, *, columns: TargetColumns, seed: int, run_dir: str) -> pa.Table:
    """The prepared block of each shard: read back from ``run_dir`` when an earlier attempt of the run
    finished it (its done-marker is written after its block), else read, prepared and kept there."""
    import pyarrow.parquet as pq
    from fsspec.core import url_to_fs

    tables = []
    for text in batch.column("shard").to_pylist():
        shard = Shard.from_json(text)
        block, marker = join(run_dir, PREPARED_DIR, f"{shard.shard_id}.parquet"), join(run_dir, "shards", f"{shard.shard_id}.json")
        try:
            fs, path = url_to_fs(marker)
            if fs.exists(path) and read_json(marker).get("status") == "ok":
                with fsspec.open(block, "rb") as fh:
                    tables.append(pq.read_table(fh))
                continue
            prepared = _prepared(read_target_shard(shard, columns), seed)
            write_parquet(block, prepared)
            write_json(marker, {"shard_id": shard.shard_id, "status": "ok", "file": shard.source,
                                "row_groups": list(shard.row_groups), "rows_in": prepared.num_rows})
            tables.append(prepared)
        except Exception as exc:  # noqa: BLE001 — reported with the shard's file, row groups and column
            # an InputError, or audit's check of a column's values, names its file already; anything else gets the shard's
            named = isinstance(exc, (InputError, CoresetValueError))
            message = str(exc) if named else f"{shard.source}: {type(exc).__name__}: {exc}"
            raise TargetError(f"{message} (shard {shard.shard_id}, row groups {list(shard.row_groups) or 'all'})") from exc
    return pa.concat_tables(tables)


def _label_p(block: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    return block.column("label").to_numpy().view(bool), block.column("p").to_numpy()


@ray.remote
def _summarize(block: pa.Table, hard_cut: float | None, ranges: int) -> tuple:
    labels, p = _label_p(block)
    easy = st.easy_difficulty(labels, p, hard_cut)
    hard = 0 if hard_cut is None else int(np.count_nonzero(~labels & (p >= hard_cut)))
    summary = {"rows": len(p), "positives": int(labels.sum()), "hard": hard, "easy": len(easy),
               "easy_min": float(easy.min()) if len(easy) else None, "easy_max": float(easy.max()) if len(easy) else None}
    return (summary, *key_partitions(block.column("key").to_numpy(), ranges))


@ray.remote
def _repeated_keys(*pieces: np.ndarray) -> np.ndarray:
    return equal_keys(list(pieces))


@ray.remote
def _ids_with_keys(block: pa.Table, keys: np.ndarray) -> pd.DataFrame:
    mask = np.isin(block.column("key").to_numpy(), keys)
    return pd.DataFrame({"key": block.column("key").to_numpy()[mask],
                         "id": block.column("id").to_numpy(zero_copy_only=False)[mask]})


@ray.remote
def _count_below(block: pa.Table, hard_cut: float | None, edges: np.ndarray) -> np.ndarray:
    return count_below(st.easy_difficulty(*_label_p(block), hard_cut), edges)


@ray.remote
def _values_between(block: pa.Table, hard_cut: float | None, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    return values_in_buckets(st.easy_difficulty(*_label_p(block), hard_cut), lower, upper)


@ray.remote
def _stratum_counts(block: pa.Table, hard_cut: float | None, bounds: np.ndarray, n_easy: int) -> np.ndarray:
    labels, p = _label_p(block)
    return st.stratum_counts(st.assign_strata(labels, p, hard_cut, bounds), n_easy)


@ray.remote
def _candidates(block: pa.Table, hard_cut: float | None, bounds: np.ndarray, take: np.ndarray,
                limits: np.ndarray) -> pd.DataFrame:
    labels, p = _label_p(block)
    codes = st.assign_strata(labels, p, hard_cut, bounds)
    keys = block.column("key").to_numpy()
    ids = block.column("id").to_numpy(zero_copy_only=False)
    rows = block_candidates(keys, codes, take, limits, ids)
    frame = pd.DataFrame({"id": ids[rows], "key": keys[rows], "stratum": codes[rows], "score": p[rows]})
    if "group" in block.column_names:
        frame["group"] = block.column("group").take(pa.array(rows)).to_numpy(zero_copy_only=False)
    return frame


# ---- driver side -------------------------------------------------------------------------------

def _read_blocks(cfg: BuildConfig, shards: list[Shard], progress: Progress, expected: int | None,
                 ray_bars: bool, run_dir: str) -> list[ray.ObjectRef]:
    """Run the read pass; return the prepared blocks' refs (the blocks stay in the object store).

    ``ray_bars``: show Ray Data's own progress bars for this pass (on a terminal): here they are the
    real progress of the work, one read task per shard.
    """
    items = [{"shard": s.to_json()} for s in shards]
    ds = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
        _read_shards, batch_size=1, batch_format="pyarrow", num_cpus=1,
        fn_kwargs={"columns": cfg.columns(), "seed": cfg.seed, "run_dir": run_dir},
    )
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = ray_bars
    try:
        materialized = ds.materialize()
    except Exception as exc:  # noqa: BLE001 -- the shard's own message names the file and column
        message = user_code_error(exc)
        if message is None:
            raise
        raise TargetError(f"{JOB}: {message}") from None
    finally:
        ctx.enable_progress_bars = False
    progress.update(materialized.count(), len(shards), planned=expected)
    return materialized.to_arrow_refs()


def _check_unique_ids(cfg: BuildConfig, blocks: list[ray.ObjectRef], pieces: list[list[ray.ObjectRef]]) -> None:
    """Ids repeated anywhere in the table would be counted twice in N_h: reject them."""
    if not pieces:
        return
    repeated = np.concatenate(ray.get([_repeated_keys.remote(*[p[r] for p in pieces]) for r in range(len(pieces[0]))]))
    if not len(repeated):
        return
    rows = pd.concat(ray.get([_ids_with_keys.remote(b, repeated) for b in blocks]), ignore_index=True)
    dup = rows[rows.duplicated(["key", "id"], keep="first")]["id"]  # equal keys of distinct string ids are a hash tie
    if len(dup):
        shown = ", ".join(repr(v) for v in dup.unique()[:5].tolist())
        raise TargetError(f"{cfg.source}: column {cfg.id_column!r} repeats {dup.nunique()} id(s), e.g. {shown}; "
                          "expected one row per target")


def _easy_bounds(cfg: DesignConfig, blocks: list[ray.ObjectRef], summaries: list[dict]) -> tuple[np.ndarray, int]:
    """Exact ``np.percentile`` of the easy pool's difficulty, and the number of passes it took."""
    n_easy = sum(s["easy"] for s in summaries)
    if n_easy == 0 or cfg.n_easy_strata == 1:
        return np.array([]), 0
    calls = [0]

    def count_fn(edges: np.ndarray) -> np.ndarray:
        calls[0] += 1
        ref = ray.put(edges)
        return np.sum(ray.get([_count_below.remote(b, cfg.hard_cut, ref) for b in blocks]), axis=0)

    def fetch_fn(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        calls[0] += 1
        return np.concatenate(ray.get([_values_between.remote(b, cfg.hard_cut, lower, upper) for b in blocks]))

    bounds = exact_percentiles(
        count_fn, fetch_fn, n_easy, cfg.easy_percentiles,
        minimum=min(s["easy_min"] for s in summaries if s["easy"]), maximum=max(s["easy_max"] for s in summaries if s["easy"]),
    )
    return bounds, calls[0]


def build(cfg: BuildConfig, blocks: list[ray.ObjectRef], timer: StageTimer) -> tuple[pd.DataFrame, DesignManifest, dict]:
    """Passes 2-5 over the prepared blocks: the design rows, their manifest and pass statistics."""
    design_cfg = cfg.design_config()
    ranges = max(1, min(KEY_RANGES_MAX, len(blocks)))
    with timer("summary"):
        outs = [_summarize.options(num_returns=1 + ranges).remote(b, design_cfg.hard_cut, ranges) for b in blocks]
        summaries = ray.get([o[0] for o in outs])
        _check_unique_ids(cfg, blocks, [list(o[1:]) for o in outs])
        del outs
    require_positive_count(sum(s["positives"] for s in summaries), cfg.label_column, cfg.source)
    with timer("percentiles"):
        bounds, percentile_passes = _easy_bounds(design_cfg, blocks, summaries)
    with timer("strata"):
        counts = np.sum(ray.get([_stratum_counts.remote(b, design_cfg.hard_cut, bounds, design_cfg.n_easy_strata)
                                 for b in blocks]), axis=0)
        manifest = plan_design(design_cfg, counts, bounds, cfg.source)
    shipped = [0]

    def candidates_fn(limits: np.ndarray) -> pd.DataFrame:
        frame = pd.concat(ray.get([_candidates.remote(b, design_cfg.hard_cut, bounds, manifest.take, limits)
                                   for b in blocks]), ignore_index=True)
        shipped[0] += len(frame)
        return frame

    with timer("draw"):
        drawn, draw_passes = draw_in_blocks(candidates_fn, np.asarray(manifest.population), manifest.take)
        design = design_table(drawn["id"].to_numpy(), drawn["stratum"].to_numpy(), manifest)
        design["score"] = drawn["score"].to_numpy()
        if cfg.group_column:
            design["group"] = drawn["group"].to_numpy()
    stats = {"rows": sum(s["rows"] for s in summaries), "blocks": len(blocks), "percentile_passes": percentile_passes,
             "draw_passes": draw_passes, "candidate_rows_shipped": shipped[0], "key_ranges": ranges}
    return design, manifest, stats


def summarize(cfg: BuildConfig, run_id: str, design: pd.DataFrame, manifest: DesignManifest, stats: dict) -> dict:
    """Every number the build report shows."""
    n_total, n_pos = int(sum(manifest.population)), int(manifest.population[st.POSITIVE])
    strata = [{"stratum": name, "population": int(big_n), "sample": int(n),
               "pi": n / big_n if big_n else None, "w": big_n / n if n else None, "census": bool(n == big_n)}
              for name, big_n, n in zip(manifest.strata, manifest.population, manifest.sample)]
    name = cfg.dataset
    return {
        "job": JOB, "run_id": run_id, "input": cfg.source, "dataset": name,
        "table": strata,
        "headline": [headline(name, "targets", n_total), headline(name, "positives", n_pos),
                     headline(name, "prevalence", n_pos / n_total), headline(name, "coreset_rows", len(design)),
                     headline(name, "reduction", n_total / len(design))],
        "targets": n_total, "positives": n_pos, "negatives": n_total - n_pos, "prevalence": n_pos / n_total,
        "budget": manifest.budget, "coreset_rows": len(design), "reduction": n_total / len(design),
        "tau": manifest.tau, "hard_cut": manifest.hard_cut, "easy_percentiles": list(manifest.easy_percentiles),
        "easy_bounds": list(manifest.easy_bounds), "seed": manifest.seed, "strata": strata,
        "negative_weight_sum": float(design.loc[~design["label"], "w"].sum()), "passes": stats,
    }


def run(cfg: BuildConfig, opts: RunOptions) -> str:
    """Build the design; returns the final run directory (data/design/, design.json, reports)."""
    if opts.on_error == "skip":
        raise ConfigError(f"{JOB}: --on-error skip is not supported: a skipped shard would silently remove "
                          "targets from the population and bias every weight")
    if opts.resume:  # an unknown run id is refused before the table is planned or read
        resumable_run(opts.out, JOB, opts.run_id)
    timer = StageTimer()
    with timer("plan"):
        plan = plan_targets(cfg.input, cfg.columns(), cfg.shard_rows, cfg.format)
    payload = {"config": cfg.model_dump(), "input_fingerprint": plan.fingerprint}
    # The run directory exists before the first shard is read: each shard's block is kept there as it
    # finishes, so a build stopped by a kill, a lost node or Ctrl-C is finished by --resume.
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer) as job:
        done = finished_shards(job.dir, {s.shard_id for s in plan.shards})
        progress = Progress(JOB, plan.expected_rows, len(plan.shards), quiet=opts.log_level in ("warning", "error"))
        with timer("read"):
            progress.start()
            bars = opts.log_level in ("info", "debug") and stderr_is_tty()
            blocks = _read_blocks(cfg, plan.shards, progress, plan.expected_rows, bars, job.path())
            progress.emit()
        design, manifest, stats = build(cfg, blocks, timer)
        del blocks
        with timer("write"):
            summary = summarize(cfg, job.run_id, design, manifest, stats)
            job.write_table(DESIGN_TABLE, design.rename(columns={"group": GROUP_COLUMN}))
            job.write_json(MANIFEST_FILE, manifest.to_dict())
        from jobs.coreset.report import render_build_report  # presentation only: kept out of the workers

        _remove(job.path(PREPARED_DIR))  # the blocks are in the design now; the done-markers stay as the shards' record
        return job.finish(
            summary, render_build_report, files=(MANIFEST_FILE,),
            timings={"read_rows_per_s": round(progress.rate(), 1), "progress": progress.samples},
            inputs={"paths": cfg.input, "files": plan.files, "fingerprint": plan.fingerprint, "shards": len(plan.shards),
                    "expected_rows": plan.expected_rows},
            seeds={"draw_seed": cfg.seed, "key": "splitmix64(id xor splitmix64(seed)) for integer ids; "
                   "keyed SipHash-2-4 (pandas hash_array) for string ids"},
            rows={"in": stats["rows"], "out": len(design), "skipped_by_reason": {}, "unread": 0},
            passes=stats,
            shards={"total": len(plan.shards), "resumed": len(done), "run": len(plan.shards) - len(done)},
            outputs={"design_manifest": MANIFEST_FILE},
        )


def _remove(url: str) -> None:
    from fsspec.core import url_to_fs

    fs, path = url_to_fs(url)
    if fs.exists(path):
        fs.rm(path, recursive=True)
