"""``benchaudit geo``: country visibility of caption corpora, on Ray Data.

Wiring only: connectors plan the shards and read them, ``audit.geo`` resolves and aggregates,
this module runs shards as Ray Data tasks, streams their small partial counts back, and writes
the run directory. Each task reads one shard, resolves it batch by batch, writes its records
(when asked) and its partial counts straight into the run directory, and returns the counts.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from datetime import datetime, timezone
from importlib import resources
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq
import ray
from fsspec.core import url_to_fs
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.geo.aggregate import summarize_all
from audit.geo.association import AssociationConfig, associate
from audit.geo.lexicon import Lexicon, apply_edits, load_lexicon
from audit.geo.sources import country_codes
from audit.geo.stage import RECORD_SCHEMA, GeoPartial, GeoStage
from connectors.captions import PRESETS, ColumnMapping, CorpusSpec, Plan, Shard, detect_format, plan_corpus, read_shard
from connectors.fs import FileRef
from connectors.indicators import read_indicators
from jobs.config import RunOptions, config_hash
from jobs.progress import Progress
from jobs.rundir import RunDir, read_json, write_json, write_text
from jobs.runtime import init_ray, package_versions

JOB = "geo"


class CorpusConfig(BaseModel):
    """One corpus: a preset gives format and columns; explicit fields override it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    paths: list[str] = Field(min_length=1)
    preset: str | None = None
    format: Literal["parquet", "jsonl", "csv", "tsv", "webdataset"] | None = None
    text: str | None = None
    context: list[str] | None = None
    url: str | None = None
    id: str | None = None
    header: bool | None = None
    column_names: list[str] | None = None

    @model_validator(mode="after")
    def _known_preset(self) -> CorpusConfig:
        if self.preset and self.preset not in PRESETS:
            raise ValueError(f"corpus {self.name}: unknown preset {self.preset!r}; known: {sorted(PRESETS)}")
        if not self.preset and not self.text:
            raise ValueError(f"corpus {self.name}: give a preset or the caption column (text)")
        return self

    def to_spec(self, group_by: str | None) -> CorpusSpec:
        p = PRESETS.get(self.preset) if self.preset else None
        base = p.mapping if p else ColumnMapping(text=self.text or "")
        mapping = ColumnMapping(
            text=self.text or base.text,
            context=tuple(self.context) if self.context is not None else base.context,
            url=self.url if self.url is not None else base.url,
            id=self.id if self.id is not None else base.id,
            group=group_by or base.group,
        )
        fmt = self.format or (p.format if p else detect_format(self.paths[0]))
        return CorpusSpec(
            name=self.name,
            paths=tuple(self.paths),
            format=fmt,
            mapping=mapping,
            header=self.header if self.header is not None else (p.header if p else True),
            column_names=tuple(self.column_names or (p.column_names if p else ())),
        )


def embedded_corpora() -> list[CorpusConfig]:
    """The shipped real captions: COCO 2017 val (CC BY 4.0) and Conceptual Captions val."""
    root = resources.files("connectors") / "samples"
    return [
        CorpusConfig(name="coco2017_val", paths=[str(root / "coco2017_val_captions.csv")], preset="coco"),
        CorpusConfig(name="cc3m_val", paths=[str(root / "cc3m_val_captions.tsv")], preset="cc3m"),
    ]


