"""``benchaudit geo``: country visibility of caption corpora, on Ray Data.

Wiring only: connectors plan the shards and read them, ``audit.geo`` resolves and aggregates, the
shared runner runs one ``GeoTask`` per shard on an actor pool (each actor compiles the lexicon
once), and the driver merges the small partial counts and writes the run directory.
"""
from __future__ import annotations

from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc

from audit.geo.aggregate import summarize_all, table_row
from audit.geo.association import AssociationConfig, associate
from audit.geo.calibration import ESTIMATOR, NotIdentified, correct, recall_precision
from audit.geo.choices import TIERS
from audit.geo.lexicon import Lexicon
from audit.geo.sources import country_codes, country_facts
from audit.geo.stage import RECORD_SCHEMA, GeoPartial, GeoStage
from connectors.captions.corpus import CorpusSpec, Plan, check_some_rows, plan_corpus
from connectors.captions.read import read_shard
from connectors.geo.calibration import CalibrationSample, read_calibration
from connectors.geo.compiled import built_resolver
from connectors.geo.indicators import read_indicators
from connectors.geo.lexicon import load_lexicon
from connectors.io.read_report import ReadReport
from connectors.io.row_counts import count_files
from connectors.runs.tables import input_root, relative_source, relativize_ids
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.job import JobRun, SkipCheck
from jobs.common.runtime.manifest import StageTimer
from jobs.common.runtime.shards import Shard, ShardOutputs, ShardResult, ShardTask, apply_limit, limited
from jobs.common.runtime.summaries import headline
from jobs.geo.config import GeoConfig

JOB = "geo"
# The records table (data/records/corpus=<name>/): the stage's columns, "group" (an SQL keyword) as group_value.
RECORDS_OUT_SCHEMA = pa.schema([f.with_name("group_value") if f.name == "group" else f for f in RECORD_SCHEMA])
TEXT_FIELD = pa.field("text", pa.string())  # --records-text


class GeoTask(ShardTask):
    """Read, resolve and record one corpus shard; the compiled lexicon is built once per worker."""

    local_rows = 200_000  # ~1 s of resolving on one core (plus the lexicon compile): less than a Ray start

    def __init__(self, specs: dict[str, CorpusSpec], lexicon: Lexicon, cfg: GeoConfig, sources: dict[str, str] | None = None):
        self.specs, self.entries, self.with_records = specs, lexicon.entries, cfg.write_records
        self.lexicon_sha256 = lexicon.sha256  # the compiled lexicon's cache key (connectors.geo.compiled)
        self.with_text = cfg.records_text
        self.sources = sources or {}  # file URL -> its path relative to the corpus root (for record ids)
        self.min_evidence, self.repair_mojibake = cfg.min_evidence, cfg.repair_mojibake

    def setup(self) -> None:
        resolver = built_resolver(self.entries, self.lexicon_sha256, self.repair_mojibake)
        self.stage = GeoStage(self.entries, self.with_records, self.min_evidence, self.repair_mojibake,
                              count_country_tiers=True, resolver=resolver)
        self.stage.warm_up()

    def process(self, shard: Shard, out: ShardOutputs) -> ShardResult:
        spec = self.specs[shard.input]
        records = out.writer("records", RECORDS_OUT_SCHEMA.append(TEXT_FIELD) if self.with_text else RECORDS_OUT_SCHEMA,
                             ("corpus", spec.name))
        partial, report = GeoPartial(), ReadReport(shard.source)
        # record ids are made only for records written (a corpus without an id column: "<file>#<row>" strings)
        batches = read_shard(shard, spec, report, with_ids=self.with_records)
        for items in limited(batches, shard.limit):
            table, p = self.stage.process(items)
            partial.merge(p)
            if table is not None:
                records.write(self._records(table, items, shard.source))
            out.rows_read(partial.rows_in)
        return ShardResult(rows_in=partial.rows_in, partial=partial.to_json(), skipped=dict(partial.skipped),
                           unread_rows=report.unread_rows, unread=[u.to_json() for u in report.unread])


    def _records(self, table: pa.Table, items: pa.RecordBatch, source: str) -> pa.Table:
        """The stage's records in the run-data convention: ids relative to the corpus root, no SQL
        keyword as a column name, and the caption text when asked for (records are the usable items, in order)."""
        ids = relativize_ids(table.column("record_id"), source, self.sources.get(source, source))
        table = table.set_column(0, "record_id", ids).rename_columns(RECORDS_OUT_SCHEMA.names)
        if self.with_text:
            usable = items.filter(pc.is_null(items.column("skip_reason")))
            table = table.append_column(TEXT_FIELD, usable.column("text"))
        return table


