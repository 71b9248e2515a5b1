"""``benchaudit coreset build|estimate|study`` options, declared once (flags are generated)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from audit.coreset.choices import METRICS, SAMPLER_NAMES
from audit.stats.choices import DEFAULT_LEVEL, DEFAULT_SEED
from jobs.common.cli.config import Alias, ConfigError, Flag, JobConfig
from jobs.common.inputs.predictors import Predictors, unique_predictors

if TYPE_CHECKING:
    from audit.coreset.design import DesignConfig
    from audit.coreset.study import StudyConfig
    from connectors.coreset.predictions import PredictionColumns
    from connectors.coreset.targets import TargetColumns

TABLE = "target table"
RULES = "design rules (fractions, not percentages)"
PREDICTIONS = "predictions"
DIAGNOSTICS = "diagnostics (optional columns: in every file of a predictor or in none)"
STUDY = "study"
TableFormat = Literal["parquet", "csv", "jsonl"]
LEVEL_FROM_ALPHA = Alias("--alpha", convert=lambda a: str(1 - float(a)), note="--level is 1 - ALPHA")


class DesignRules(JobConfig):
    """The stratification rules a build and a study share (fractions of tau and of the budget)."""

    hard_cut_fraction: Annotated[float, Flag(RULES)] = Field(0.5, description="a negative is hard if its score >= this x tau")
    hard_reserve_fraction: Annotated[float, Flag(RULES)] = Field(
        0.3, description="share of the negative budget reserved for hard negatives")
    easy_strata: Annotated[int, Flag(RULES)] = Field(3, description="difficulty strata over the other negatives (3: terciles)")


class BuildConfig(DesignRules):
    """Everything that decides a design: the table's columns and the design rules (fractions)."""

    dataset: Annotated[str, Flag(TABLE)] = Field(
        "targets", min_length=1, description="dataset name in the summary, the run index and its trend plots")
    input: Annotated[list[str], Flag(TABLE, metavar="PATH", repeat=True, default_text="required")] = Field(
        min_length=1, description="Parquet/CSV/JSONL files, directories, globs or URLs (s3://, gs://); repeat for several")
    format: Annotated[TableFormat | None, Flag(TABLE, default_text="from the extension")] = Field(None, description="input format")
    id_column: Annotated[str, Flag(TABLE)] = Field("id", description="target id: integer or string, unique")
    label_column: Annotated[str, Flag(TABLE)] = Field("label", description="0/1 label")
    score_columns: Annotated[list[str], Flag(TABLE, metavar="COLUMN[,COLUMN...]")] = Field(
        default_factory=lambda: ["score"], min_length=1, description="scorer probabilities, averaged into the ensemble score")
    group_column: Annotated[str | None, Flag(TABLE)] = Field(
        None, description="optional group (e.g. typology) carried into the design for per-group recall")
    tau: Annotated[float, Flag(RULES, default_text="required")] = Field(
        description="operating threshold of the construction scorer (a probability)")
    hard_stratum: Annotated[bool, Flag(RULES)] = Field(
        True, description="keep a hard-negative stratum (--no-hard-stratum: difficulty strata only)")
    budget_multiplier: Annotated[float, Flag(RULES)] = Field(2.0, description="negatives drawn per positive (2: a 1:2 design)")
    seed: Annotated[int, Flag(RULES)] = Field(DEFAULT_SEED, ge=0, lt=2**64, description="hash-draw seed")
    shard_rows: Annotated[int, Flag(TABLE)] = Field(
        1_000_000, ge=1, description="rows per shard (Parquet row groups are never split)")

    @model_validator(mode="after")
    def _valid_design(self) -> BuildConfig:
        self.design_config()  # DesignConfig raises a ValueError naming the field
        return self

    def design_config(self) -> DesignConfig:
        from audit.coreset.design import DesignConfig

        return DesignConfig(
            tau=self.tau, hard_cut_fraction=self.hard_cut_fraction, hard_reserve_fraction=self.hard_reserve_fraction,
            budget_multiplier=self.budget_multiplier, n_easy_strata=self.easy_strata,
            use_hard_stratum=self.hard_stratum, seed=self.seed,
        )

    def columns(self) -> TargetColumns:
        from connectors.coreset.targets import TargetColumns

        return TargetColumns(self.id_column, self.label_column, tuple(self.score_columns), self.group_column)

    @property
    def source(self) -> str:
        return ", ".join(self.input)