class GeoConfig(BaseModel):
    """Everything that decides a geo run's results."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    corpora: list[CorpusConfig] = Field(default_factory=embedded_corpora)
    lexicon_profile: Literal["paper", "extended"] = "paper"
    lexicon_path: str | None = None
    lexicon_edits: str | None = None
    indicators_path: str | None = None
    group_by: str | None = None
    write_records: bool = False
    top_n: int = Field(20, ge=1)
    min_population: float = Field(1_000_000.0, ge=0)
    min_records: int = Field(1, ge=1)
    bootstrap_replicates: int = Field(2_000, ge=0)
    seed: int = 2026
    shard_rows: int = Field(500_000, ge=1)

    @model_validator(mode="after")
    def _unique_names(self) -> GeoConfig:
        names = [c.name for c in self.corpora]
        if len(set(names)) != len(names):
            raise ValueError(f"corpus names must be unique, got {names}")
        return self


# ---- worker side -----------------------------------------------------------------------------
class ShardError(RuntimeError):
    """A shard could not be read or resolved; the message names its file and shard id."""


_STAGES: dict[tuple[str, bool], GeoStage] = {}


def _stage(lexicon_key: str, lexicon_ref: list[ray.ObjectRef], with_records: bool) -> GeoStage:
    """One compiled lexicon per worker process, reused by every shard it runs."""
    key = (lexicon_key, with_records)
    if key not in _STAGES:
        _STAGES[key] = GeoStage(ray.get(lexicon_ref[0]), with_records)
    return _STAGES[key]


def _shard_from_json(data: dict) -> Shard:
    data = dict(data)
    data["file"] = FileRef(**data["file"])
    data["row_groups"] = tuple(data["row_groups"])
    data.pop("shard_id")
    return Shard(**data)


def run_shard(shard: Shard, spec: CorpusSpec, stage: GeoStage, partial_dir: str, on_error: str) -> dict:
    """Read, resolve and record one shard; the shard file marks it done for --resume."""
    started = time.monotonic()
    partial = GeoPartial()
    records_url = f"{partial_dir}/records/{spec.name}/{shard.shard_id}.parquet"
    writer = None
    try:
        fs, rpath = url_to_fs(records_url)
        tmp = f"{rpath}.tmp"
        for items in read_shard(shard, spec):
            table, p = stage.process(items)
            partial.merge(p)
            if table is not None and table.num_rows:
                if writer is None:
                    fs.makedirs(rpath.rsplit("/", 1)[0], exist_ok=True)
                    writer = pq.ParquetWriter(fs.open(tmp, "wb"), RECORD_SCHEMA, compression="zstd")
                writer.write_table(table)
        if writer is not None:
            writer.close()
            fs.mv(tmp, rpath)
        result = {"status": "ok", "error": None}
    except Exception as exc:  # noqa: BLE001 — every failure is reported with the shard's file
        message = f"{shard.file.url} (shard {shard.shard_id}, row groups {list(shard.row_groups) or 'all'}): {type(exc).__name__}: {exc}"
        if on_error != "skip":
            raise ShardError(message) from exc
        partial = GeoPartial()
        result = {"status": "failed", "error": message}
    result.update({
        "shard_id": shard.shard_id, "corpus": spec.name, "file": shard.file.url,
        "seconds": round(time.monotonic() - started, 3), "partial": partial.to_json(),
    })
    write_json(f"{partial_dir}/shards/{shard.shard_id}.json", result)
    return result


def _map_shards(batch: pa.Table, *, specs: dict[str, CorpusSpec], lexicon_key: str, lexicon_ref: list, with_records: bool,
                partial_dir: str, on_error: str) -> pa.Table:
    stage = _stage(lexicon_key, lexicon_ref, with_records)
    results = [
        run_shard(_shard_from_json(json.loads(s)), specs[c], stage, partial_dir, on_error)
        for s, c in zip(batch.column("shard").to_pylist(), batch.column("corpus").to_pylist())
    ]
    return pa.table({"result": [json.dumps(r) for r in results]})


# ---- driver side -----------------------------------------------------------------------------
def _load_lexicon(cfg: GeoConfig) -> Lexicon:
    lex = load_lexicon(cfg.lexicon_profile, cfg.lexicon_path)
    return apply_edits(lex, cfg.lexicon_edits) if cfg.lexicon_edits else lex


def _finished(run: RunDir) -> dict[str, dict]:
    fs, path = url_to_fs(run.path("shards"))
    if not fs.exists(path):
        return {}
    done = {}
    for p in fs.ls(path, detail=False):
        if p.endswith(".json"):
            data = read_json(run.path("shards", p.rsplit("/", 1)[-1]))
            if data["status"] == "ok":
                done[data["shard_id"]] = data
    return done


def run(cfg: GeoConfig, opts: RunOptions) -> str:
    """Run the geo audit; returns the final run directory."""
    t0 = time.monotonic()
    started_at = datetime.now(timezone.utc).isoformat()
    timings: dict[str, float] = {}

    lexicon = _load_lexicon(cfg)
    indicators, indicators_sha = read_indicators(cfg.indicators_path)
    specs = {c.name: c.to_spec(cfg.group_by) for c in cfg.corpora}
    plans: dict[str, Plan] = {name: plan_corpus(spec, cfg.shard_rows, opts.on_error) for name, spec in specs.items()}
    timings["plan_s"] = time.monotonic() - t0

    # Input identity lives in the shard ids (file URL, size, stamp, row groups), not in this hash:
    # a resumed run may see a repaired or added file, and reruns exactly the shards that changed.
    payload = {"config": cfg.model_dump(), "lexicon_sha256": lexicon.sha256, "indicators_sha256": indicators_sha,
               "on_error": opts.on_error}
    chash = config_hash(payload)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    planned = {s.shard_id for p in plans.values() for s in p.shards}
    finished = {k: v for k, v in _finished(run_dir).items() if k in planned} if run_dir.resumed else {}

    todo = [s for p in plans.values() for s in p.shards if s.shard_id not in finished]
    expected = [p.expected_rows for p in plans.values()]
    progress = Progress(JOB, None if None in expected else sum(expected), sum(len(p.shards) for p in plans.values()))
    for data in finished.values():
        progress.resume(data["partial"]["rows_in"])

    t = time.monotonic()
    ray_info = init_ray(opts.address, opts.num_cpus)
    timings["ray_init_s"] = time.monotonic() - t

    results: list[dict] = list(finished.values())
    t_scan = time.monotonic()
    progress.start()
    if todo:
        lexicon_ref = [ray.put(lexicon.entries)]  # in a list so Ray passes the ref, not the value
        items = [{"shard": json.dumps(asdict(s)), "corpus": s.corpus} for s in todo]
        ds = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            _map_shards,
            batch_size=1,
            batch_format="pyarrow",
            num_cpus=1,
            fn_kwargs={
                "specs": specs, "lexicon_key": lexicon.sha256, "lexicon_ref": lexicon_ref,
                "with_records": cfg.write_records, "partial_dir": run_dir.partial, "on_error": opts.on_error,
            },
        )
        try:
            for row in ds.iter_rows():
                result = json.loads(row["result"])
                results.append(result)
                progress.update(result["partial"]["rows_in"])
        except Exception as exc:
            raise RuntimeError(
                f"geo scan stopped: {_root_cause(exc)}\nFinished shards are kept in {run_dir.partial}; "
                f"rerun with --resume --run-id {run_dir.run_id} to continue."
            ) from exc
    timings["scan_s"] = time.monotonic() - t_scan
    progress.emit()

    t = time.monotonic()
    merged = {name: GeoPartial() for name in specs}
    for r in results:
        if r["status"] == "ok":
            merged[r["corpus"]].merge(GeoPartial.from_json(r["partial"]))
    assoc_cfg = AssociationConfig(cfg.min_population, cfg.min_records, cfg.bootstrap_replicates, cfg.seed)
    alpha3 = country_codes()
    corpora = {}
    for name, partial in merged.items():
        block = summarize_all(partial, cfg.top_n)
        block["association"] = associate(block["country_counts"], indicators, alpha3, assoc_cfg)
        failed = [r for r in results if r["corpus"] == name and r["status"] == "failed"]
        block["failed_shards"] = [{"file": r["file"], "error": r["error"]} for r in failed]
        block["unreadable_files"] = [{"file": f, "error": e} for f, e in plans[name].unreadable]
        corpora[name] = block
    summary = {"job": JOB, "run_id": run_dir.run_id, "lexicon": {"profile": lexicon.profile, "sha256": lexicon.sha256},
               "table": [_table_row(n, b) for n, b in corpora.items()], "corpora": corpora}
    timings["aggregate_s"] = time.monotonic() - t

    t = time.monotonic()
    from jobs.report_geo import render_geo_report  # presentation only; imported late to keep workers light

    write_json(run_dir.path("summary.json"), summary)
    write_text(run_dir.path("report.html"), render_geo_report(summary))
    timings["report_s"] = time.monotonic() - t

    rows_in = sum(p.rows_in for p in merged.values())
    skipped: dict[str, int] = {}
    for p in merged.values():
        for k, v in p.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
    failed_shards = [r for r in results if r["status"] == "failed"]
    unreadable = [(n, f, e) for n, p in plans.items() for f, e in p.unreadable]
    if failed_shards or unreadable:
        skipped["unreadable_shard"] = len(failed_shards) + len(unreadable)
    manifest = {
        "job": JOB,
        "run_id": run_dir.run_id,
        "config": cfg.model_dump(),
        "run_options": opts.model_dump(),
        "config_hash": chash,
        "seed": cfg.seed,
        "started_at": started_at,
        "finished_at": datetime.now(timezone.utc).isoformat(),
        "inputs": {n: {"fingerprint": p.fingerprint, "files": len({s.file.url for s in p.shards}) + len(p.unreadable),
                       "shards": len(p.shards), "expected_rows": p.expected_rows} for n, p in plans.items()},
        "lexicon": {"profile": lexicon.profile, "version": lexicon.version, "sha256": lexicon.sha256, "entries": lexicon.entries.num_rows},
        "indicators": {"path": cfg.indicators_path or "shipped:connectors/data/worldbank/indicators.csv", "sha256": indicators_sha},
        "packages": package_versions(),
        "ray": ray_info,
        "rows": {"in": rows_in, "out": rows_in - sum(v for k, v in skipped.items() if k != "unreadable_shard"),
                 "skipped_by_reason": skipped},
        "shards": {"total": progress.expected_shards, "resumed": len(finished), "run": len(todo),
                   "failed": [{"file": r["file"], "error": r["error"]} for r in failed_shards]
                   + [{"file": f, "error": e, "corpus": n} for n, f, e in unreadable]},
        "timings": {**{k: round(v, 3) for k, v in timings.items()}, "wall_s": round(time.monotonic() - t0, 3),
                    "scan_rows_per_s": round((progress.rows - progress.resumed_rows) / timings["scan_s"], 1) if timings["scan_s"] else None,
                    "progress": progress.samples},
        "records": f"records/<corpus>/<shard_id>.parquet" if cfg.write_records else None,
    }
    write_json(run_dir.path("manifest.json"), manifest)
    return run_dir.commit()


def _root_cause(exc: Exception) -> str:
    """The shard's own message out of Ray's wrapped traceback (it names the file and shard)."""
    for line in str(exc).splitlines():
        marker = f"{ShardError.__name__}: "
        if marker in line:
            return line.split(marker, 1)[1]
    return str(exc)


def _table_row(name: str, block: dict) -> dict:
    """One row of the paper-style table."""
    gdp = block["association"].get("gdp", {})
    top = block["top"][0] if block["top"] else {}
    return {
        "corpus": name, "records": block["usable_records"], "resolved": block["resolved_records"], "coverage": block["coverage"],
        "top_country": top.get("alpha2"), "top_share": top.get("share"), "top3_concentration": block["top3_concentration"],
        "n_countries": block["n_countries"], "n_fit": block["association"]["n_countries"],
        "pearson_r": gdp.get("pearson_r"), "spearman_rho": gdp.get("spearman_rho"), "ols_r2": gdp.get("ols_r2"),
        "weighted_r2": gdp.get("weighted_r2"),
    }

