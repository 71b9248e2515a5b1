"""``benchaudit conventions`` options, declared once (flags are generated)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, model_validator

from audit.conventions.choices import FIELDS
from jobs.common.cli.config import Alias, Flag, IntervalOptions, check_choices
from jobs.common.inputs.benchmarks import BenchmarkConfig, BenchmarkInputs, shipped_benchmark

if TYPE_CHECKING:
    from audit.conventions.detect import DetectorConfig

ANALYSIS = "analysis"


def embedded_benchmarks() -> list[BenchmarkConfig]:
    """The shipped samples: all of TruthfulQA (Apache-2.0) and the allennlp DROP fixture (CC BY-SA 4.0)."""
    return [
        BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[shipped_benchmark("TruthfulQA.csv")]),
        BenchmarkConfig(name="drop_fixture", preset="drop", paths=[shipped_benchmark("drop_allennlp_fixture.json")]),
    ]


class ConventionsConfig(BenchmarkInputs, IntervalOptions):
    """Everything that decides a conventions run's results."""

    fields: Annotated[list[str], Flag(ANALYSIS, metavar="FIELD[,FIELD...]")] = Field(
        default_factory=lambda: list(FIELDS), description="item fields to scan")
    include_lexical: Annotated[bool, Flag(ANALYSIS)] = Field(
        False, description="also count lexical pairs (apartment/flat, gasoline/petrol): many are polysemous")
    shard_rows: Annotated[int, Flag(ANALYSIS, deprecated=(Alias("--shard-items"),))] = Field(
        100_000, ge=1, description="items per shard of a Parquet file (the unit of work and of --resume); "
                                   "other files are one shard each")
    batch_rows: Annotated[int, Flag(cli=False)] = Field(10_000, ge=1, description="items per detector batch")
    examples: Annotated[int, Flag(ANALYSIS)] = Field(
        5, ge=0, description="example signals kept per category and variety for the report")

    def embedded(self) -> list[BenchmarkConfig]:
        return embedded_benchmarks()

    @model_validator(mode="after")
    def _fields(self) -> ConventionsConfig:
        check_choices(self.fields, FIELDS, "field(s)")  # at the edge, naming --fields
        return self

    def detector(self) -> DetectorConfig:
        from audit.conventions.detect import DetectorConfig

        return DetectorConfig(tuple(self.fields), self.include_lexical)