class EstimateConfig(JobConfig):
    """A design (a build run directory) and the predictors to evaluate on it."""

    design: Annotated[str, Flag(PREDICTIONS, metavar="RUN_DIR", default_text="required")] = Field(
        description="run directory of 'benchaudit coreset build'")
    predictions: Annotated[Predictors, Flag(PREDICTIONS, metavar="NAME=PATH", repeat=True, default_text="required")] = Field(
        min_length=1, description="a predictor's CSV/Parquet/JSONL file(s); repeat the same NAME for sharded outputs, "
                                  "another NAME for another model (two or more give paired contrasts)")
    id_column: Annotated[str, Flag(PREDICTIONS)] = Field("id", description="id column of the prediction files")
    prediction_column: Annotated[str, Flag(PREDICTIONS)] = Field("prediction", description="0/1 prediction column")
    run_column: Annotated[str | None, Flag(PREDICTIONS)] = Field(
        None, description="run/seed column: each value becomes one run of the model (averaged, SD reported apart)")
    missing: Annotated[Literal["error", "negative"], Flag(PREDICTIONS)] = Field(
        "error", description="a missing prediction (nothing returned, unparsable) is an error or counted as negative")
    level: Annotated[float, Flag(PREDICTIONS, deprecated=(LEVEL_FROM_ALPHA,))] = Field(
        DEFAULT_LEVEL, gt=0, lt=1, description="coverage of the conservative intervals, a fraction")
    metrics: Annotated[list[str], Flag(PREDICTIONS, metavar="METRIC[,METRIC...]")] = Field(
        default_factory=lambda: list(METRICS), description="metrics to estimate")
    group_column: Annotated[str | None, Flag(DIAGNOSTICS)] = Field(
        None, description="group (typology) the model names for a positive verdict; with a design built with "
                          "--group-column gives macro-F1 among detected positives and wrong_group")
    response_column: Annotated[str | None, Flag(DIAGNOSTICS)] = Field(
        None, description="raw model output: null or blank = no response; text with an empty prediction = unparsable; "
                          "gives the failure taxonomy per model")

    @model_validator(mode="after")
    def _checks(self) -> EstimateConfig:
        unique_predictors(self.predictions)
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown or not self.metrics:
            raise ConfigError(f"--metrics: a non-empty subset of {list(METRICS)}, got {self.metrics}")
        return self

    @property
    def alpha(self) -> float:
        return 1 - self.level

    def columns(self) -> PredictionColumns:
        from connectors.coreset.predictions import PredictionColumns

        return PredictionColumns(self.id_column, self.prediction_column, self.run_column, self.group_column,
                                 self.response_column)


