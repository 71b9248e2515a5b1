"""The items a landscape run scores: benchmarks read through the connectors, checked, sampled.

Why every bad row is counted here and none stops the run: this audit is about item quality, so an
item that cannot be scored (an answer index outside its options, duplicate or empty options,
fewer than two) is a finding, reported per item with its reason (``rejected.parquet``, the
manifest, the report), not a reason to lose the rest of the benchmark. A file that cannot be
read as a whole still fails before any work, naming the file.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from audit.mcqa.items import McqaItem, mcqa_items, standardise_csqa
from audit.mcqa.sample import sample_items
from connectors.benchmarks.read import iter_benchmark_batches
from connectors.benchmarks.shards import plan_benchmark
from connectors.benchmarks.spec import BenchmarkSpec
from connectors.io.read_report import ReadReport
from jobs.common.models.answers import reason_code
from jobs.landscape.config import LandscapeConfig

REJECTED_SCHEMA = pa.schema([("benchmark", pa.string()), ("id", pa.string()), ("perturbation", pa.string()),
                             ("stage", pa.string()), ("reason", pa.string())])
ITEM_TABLE = pa.schema([
    ("id", pa.string()), ("benchmark", pa.string()), ("question", pa.string()), ("options", pa.list_(pa.string())),
    ("gold", pa.int64()), ("passage", pa.string()), ("instructions", pa.string()), ("source_id", pa.string()),
    ("perturbation", pa.string()), ("variant", pa.int64()), ("note", pa.string()),
])


@dataclass
class _EveryRow(ReadReport):
    """A read report that keeps every skipped row's message (file, row, field), not the first five."""

    messages: list[str] = field(default_factory=list)

    def skip(self, reason: str, n: int = 1, example: str | None = None) -> None:
        super().skip(reason, n, example)
        if example is not None:
            self.messages.append(example)


@dataclass(frozen=True)
class BenchmarkItems:
    """One benchmark's sampled, scorable items, what was read, and every row left out with why."""

    name: str
    preset: str | None
    files: tuple[str, ...]
    fingerprint: str
    rows_read: int
    scorable: int
    items: list[McqaItem]
    rejected: list[dict]


def load_benchmark(spec: BenchmarkSpec, cfg: LandscapeConfig) -> BenchmarkItems:
    plan = plan_benchmark(spec, 1 << 62)  # checks every file's fields up front; one "shard" per file
    name = spec.benchmark_name()
    report = _EveryRow(source=name)
    rows: list[dict] = []
    for batch in iter_benchmark_batches(spec, on_bad_row="skip", report=report):
        rows += batch.to_pylist()
        if cfg.limit is not None and len(rows) >= cfg.limit:
            rows = rows[: cfg.limit]
            break
    rejected = [{"benchmark": name, "id": None, "perturbation": None, "stage": "read", "reason": m} for m in report.messages]
    items, bad = mcqa_items(rows)
    rejected += [{"benchmark": name, "id": r.id, "perturbation": None, "stage": "item", "reason": r.describe()} for r in bad]
    if spec.preset == "commonsenseqa" and cfg.standardise_csqa:
        items = [standardise_csqa(item) for item in items]
    chosen = sample_items(items, cfg.items_per_benchmark(), cfg.seed)
    return BenchmarkItems(name, spec.preset, plan.files, plan.fingerprint, len(rows) + len(report.messages), len(items),
                          chosen, rejected)


def items_table(items: list[McqaItem]) -> pa.Table:
    return pa.Table.from_pylist([{**asdict(item), "options": list(item.options)} for item in items], schema=ITEM_TABLE)


def item_from_row(row: dict) -> McqaItem:
    return McqaItem(**{**row, "options": tuple(row["options"])})


def rejections(rejected: list[dict]) -> dict[str, Any]:
    """The manifest's count of rejected rows: in all, by stage and by reason code."""
    return {"total": len(rejected), "by_stage": dict(Counter(r["stage"] for r in rejected)),
            "by_reason": dict(Counter(reason_code(r["reason"]) for r in rejected).most_common())}
