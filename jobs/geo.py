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
from importlib import resources
from typing import Literal

import pyarrow as pa
import ray
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audit.geo.aggregate import summarize_all, table_row
from audit.geo.association import AssociationConfig, associate
from audit.geo.lexicon import Lexicon
from audit.geo.sources import country_codes
from audit.geo.stage import RECORD_SCHEMA, GeoPartial, GeoStage
from connectors.caption_readers import read_shard
from connectors.captions import (
    PRESETS,
    ColumnMapping,
    CorpusSpec,
    Plan,
    Shard,
    detect_format,
    plan_corpus,
)
from connectors.fs import FileRef
from connectors.indicators import read_indicators
from connectors.lexicon import load_lexicon
from connectors.records import ShardRecordWriter
from jobs.config import RunOptions, config_hash
from jobs.manifest import StageTimer, base_manifest
from jobs.rundir import RunDir, write_json, write_text
from jobs.shards import ShardError, run_shards

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
        fmt = self.format or (p.format if p else detect_format(self.paths))
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
    writer = ShardRecordWriter(f"{partial_dir}/records/{spec.name}/{shard.shard_id}.parquet", RECORD_SCHEMA)
    try:
        for items in read_shard(shard, spec):
            table, p = stage.process(items)
            partial.merge(p)
            writer.write(table)
        writer.close()
        result = {"status": "ok", "error": None}
    except Exception as exc:  # noqa: BLE001 — every failure is reported with the shard's file
        writer.abort()
        message = f"{shard.file.url} (shard {shard.shard_id}, row groups {list(shard.row_groups) or 'all'}): {type(exc).__name__}: {exc}"
        if on_error != "skip":
            raise ShardError(message) from exc
        partial = GeoPartial()
        result = {"status": "failed", "error": message}
    result.update({
        "shard_id": shard.shard_id, "corpus": spec.name, "file": shard.file.url, "rows_in": partial.rows_in,
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
def run(cfg: GeoConfig, opts: RunOptions) -> str:
    """Run the geo audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        lexicon = load_lexicon(cfg.lexicon_profile, cfg.lexicon_path, cfg.lexicon_edits)
        indicators, indicators_sha = read_indicators(cfg.indicators_path)
        specs = {c.name: c.to_spec(cfg.group_by) for c in cfg.corpora}
        plans: dict[str, Plan] = {name: plan_corpus(spec, cfg.shard_rows, opts.on_error) for name, spec in specs.items()}

    # Input identity lives in the shard ids (file URL, size, stamp, row groups), not in this hash:
    # a resumed run may see a repaired or added file, and reruns exactly the shards that changed.
    payload = {"config": cfg.model_dump(), "lexicon_sha256": lexicon.sha256, "indicators_sha256": indicators_sha,
               "on_error": opts.on_error}
    chash = config_hash(payload)
    run_dir = RunDir(opts.out, JOB, opts.run_id, payload, chash, opts.resume)
    shards = [s for p in plans.values() for s in p.shards]
    expected = [p.expected_rows for p in plans.values()]
    scan = run_shards(
        JOB, run_dir, opts, timer, [(s.shard_id, {"shard": json.dumps(asdict(s)), "corpus": s.corpus}) for s in shards],
        None if None in expected else sum(expected), _map_shards,
        lambda: {"specs": specs, "lexicon_key": lexicon.sha256, "lexicon_ref": [ray.put(lexicon.entries)],
                 "with_records": cfg.write_records, "partial_dir": run_dir.partial, "on_error": opts.on_error},
    )
    results = scan.results

    with timer("aggregate"):
        merged = {name: GeoPartial() for name in specs}
        for r in results:
            if r["status"] == "ok":
                merged[r["corpus"]].merge(GeoPartial.from_json(r["partial"]))
        summary = _summary(cfg, run_dir.run_id, lexicon, indicators, merged, results, plans)

    with timer("report"):
        from jobs.report_geo import (
            render_geo_report,  # presentation only: kept out of the workers
        )

        write_json(run_dir.path("summary.json"), summary)
        write_text(run_dir.path("report.html"), render_geo_report(summary))

    failed = [{"file": r["file"], "error": r["error"], "corpus": r["corpus"]} for r in results if r["status"] == "failed"]
    failed += [{"file": f, "error": e, "corpus": n} for n, p in plans.items() for f, e in p.unreadable]
    skipped: dict[str, int] = {}
    for p in merged.values():
        for k, v in p.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
    if failed:
        skipped["unreadable_shard"] = len(failed)
    rows_in = sum(p.rows_in for p in merged.values())
    manifest = base_manifest(JOB, run_dir.run_id, cfg, opts, chash, cfg.seed, timer, scan.ray_info)
    manifest.update({
        "inputs": {n: {"fingerprint": p.fingerprint, "files": len({s.file.url for s in p.shards}) + len(p.unreadable),
                       "shards": len(p.shards), "expected_rows": p.expected_rows} for n, p in plans.items()},
        "lexicon": {"profile": lexicon.profile, "version": lexicon.version, "sha256": lexicon.sha256, "entries": lexicon.entries.num_rows},
        "indicators": {"path": cfg.indicators_path or "shipped:connectors/data/worldbank/indicators.csv", "sha256": indicators_sha},
        "rows": {"in": rows_in, "out": rows_in - sum(v for k, v in skipped.items() if k != "unreadable_shard"),
                 "skipped_by_reason": skipped},
        "shards": {"total": len(shards), "resumed": scan.resumed, "run": scan.run, "failed": failed},
        "timings": {**timer.seconds, "wall_s": timer.wall(),
                    "scan_rows_per_s": round(scan.progress.rate(), 1), "progress": scan.progress.samples},
        "records": "records/<corpus>/<shard_id>.parquet" if cfg.write_records else None,
    })
    write_json(run_dir.path("manifest.json"), manifest)
    return run_dir.commit()


def _summary(cfg: GeoConfig, run_id: str, lexicon: Lexicon, indicators, merged: dict[str, GeoPartial], results: list[dict],
             plans: dict[str, Plan]) -> dict:
    assoc_cfg = AssociationConfig(cfg.min_population, cfg.min_records, cfg.bootstrap_replicates, cfg.seed)
    alpha3 = country_codes()
    corpora = {}
    for name, partial in merged.items():
        block = summarize_all(partial, cfg.top_n)
        block["association"] = associate(block["country_counts"], indicators, alpha3, assoc_cfg)
        block["failed_shards"] = [{"file": r["file"], "error": r["error"]} for r in results if r["corpus"] == name and r["status"] == "failed"]
        block["unreadable_files"] = [{"file": f, "error": e} for f, e in plans[name].unreadable]
        corpora[name] = block
    return {"job": JOB, "run_id": run_id, "lexicon": {"profile": lexicon.profile, "sha256": lexicon.sha256},
            "table": [table_row(n, b) for n, b in corpora.items()], "corpora": corpora}