class DirectionConfig(BaseModel):
    """Strata built from one scorer family's columns, predictions from another family's runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    construction_scores: list[str] = Field(min_length=1)
    tau: float | None = Field(None, gt=0, lt=1)
    predictions: list[str] = Field(min_length=1)


def parse_directions(values: object) -> object:
    """``NAME:SCORES:PREDICTIONS[:TAU]`` strings (from the command line) as direction configs."""
    if not isinstance(values, list):
        return values
    out = []
    for v in values:
        if isinstance(v, str):
            parts = v.split(":")
            if len(parts) not in (3, 4) or not all(parts[:3]):
                raise ValueError(f"{v!r}: expected NAME:SCORES:PREDICTIONS[:TAU]")
            v = {"name": parts[0], "construction_scores": [c for c in parts[1].split(",") if c],
                 "predictions": [c for c in parts[2].split(",") if c], "tau": float(parts[3]) if len(parts) == 4 else None}
        out.append(v)
    return out


class StudyJobConfig(DesignRules):
    """The table, the directions and the study protocol's knobs (fractions, not percentages)."""

    input: Annotated[list[str], Flag(TABLE, metavar="PATH", repeat=True, default_text="required")] = Field(
        min_length=1, description="Parquet/CSV/JSONL files, directories, globs or URLs")
    format: Annotated[TableFormat | None, Flag(TABLE, default_text="from the extension")] = Field(None, description="input format")
    dataset: Annotated[str, Flag(TABLE)] = Field("targets", description="dataset name in the protocol and seeds")
    label_column: Annotated[str, Flag(TABLE)] = Field("label", description="0/1 label")
    direction: Annotated[list[DirectionConfig], BeforeValidator(parse_directions),
                         Flag(TABLE, metavar="NAME:SCORES:PREDICTIONS[:TAU]", repeat=True, default_text="required")] = Field(
        min_length=1, description="strata from the comma-separated SCORES columns (averaged), predictions from the "
                                  "comma-separated PREDICTIONS columns (one per run); e.g. 'lgb->xgb:lgb_0,lgb_1:xgb_0'. Repeat")
    tau: Annotated[float | None, Flag(TABLE, default_text="each direction's own")] = Field(
        None, gt=0, lt=1, description="construction scorer threshold for directions that give none")
    prediction_threshold: Annotated[float | None, Flag(TABLE, default_text="PREDICTIONS are 0/1")] = Field(
        None, gt=0, le=1, description="PREDICTIONS are probabilities: predict positive at >= this value")
    draws: Annotated[int, Flag(STUDY)] = Field(500, ge=2, description="draws K per configuration")
    budget_multipliers: Annotated[list[float], Flag(STUDY, metavar="M[,M...]")] = Field(
        default_factory=lambda: [2.0], min_length=1, description="negatives per positive, e.g. 2,4,8")
    samplers: Annotated[list[str], Flag(STUDY, metavar="NAME[,NAME...]")] = Field(
        default_factory=lambda: list(SAMPLER_NAMES), description="samplers to compare")
    metrics: Annotated[list[str], Flag(STUDY, metavar="METRIC[,METRIC...]")] = Field(
        default_factory=lambda: ["precision", "recall", "f1"], description="metrics")
    level: Annotated[float, Flag(STUDY, deprecated=(LEVEL_FROM_ALPHA,))] = Field(
        DEFAULT_LEVEL, gt=0, lt=1, description="coverage of the conservative intervals, a fraction")
    seed: Annotated[int, Flag(STUDY, deprecated=("--root-seed",))] = Field(
        DEFAULT_SEED, ge=0, lt=2**64, description="root of the SeedSequence of every draw")

    @model_validator(mode="after")
    def _checks(self) -> StudyJobConfig:
        names = [d.name for d in self.direction]
        if len(set(names)) != len(names):
            raise ConfigError(f"--direction: direction names must be unique, got {names}")
        missing = [d.name for d in self.direction if d.tau is None and self.tau is None]
        if missing:
            raise ConfigError(f"--direction {missing[0]}: no TAU in the spec and no --tau")
        self.study_config()  # StudyConfig raises a ValueError naming the field
        return self

    def directions(self) -> list[DirectionConfig]:
        """The directions with their thresholds resolved (the spec's TAU, else --tau)."""
        return [d if d.tau is not None else d.model_copy(update={"tau": self.tau}) for d in self.direction]

    def study_config(self) -> StudyConfig:
        from audit.coreset.study import StudyConfig

        return StudyConfig(
            draws=self.draws, budget_multipliers=tuple(self.budget_multipliers), samplers=tuple(self.samplers),
            metrics=tuple(self.metrics), hard_cut_fraction=self.hard_cut_fraction,
            hard_reserve_fraction=self.hard_reserve_fraction, n_easy_strata=self.easy_strata, alpha=1 - self.level,
            root_seed=self.seed,
        )
