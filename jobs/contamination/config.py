"""``benchaudit contamination`` options, declared once (flags are generated).

Two modes: an audit (``--worker-model`` on one benchmark: sample, routers, worker, statistics) and
a re-analysis (``--outcomes FILE``: the statistics of a per-question outcome table, no model call).
Options of one mode given in the other are refused, so nothing is silently ignored.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field, model_validator

from audit.contamination.choices import DEFAULT_M, DEFAULT_N, SLOTS
from audit.stats.choices import DEFAULT_SEED
from connectors.benchmarks.choices import PRESET_NAMES
from connectors.models.spec import parse_model_spec
from jobs.common.cli.config import ConfigError, Flag, IntervalOptions, parse_named_inputs
from jobs.common.inputs.benchmarks import INPUT, BenchmarkConfig, BenchmarkInputs, shipped_mcqa
from jobs.common.models.pool import MODEL_SETTINGS_HELP, ModelConfig, ModelSettings, ModelStage, declared_models

if TYPE_CHECKING:
    from audit.contamination.plan import ModelRoles, PlanConfig
    from audit.contamination.prompts import PromptSet
    from connectors.contamination.outcomes import OutcomeColumns

MODELS = "models"
ROUTING = "routing and decoding"
PROMPTS = "prompts (shipped: audit/contamination/data/)"
EXECUTION = "model execution"
OUTCOMES = "re-analysis of an outcome table (--outcomes)"
ANALYSIS = "analysis"
_OUTCOME_COLUMN = Flag(OUTCOMES, requires="outcomes")
# fields of the audit mode: refused together with --outcomes
AUDIT_ONLY = ("benchmark", "benchmarks", "input", "worker_model", "router_model", "models", "model_settings", "independent",
              "sample",
              "prompts", "forward_full_prompt", "noisy_rewrite_prompt", "aggregate_prompt", "worker_prompt",
              "router_max_tokens", "worker_max_tokens", "noisy_temperature", "noisy_top_p", "limit")
# fields that decide where or how fast calls run, not their results: kept out of the config hash
EXECUTION_ONLY = ("batch_size", "actors", "cache")


class ContaminationConfig(BenchmarkInputs, IntervalOptions):
    """Everything that decides a contamination run's results."""

    benchmark: Annotated[list[BenchmarkConfig], BeforeValidator(parse_named_inputs),
                         Flag(INPUT, metavar="NAME:PRESET:PATH", repeat=True, default_text="the shipped ARC-Challenge test set")] = Field(
        default_factory=list, description="the benchmark to sample questions from, by preset (" + ", ".join(sorted(PRESET_NAMES))
                                          + "); PATH is a file, directory, glob or URL (one benchmark per run)")
    worker_model: Annotated[list[str], Flag(MODELS, metavar="SPEC|NAME", repeat=True,
                                            default_text="none: required unless --outcomes")] = Field(
        default_factory=list, description="an audited model (hf:<id or path>, vllm:<id or path>, openai:<base URL>#<model>, "
                                          "or the name of a --models entry); repeat for several")
    router_model: Annotated[list[str], Flag(MODELS, metavar="SPEC|NAME", repeat=True,
                                            default_text="each worker routes for itself")] = Field(
        default_factory=list, description="the model that relays and rewrites for the workers (a spec or a --models entry's "
                                          "name): once for all of them, or once per --worker-model in the same order")
    models: Annotated[str | None, Flag(MODELS, metavar="YAML")] = Field(
        None, description="a YAML list of models, as landscape takes it: spec, name, settings, batch_size, actors; "
                          "--worker-model and --router-model name them")
    model_settings: Annotated[ModelSettings, Flag(MODELS, metavar="JSON|FILE", default_text="none")] = Field(
        default_factory=dict, description=MODEL_SETTINGS_HELP + "; for models given by spec (a --models entry has its own)")
    max_routers: Annotated[int, Flag(ROUTING, metavar="M", default_text=f"{DEFAULT_M}; with --outcomes: the largest r in "
                                                                        "the table")] = Field(
        DEFAULT_M, ge=1, description="noisy settings r = 1..M parallel routers (with --outcomes: the M expected)")
    independent: Annotated[bool, Flag(ROUTING)] = Field(
        False, description="fresh routers for every r (M(M+1)/2 noisy router calls per question and router model) instead "
                           "of the nested design (r uses the first r of M router outputs: M calls)")
    sample: Annotated[int, Flag(ROUTING, metavar="N")] = Field(
        DEFAULT_N, ge=1, description="questions drawn once, identical across models and settings")
    seed: Annotated[int, Flag(ROUTING)] = Field(
        DEFAULT_SEED, ge=0, lt=2**64, description="seed of the question sample, the noisy routers' sampling and the bootstrap")
    router_max_tokens: Annotated[int, Flag(ROUTING, metavar="N")] = Field(
        768, ge=1, description="longest router output (tokens), clean and noisy")
    worker_max_tokens: Annotated[int, Flag(ROUTING, metavar="N")] = Field(
        16, ge=1, description="longest worker answer (tokens); the answer must be one letter")
    noisy_temperature: Annotated[float, Flag(ROUTING)] = Field(
        0.8, gt=0, description="sampling temperature of the noisy routers (the clean relay and the worker are greedy)")
    noisy_top_p: Annotated[float, Flag(ROUTING)] = Field(0.95, gt=0, le=1, description="nucleus of the noisy routers' sampling")
    prompts: Annotated[str | None, Flag(PROMPTS, metavar="DIR")] = Field(
        None, description="a folder with any of " + ", ".join(f"{s}.txt" for s in SLOTS) + " replacing the shipped prompts")
    forward_full_prompt: Annotated[str | None, Flag(PROMPTS, metavar="FILE", default_text="shipped")] = Field(
        None, description="clean relay (router) prompt file")
    noisy_rewrite_prompt: Annotated[str | None, Flag(PROMPTS, metavar="FILE", default_text="shipped")] = Field(
        None, description="noisy rewrite (router) prompt file")
    aggregate_prompt: Annotated[str | None, Flag(PROMPTS, metavar="FILE", default_text="shipped")] = Field(
        None, description="prompt file combining the router outputs into the worker's input")
    worker_prompt: Annotated[str | None, Flag(PROMPTS, metavar="FILE", default_text="shipped")] = Field(
        None, description="worker prompt file")
    batch_size: Annotated[int, Flag(EXECUTION, metavar="N")] = Field(16, ge=1, description="prompt rows per model batch")
    actors: Annotated[int | None, Flag(EXECUTION, metavar="N", default_text="one per GPU; on CPU, CPUs - 1; openai: 2")] = Field(
        None, ge=1, description="model actors per stage")
    cache: Annotated[str | None, Flag(EXECUTION, metavar="ROOT", default_text="<out>/_cache/models")] = Field(
        None, description="response cache shared across runs, so a rerun, a larger M or an added model repeats no call")
    outcomes: Annotated[list[str], Flag(OUTCOMES, metavar="PATH", repeat=True, default_text="none: audit models")] = Field(
        default_factory=list, description="re-analyse a per-question outcome table (Parquet or CSV: file, folder or glob) "
                                          "with zero model calls")
    question_id_column: Annotated[str, _OUTCOME_COLUMN] = Field("question_id", description="question id column")
    model_column: Annotated[str, _OUTCOME_COLUMN] = Field("model", description="worker model column")
    condition_column: Annotated[str, _OUTCOME_COLUMN] = Field(
        "condition", description="condition column (forward_full or noisy_rewrite)")
    r_column: Annotated[str, _OUTCOME_COLUMN] = Field("r", description="number-of-routers column (1 for forward_full)")
    correct_column: Annotated[str, _OUTCOME_COLUMN] = Field("correct", description="0/1 correctness column")
    status_column: Annotated[str, _OUTCOME_COLUMN] = Field("status", description="outcome category column (optional in the file)")
    answer_column: Annotated[str, _OUTCOME_COLUMN] = Field("answer", description="raw worker answer column (optional in the file)")
    bootstrap: Annotated[int, Flag(ANALYSIS)] = Field(
        10_000, ge=1, description="question-clustered bootstrap replicates of the improve-degrade trend")
    level: Annotated[float, Flag(ANALYSIS)] = Field(
        0.95, gt=0, lt=1, description="level of the trend's two-sided bootstrap interval; 1 - level is also alpha of the "
                                      "exact McNemar tests, Holm-corrected over every model x r cell as one family, so the "
                                      "family-wise error rate of every 'significantly above baseline' count (per model, per "
                                      "r and their total) is at most 1 - level; 'above baseline' counts are point estimates")

    def embedded(self) -> list[BenchmarkConfig]:
        return [shipped_mcqa()]

    @model_validator(mode="after")
    def _mode(self) -> ContaminationConfig:
        if self.outcomes:
            given = [f for f in AUDIT_ONLY if f in self.model_fields_set and getattr(self, f)]
            if given:
                flags = ", ".join("--" + f.replace("_", "-") for f in given)
                raise ConfigError(f"--outcomes re-analyses a table with no model call; {flags} cannot apply")
            return self
        if not self.worker_model:
            raise ConfigError("give --worker-model SPEC (and a benchmark), or --outcomes FILE to re-analyse a table")
        benchmarks = self.benchmark_configs()
        if len(benchmarks) != 1:
            raise ConfigError(f"the audit samples from one benchmark; got {len(benchmarks)} "
                              "(give one --benchmark NAME:PRESET:PATH or --input)")
        declared = self._declared()
        for ref in (*self.worker_model, *self.router_model):
            if ref not in declared:
                parse_model_spec(ref)
        if self.router_model and len(self.router_model) not in (1, len(self.worker_model)):
            raise ConfigError(f"--router-model: give one for every worker or one per --worker-model; got "
                              f"{len(self.router_model)} for {len(self.worker_model)} workers")
        self.roles()
        return self

    # -- what the run uses ------------------------------------------------------------------
    def roles(self) -> list[ModelRoles]:
        from audit.contamination.plan import ModelRoles

        routers = self.router_model * len(self.worker_model) if len(self.router_model) == 1 else self.router_model
        return [ModelRoles(w, routers[i] if routers else None) for i, w in enumerate(self.worker_model)]

    def plan_config(self) -> PlanConfig:
        from audit.contamination.plan import PlanConfig
        from audit.mcqa.prompt import Decoding

        return PlanConfig(m=self.max_routers, design="independent" if self.independent else "nested", seed=self.seed,
                          clean_router=Decoding(temperature=0.0, max_new_tokens=self.router_max_tokens),
                          noisy_router=Decoding(temperature=self.noisy_temperature, top_p=self.noisy_top_p,
                                                max_new_tokens=self.router_max_tokens),
                          worker=Decoding(temperature=0.0, max_new_tokens=self.worker_max_tokens))

    def prompt_files(self) -> dict[str, str]:
        """Slot -> file for every prompt replaced: the folder's files, then the per-prompt flags."""
        from connectors.contamination.prompts import prompt_dir_files

        files = prompt_dir_files(self.prompts) if self.prompts else {}
        for slot in SLOTS:
            path = getattr(self, f"{slot}_prompt")
            if path:
                files[slot] = path
        return files

    def prompt_set(self) -> PromptSet:
        from connectors.contamination.prompts import read_prompt_set

        return read_prompt_set(self.prompt_files())

    def _declared(self) -> dict[str, ModelConfig]:
        """The --models entries by name and by spec."""
        entries = declared_models(self.models, [], self.model_settings, self.batch_size, self.actors)
        return {**{m.spec: m for m in entries}, **{m.name: m for m in entries}}

    def declared_model(self, ref: str) -> ModelConfig:
        """A --worker-model or --router-model: its --models entry (by name or spec), else the model given by spec
        with --model-settings, --batch-size and --actors (``jobs.common.models.pool.declared_models``, as landscape)."""
        found = self._declared().get(ref)
        return found or declared_models(None, [ref], self.model_settings, self.batch_size, self.actors, "--worker-model")[0]

    def model_stage(self, ref: str) -> ModelStage:
        return self.declared_model(ref).stage()

    def settings_for(self, ref: str) -> dict[str, Any]:
        """A model's backend settings (``jobs.common.models.pool.check_model_settings`` says how flags give them)."""
        return dict(self.declared_model(ref).settings)

    def alpha(self) -> float:
        """The tests' alpha, 1 - ``--level``, without the float residue (0.05, not 0.050000000000000044)."""
        return round(1 - self.level, 12)

    def outcome_columns(self) -> OutcomeColumns:
        from connectors.contamination.outcomes import OutcomeColumns

        return OutcomeColumns(question_id=self.question_id_column, model=self.model_column, condition=self.condition_column,
                              r=self.r_column, correct=self.correct_column, status=self.status_column, answer=self.answer_column)

    def hashed(self) -> dict[str, Any]:
        """The config as it decides results (execution options left out)."""
        return self.model_dump(exclude=set(EXECUTION_ONLY))
