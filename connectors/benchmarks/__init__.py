"""Text benchmarks (JSONL, JSON, CSV, Parquet, Hugging Face datasets on disk) in one item schema.

The modules depend downward only: ``schema`` (the item schema, errors, layouts, field mappings)
← ``formats`` (file readers) ← ``presets`` (the real layouts of MMLU, ARC, TruthfulQA ...) ←
``spec`` (what to read) ← ``arrow`` / ``read`` (items, batch by batch) ← ``shards`` (planning a
scan). This package re-exports what jobs and other connectors use.
"""
from connectors.benchmarks.formats import guess_format, open_text
from connectors.benchmarks.presets import PRESETS, Preset
from connectors.benchmarks.read import (
    benchmark_files,
    choose_layout,
    iter_benchmark_batches,
    iter_file_batches,
    read_benchmark,
)
from connectors.benchmarks.schema import (
    FORMATS,
    ITEM_SCHEMA,
    LIST_FIELDS,
    TEXT_FIELDS,
    BadRecord,
    BenchmarkError,
    FieldMapping,
    Layout,
    RowRef,
)
from connectors.benchmarks.shards import BenchmarkPlan, BenchmarkShard, file_ref, plan_benchmark
from connectors.benchmarks.spec import BenchmarkSpec

__all__ = [
    "FORMATS", "ITEM_SCHEMA", "LIST_FIELDS", "PRESETS", "TEXT_FIELDS", "BadRecord", "BenchmarkError", "BenchmarkPlan",
    "BenchmarkShard", "BenchmarkSpec", "FieldMapping", "Layout", "Preset", "RowRef", "benchmark_files",
    "choose_layout", "file_ref", "guess_format", "iter_benchmark_batches", "iter_file_batches", "open_text",
    "plan_benchmark", "read_benchmark",
]