def _sources(specs: dict[str, CorpusSpec], plans: dict[str, Plan]) -> dict[str, str]:
    """Each planned file's path relative to its corpus root: what record ids say instead of a machine's path."""
    out = {}
    for name, plan in plans.items():
        roots = [input_root(p) for p in specs[name].paths]
        out.update({s.source: relative_source(s.source, roots) for s in plan.shards})
    return out


def _shards(plans: dict[str, Plan]) -> list[Shard]:
    """One job shard per corpus shard; a file without a footer count gets an expectation from its bytes."""
    out = []
    for p in plans.values():
        unsized = {s.source for s in p.shards if s.expected_rows is None}
        counts = count_files([f for f in p.files if f.url in unsized], p.spec.format, p.spec.header)
        for s in p.shards:
            counted = None if s.expected_rows is not None else counts.get(s.source)
            out.append(s if counted is None else replace(s, expected_rows=counted.rows, estimated=True))
    return out


def run(cfg: GeoConfig, opts: RunOptions) -> str:
    """Run the geo audit; returns the final run directory."""
    timer = StageTimer()
    with timer("plan"):
        lexicon = load_lexicon(cfg.lexicon_profile, cfg.lexicon, cfg.lexicon_edits)
        indicators, indicators_sha = read_indicators(cfg.indicators)
        sample = read_calibration(cfg.calibration) if cfg.calibration else None  # a bad sample fails before the scan
        specs = cfg.specs()
        plans = {name: plan_corpus(spec, cfg.shard_rows, opts.on_error) for name, spec in specs.items()}
        check_some_rows(list(plans.values()))
        shards = apply_limit(_shards(plans), cfg.limit)
    # Input identity lives in the shard ids (file URL, content checksum, row groups), not in this hash:
    # a resumed run may see a repaired or added file, and reruns exactly the shards whose content changed.
    payload = {"config": cfg.model_dump(), "lexicon_sha256": lexicon.sha256, "indicators_sha256": indicators_sha,
               "calibration_sha256": sample.sha256 if sample else None, "on_error": opts.on_error}
    with JobRun(JOB, cfg, opts, payload, seed=cfg.seed, timer=timer, use_ray="scan") as job:
        scan = job.scan(shards, GeoTask(specs, lexicon, cfg, _sources(specs, plans)))
        with job.timer("aggregate"):
            merged = {name: GeoPartial() for name in specs}
            for r in scan.ok:
                merged[r["input"]].merge(GeoPartial.from_json(r["partial"]))
            failed = scan.failed + [{"input": n, "file": f, "error": e} for n, p in plans.items() for f, e in p.unreadable]
            summary = _summary(cfg, job.run_id, lexicon, indicators, merged, failed)
            summary["evidence"] = _evidence(merged)
            summary["calibration"] = _calibration(cfg, lexicon, sample, summary["corpora"]) if sample else None
            summary["shares"] = _shares_note(sample)
        from jobs.geo.report import render_geo_report  # presentation only: kept out of the workers

        skipped = scan.skipped()
        rows_in = scan.rows_in()
        rows_out = rows_in - sum(skipped.values())
        unread = scan.unread_rows()
        return job.finish(
            summary, render_geo_report, skips=SkipCheck(rows_in, rows_out, sum(skipped.values()), unread, failed),
            inputs={n: {"fingerprint": p.fingerprint, "files": len({s.source for s in p.shards}) + len(p.unreadable),
                        "shards": len(p.shards), "expected_rows": p.expected_rows} for n, p in plans.items()},
            lexicon={"profile": lexicon.profile, "version": lexicon.version, "sha256": lexicon.sha256,
                     "entries": lexicon.entries.num_rows},
            indicators={"path": cfg.indicators or "shipped:connectors/data/worldbank/indicators.csv", "sha256": indicators_sha},
            rows={"in": rows_in, "out": rows_out, "skipped_by_reason": skipped, "unread": unread},
            evidence={"min_evidence": cfg.min_evidence,
                      "tiers": {n: dict(p.tiers) for n, p in merged.items()},
                      "counters": {n: dict(p.counters) for n, p in merged.items()}},
            calibration={"path": sample.path, "sha256": sample.sha256, "captions": len(sample.captions),
                         "seed": cfg.seed} if sample else None,
        )


def _summary(cfg: GeoConfig, run_id: str, lexicon: Lexicon, indicators, merged: dict[str, GeoPartial],
             failed: list[dict]) -> dict:
    assoc_cfg = AssociationConfig(cfg.min_population, cfg.min_records, cfg.bootstrap, cfg.seed, cfg.level)
    alpha3 = country_codes()
    corpora = {}
    for name, partial in merged.items():
        block = summarize_all(partial, cfg.top_n)
        block["association"] = associate(block["country_counts"], indicators, alpha3, assoc_cfg)
        block["failed_shards"] = [{"file": f["file"], "error": f["error"]} for f in failed if f["input"] == name]
        corpora[name] = block
    return {"job": JOB, "run_id": run_id, "lexicon": {"profile": lexicon.profile, "sha256": lexicon.sha256},
            "table": [table_row(n, b) for n, b in corpora.items()], "headline": _headline(corpora), "corpora": corpora}


