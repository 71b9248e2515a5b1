"""``benchaudit traces`` options, declared once (flags are generated)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, model_validator

from audit.stats.choices import DEFAULT_SEED
from jobs.common.cli.config import ConfigError, Flag, JobConfig
from jobs.common.inputs.predictors import Predictors, unique_predictors

if TYPE_CHECKING:
    from connectors.traces import TraceColumns

TRACES = "traces"
VERDICTS = "verdicts: a column of the traces, or joined from a design and predictions"
SAMPLE = "sample and agreement"


class TracesConfig(JobConfig):
    """A rubric, the traces, where their verdicts come from, optional ratings, and the sample to draw."""

    rubric: Annotated[str, Flag(TRACES, metavar="FILE", default_text="required")] = Field(
        description="YAML/JSON: {description: ..., steps: [{name: ..., pattern: <regex>, ignore_case: true}]}")
    traces: Annotated[list[str], Flag(TRACES, metavar="PATH", repeat=True, default_text="required")] = Field(
        min_length=1, description="CSV/Parquet/JSONL file(s), one row per (id, model); repeat for several")
    id_column: Annotated[str, Flag(TRACES)] = Field("id", description="id column of traces, predictions and ratings")
    model_column: Annotated[str, Flag(TRACES)] = Field("model", description="model column of traces and ratings")
    trace_column: Annotated[str, Flag(TRACES)] = Field("trace", description="trace text column")
    verdict_column: Annotated[str | None, Flag(VERDICTS)] = Field(
        None, description="correct/incorrect, true/false or 1/0 (1 = correct)")
    design: Annotated[str | None, Flag(VERDICTS, metavar="RUN_DIR")] = Field(
        None, description="run directory of 'benchaudit coreset build' (the labels)")
    predictions: Annotated[Predictors, Flag(VERDICTS, metavar="NAME=PATH", repeat=True)] = Field(
        default_factory=list, description="a model's prediction file(s), NAME as in the model column, with a prediction for each id that "
                                          "model traced (other design rows need none); correct = prediction "
                                          "equals the label; an empty prediction is incorrect")
    prediction_column: Annotated[str, Flag(VERDICTS)] = Field("prediction", description="0/1 prediction column")
    per_outcome: Annotated[int, Flag(SAMPLE)] = Field(20, ge=1, description="traces per verdict and model in the sample")
    seed: Annotated[int, Flag(SAMPLE)] = Field(DEFAULT_SEED, ge=0, lt=2**64, description="hash-key seed of the sample")
    ratings: Annotated[str | None, Flag(SAMPLE, metavar="FILE")] = Field(
        None, description="one row per rated trace (id, model) and one column per rater")
    rater_columns: Annotated[list[str], Flag(SAMPLE, requires="ratings", metavar="COLUMN[,COLUMN...]",
                                             default_text="every other column")] = Field(
        default_factory=list, description="rater columns of the ratings file")

    @model_validator(mode="after")
    def _checks(self) -> TracesConfig:
        joined = self.design is not None or bool(self.predictions)
        if self.verdict_column and joined:
            raise ConfigError("verdicts come either from --verdict-column or from --design with --predictions, not both")
        if not self.verdict_column and not (self.design and self.predictions):
            raise ConfigError("verdicts: give --verdict-column, or --design together with --predictions")
        unique_predictors(self.predictions)
        return self

    def columns(self) -> TraceColumns:
        from connectors.traces import TraceColumns

        return TraceColumns(self.id_column, self.model_column, self.trace_column, self.verdict_column)
