"""``benchaudit conventions`` options, declared once (flags are generated)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from audit.conventions.detect import DetectorConfig
from audit.conventions.signals import FIELDS
from audit.stats.bootstrap import BootstrapConfig
from jobs.common.benchmarks import BenchmarkConfig, BenchmarkInputs, shipped_benchmark
from jobs.common.config import Alias, Flag

ANALYSIS = "analysis"


def embedded_benchmarks() -> list[BenchmarkConfig]:
    """The shipped samples: all of TruthfulQA (Apache-2.0) and the allennlp DROP fixture (CC BY-SA 4.0)."""
    return [
        BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[shipped_benchmark("TruthfulQA.csv")]),
        BenchmarkConfig(name="drop_fixture", preset="drop", paths=[shipped_benchmark("drop_allennlp_fixture.json")]),
    ]


class ConventionsConfig(BenchmarkInputs):
    """Everything that decides a conventions run's results."""

    fields: Annotated[list[str], Flag(ANALYSIS, metavar="FIELD[,FIELD...]")] = Field(
        default_factory=lambda: list(FIELDS), description="item fields to scan")
    include_lexical: Annotated[bool, Flag(ANALYSIS)] = Field(
        False, description="also count lexical pairs (apartment/flat, gasoline/petrol): many are polysemous")
    bootstrap: Annotated[int, Flag(ANALYSIS)] = Field(10_000, ge=1, description="item-bootstrap replicates for every interval")
    seed: Annotated[int, Flag(ANALYSIS)] = Field(2026, description="bootstrap seed (recorded in summary and manifest)")
    level: Annotated[float, Flag(ANALYSIS)] = Field(0.95, gt=0, lt=1, description="two-sided interval level, a fraction")
    shard_rows: Annotated[int, Flag(ANALYSIS, deprecated=(Alias("--shard-items"),))] = Field(
        100_000, ge=1, description="items per shard of a Parquet file (the unit of work and of --resume); "
                                   "other files are one shard each")
    batch_rows: Annotated[int, Flag(cli=False)] = Field(10_000, ge=1, description="items per detector batch")
    examples: Annotated[int, Flag(ANALYSIS)] = Field(
        5, ge=0, description="example signals kept per category and variety for the report")

    def embedded(self) -> list[BenchmarkConfig]:
        return embedded_benchmarks()

    @model_validator(mode="after")
    def _detector(self) -> ConventionsConfig:
        self.detector()  # unknown fields fail here, at the edge
        return self

    def detector(self) -> DetectorConfig:
        return DetectorConfig(tuple(self.fields), self.include_lexical)

    def bootstrap_config(self) -> BootstrapConfig:
        return BootstrapConfig(self.bootstrap, self.seed, self.level)
