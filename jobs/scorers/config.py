"""``benchaudit scorers`` options, declared once (flags are generated)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from audit.scorers.choices import SCORERS, TRANSFORMATIONS
from jobs.common.cli.config import Alias, ConfigError, Flag, InputName, IntervalOptions, check_choices
from jobs.common.inputs.benchmarks import BenchmarkConfig, BenchmarkInputs, shipped_benchmark

if TYPE_CHECKING:
    from audit.scorers.sensitivity import SensitivityConfig

GOLD = "gold"
ANSWERS = "answers to vary (default: the benchmark's gold answers)"
SCORING = "scoring"


class AnswersConfig(BaseModel):
    """One file of model outputs: a question id and an answer per row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: InputName
    path: str
    id_column: str | None = None  # None: --answer-id-column
    answer_column: str | None = None  # None: --answer-column


def parse_answer_specs(values: object) -> object:
    """``[NAME=]PATH`` strings (from the command line): the name defaults to the file's stem."""
    if not isinstance(values, list):
        return values
    out = []
    for v in values:
        if isinstance(v, str):
            name, sep, path = v.partition("=")
            v = {"name": name, "path": path} if sep else {"name": Path(v).name.split(".")[0], "path": v}
        out.append(v)
    return out


class ScorersConfig(BenchmarkInputs, IntervalOptions):
    """Everything that decides a scorers run's results."""

    answers: Annotated[list[AnswersConfig], BeforeValidator(parse_answer_specs),
                       Flag(ANSWERS, metavar="[NAME=]PATH", repeat=True, default_text="the gold answers")] = Field(
        default_factory=list, description="model outputs (CSV/TSV, JSONL or Parquet) with a question id and an answer per "
                                          "row; a question id is the item's own id where the benchmark has one, else "
                                          "<file name up to its first dot>:<data row from 0> (the shipped TruthfulQA.csv: "
                                          "TruthfulQA:0 ... TruthfulQA:816); repeat for several models")
    answer_id_column: Annotated[str, Flag(ANSWERS, requires="answers", deprecated=("--answers-id-column",))] = Field(
        "question_id", description="question id column of the answer files")
    answer_column: Annotated[str, Flag(ANSWERS, requires="answers", deprecated=("--answers-column",))] = Field(
        "answer", description="answer column of the answer files")
    variants: Annotated[str | None, Flag(ANSWERS, metavar="PATH")] = Field(
        None, description="score these (reviewed) variants instead of generating them: columns question_id, original, "
                          "variant, transformation [, status, reason]")
    scorers: Annotated[list[str] | None, Flag(SCORING, metavar="SCORER[,SCORER...]",
                                              default_text="every one that applies: " + ",".join(SCORERS))] = Field(
        None, description="scorers to run")
    transformations: Annotated[list[str], Flag(SCORING, metavar="NAME[,NAME...]")] = Field(
        default_factory=lambda: list(TRANSFORMATIONS), description="transformations that make the variants")
    protected_names: Annotated[str | None, Flag(SCORING, metavar="FILE", default_text="the shipped list only")] = Field(
        None, description="extra names variants must not alter, one per line (brands, titles)")
    shard_rows: Annotated[int, Flag(SCORING, deprecated=(Alias("--shard-questions"),))] = Field(
        500, ge=1, description="questions per shard (the unit of work and of --resume)")
    examples: Annotated[int, Flag(SCORING)] = Field(10, ge=0, description="example variants kept per status for the report")

    def embedded(self) -> list[BenchmarkConfig]:
        """The shipped TruthfulQA.csv (Apache-2.0): its gold answers are varied and scored."""
        return [BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[shipped_benchmark("TruthfulQA.csv")])]

    @property
    def gold_benchmark(self) -> BenchmarkConfig:
        return self.benchmark_configs()[0]

    def answer_files(self) -> list[AnswersConfig]:
        """The answer files with their columns resolved (an entry's own, else the flags')."""
        return [a.model_copy(update={"id_column": a.id_column or self.answer_id_column,
                                     "answer_column": a.answer_column or self.answer_column}) for a in self.answers]

    @model_validator(mode="after")
    def _check(self) -> ScorersConfig:
        if len(self.benchmark_configs()) > 1:
            raise ConfigError("benchaudit scorers takes one benchmark (--benchmark or --input)")
        names = [a.name for a in self.answers] + (["variants"] if self.variants else [])
        if len(set(names)) != len(names) or GOLD in names:
            raise ConfigError(f"--answers: answer set names must be unique and not {GOLD!r}, got {names}")
        if self.scorers is not None:  # at the edge, naming the flag
            check_choices(self.scorers, SCORERS, "scorer(s)")
        check_choices(self.transformations, TRANSFORMATIONS, "transformation(s)")
        return self

    def sensitivity(self, scorers: list[str] | tuple[str, ...], protected: tuple[str, ...]) -> SensitivityConfig:
        from audit.scorers.sensitivity import SensitivityConfig
        from audit.scorers.variants import VariantConfig

        return SensitivityConfig(tuple(scorers), VariantConfig(tuple(self.transformations), protected), self.bootstrap_config())