def _headline(corpora: dict[str, dict]) -> list[dict]:
    rows = []
    for name, b in corpora.items():
        gdp = b["association"].get("gdp", {})
        top = b["top"][0] if b["top"] else {}
        rows += [headline(name, "coverage", b["coverage"]), headline(name, "resolved_records", b["resolved_records"]),
                 headline(name, "countries", b["n_countries"]), headline(name, "top_country_share", top.get("share")),
                 headline(name, "top3_concentration", b["top3_concentration"]),
                 headline(name, "pearson_r_log_gdp_share", gdp.get("pearson_r"), gdp.get("pearson_r_ci")),
                 headline(name, "spearman_rho_log_gdp_share", gdp.get("spearman_rho"), gdp.get("spearman_rho_ci"))]
    return rows


def _evidence(merged: dict[str, GeoPartial]) -> dict:
    """Per corpus and country, the records counted in its share by evidence tier: how each share was found."""
    corpora = {}
    for name, partial in merged.items():
        by_country: dict[str, dict[str, int]] = {}
        for (country, tier), n in sorted(partial.country_tiers.items()):
            by_country.setdefault(country, {})[tier] = n
        corpora[name] = by_country
    return {"tiers": list(TIERS), "corpora": corpora}


def _shares_note(sample: CalibrationSample | None) -> dict:
    if sample is None:
        return {"of": "resolved captions", "corrected": False,
                "note": "Shares are of resolved captions: the captions the resolver placed in a country, not of all "
                        "captions and not of the world. No calibration sample was given (--calibration FILE), so they "
                        "are not corrected for the places the resolver misses or misplaces."}
    return {"of": "resolved captions", "corrected": True,
            "note": f"Shares are of resolved captions; corrected shares (summary 'calibration') estimate each country's "
                    f"share of the captions that name a country, corrected for the resolver's errors measured on "
                    f"{len(sample.captions):,} labelled captions ({sample.path})."}


def _calibration(cfg: GeoConfig, lexicon: Lexicon, sample: CalibrationSample, corpora: dict[str, dict]) -> dict:
    """Resolve the labelled sample as the corpora were (same lexicon, evidence floor, mojibake repair),
    measure the resolver on it, and correct every corpus's shares (``audit.geo.calibration``)."""
    resolver = built_resolver(lexicon.entries, lexicon.sha256, cfg.repair_mojibake).at_min_evidence(cfg.min_evidence)
    resolved = resolver.resolve(pa.array(sample.captions, pa.string())).country.to_pylist()  # None: not placed
    region_of = {code: facts["region"] for code, facts in country_facts().items()}
    out = {"path": sample.path, "sha256": sample.sha256, "captions": len(sample.captions),
           "with_country": sum(c is not None for c in sample.countries),
           "agreement": sum(a == b for a, b in zip(sample.countries, resolved)) / len(resolved),
           "estimator": ESTIMATOR, "classes": "UN geoscheme region of the country (mledoze/countries), plus none",
           "replicates": cfg.bootstrap, "level": cfg.level, "seed": cfg.seed,
           "weighted": any(w != 1 for w in sample.weights),
           "by_region": recall_precision(sample.countries, resolved, region_of, sample.weights), "corpora": {}}
    for name, block in corpora.items():
        counts, unresolved = block["country_counts"], block["usable_records"] - block["resolved_records"]
        if not block["usable_records"]:
            out["corpora"][name] = {"error": "no usable records"}
            continue
        try:
            est = correct(sample.countries, resolved, counts, unresolved, region_of, cfg.bootstrap, cfg.level, cfg.seed,
                          sample.weights)
        except NotIdentified as e:
            out["corpora"][name] = {"error": str(e)}
            continue
        ci = est.true_ci.tolist() if est.true_ci is not None else [None] * len(est.classes)
        regions = [{"region": c, "observed_share": float(q), "corrected_share": float(p), "ci": ci[i],
                    "calibrated": c not in est.uncalibrated}
                   for i, (c, q, p) in enumerate(zip(est.classes, est.observed, est.true))]
        countries = {c: {"share": s, "ci": list(est.countries_ci[c]) if est.countries_ci else None}
                     for c, s in sorted(est.countries.items(), key=lambda kv: -kv[1])}
        out["corpora"][name] = {"regions": regions, "uncalibrated": est.uncalibrated, "countries": countries}
    return out
