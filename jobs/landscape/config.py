"""``benchaudit landscape`` options, declared once (flags are generated).

Models come as ``--model SPEC`` (repeatable; ``--model-settings JSON`` applies to each of them)
or as a YAML list (``--models models.yaml``) when models need settings of their own::

    - spec: hf:/models/llama-3-8b
      settings: {dtype: bfloat16}
    - spec: openai:http://gpu7:8000/v1#qwen2.5-7b
      name: qwen7b
      settings: {label_method: echo, concurrency: 16}
      actors: 4
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from audit.landscape.choices import DEFAULT_PERTURBATIONS, MPD_EXACT_LIMIT, MPD_PAIRS, PERTURBATION_NAMES
from audit.stats.choices import DEFAULT_SEED
from jobs.common.cli.config import ConfigError, Flag, check_choices, validated
from jobs.common.inputs.benchmarks import BenchmarkConfig, BenchmarkInputs, shipped_mcqa
from jobs.common.models.pool import MODEL_SETTINGS_HELP, ModelConfig, ModelSettings, declared_models

MODELS = "models"
ITEMS = "items, prompts and perturbations"
FLAGS = "review candidates, validation and the structural classifier"
LM_EVAL = "lm-evaluation-harness outputs instead of a model run"
MODEL_RUN_SAMPLE = 1000  # items per benchmark a model run scores when --sample is not given


class LandscapeConfig(BenchmarkInputs):
    """Everything that decides a landscape run's results."""

    model: Annotated[list[str], Flag(MODELS, metavar="SPEC", repeat=True)] = Field(
        default_factory=list, description="a model: hf:<path or hub id>, vllm:<path or hub id> or openai:<base URL>#<served "
                                          "name>; repeat for several")
    model_settings: Annotated[ModelSettings, Flag(MODELS, metavar="JSON|FILE", requires="model", default_text="none")] = Field(
        default_factory=dict, description=MODEL_SETTINGS_HELP + "; for --model models (a --models YAML entry has its own)")
    models: Annotated[str | None, Flag(MODELS, metavar="YAML")] = Field(
        None, description="a YAML list of models: spec, name, settings, batch_size, actors")
    batch_size: Annotated[int, Flag(MODELS)] = Field(16, ge=1, description="prompt rows per model batch, for --model models")
    actors: Annotated[int | None, Flag(MODELS, metavar="N", default_text="one per GPU; without GPUs, CPUs - 1; "
                                                                      "HTTP backends 2")] = Field(
        None, ge=1, description="model actors per --model model")
    cache: Annotated[str | None, Flag(MODELS, metavar="DIR", default_text="<out>/_cache/models")] = Field(
        None, description="response cache: a rerun, an added perturbation or an added model repeats no model call")

    sample: Annotated[int | None, Flag(ITEMS, metavar="N", default_text=f"{MODEL_RUN_SAMPLE} in a model run; every item "
                                                                        "with --from-lm-eval")] = Field(
        None, ge=1, description="items per benchmark (per task with --from-lm-eval), chosen by seeded hash (all items when "
                                "there are fewer)")
    seed: Annotated[int, Flag(ITEMS)] = Field(
        DEFAULT_SEED, ge=0, lt=2**64, description="seed of the item sample, the perturbations and a sampled MPD")
    perturbations: Annotated[list[str], Flag(ITEMS, metavar="NAME[,NAME...]")] = Field(
        default_factory=lambda: list(DEFAULT_PERTURBATIONS),
        description=f"perturbations to run, of {', '.join(PERTURBATION_NAMES)}; none (the baseline of every relative change) "
                    "is always run")
    mask_rate: Annotated[float, Flag(ITEMS, metavar="FRACTION")] = Field(
        0.5, gt=0, le=1, description="share of the stem's content words the mask perturbation hides")
    template: Annotated[str | None, Flag(ITEMS, metavar="FILE", default_text="the shipped mcqa_letter template")] = Field(
        None, description="prompt template, a JSON file with the fields of audit/landscape/templates/mcqa_letter.json")
    standardise_csqa: Annotated[bool, Flag(ITEMS)] = Field(
        True, description="CommonsenseQA (preset commonsenseqa) 5 -> 4 options: drop E, or D when E is the answer")
    level: Annotated[float, Flag(ITEMS)] = Field(
        0.95, gt=0, lt=1, description="level of the sampled MPD's interval (benchmarks over 50,000 items)")
    mpd_exact_limit: Annotated[int, Flag(cli=False)] = Field(MPD_EXACT_LIMIT, ge=2, description="exact MPD up to this many items")
    mpd_pairs: Annotated[int, Flag(cli=False)] = Field(MPD_PAIRS, ge=2, description="pairs of a sampled MPD")

    min_wrong: Annotated[int | None, Flag(FLAGS, metavar="M", default_text="every model")] = Field(
        None, ge=1, description="an item is a review candidate when at least M models miss it under noise injection")
    review_labels: Annotated[str | None, Flag(FLAGS, metavar="CSV")] = Field(
        None, description="reviewer labels: source_id, review_label, review_subtype, review_note (and benchmark when the run "
                          "has several); the run writes review_candidates.csv in this layout")
    reference: Annotated[list[str], Flag(FLAGS, metavar="PATH", repeat=True)] = Field(
        default_factory=list, description="MMLU-Redux mmlu_<subject>.csv files or folders: precision, recall and enrichment "
                                          "of the flags against the expert labels")
    classify: Annotated[bool, Flag(FLAGS)] = Field(
        False, description="ask a generation model whether each candidate's question or options are unclear")
    classifier_model: Annotated[str | None, Flag(FLAGS, metavar="NAME|SPEC", requires="classify",
                                                 default_text="the first model")] = Field(
        None, description="the classifier: a model of the run by name, or a spec")
    classifier_prompt: Annotated[str | None, Flag(FLAGS, metavar="FILE", requires="classify",
                                                  default_text="the shipped structure_v1 prompt")] = Field(
        None, description="classifier prompt, a JSON file with the fields of audit/landscape/structure_prompts/structure_v1.json")

    from_lm_eval: Annotated[str | None, Flag(LM_EVAL, metavar="DIR")] = Field(
        None, description="read lm-eval --log_samples output (samples_<task>_<date>.jsonl, results_<date>.json) under DIR: "
                          "landscapes of its continuation log-likelihoods, no model run")
    lm_eval_normalization: Annotated[Literal["raw", "length"], Flag(LM_EVAL, requires="from_lm_eval")] = Field(
        "raw", description="continuation log-likelihoods as logged (raw) or divided by the option's length in characters "
                           "(length, as lm-eval's acc_norm); tasks whose continuations are single option letters are "
                           "read as the letter distribution either way")

    def embedded(self) -> list[BenchmarkConfig]:
        return [shipped_mcqa()]

    @field_validator("perturbations")
    @classmethod
    def _known(cls, names: list[str]) -> list[str]:
        check_choices(names, PERTURBATION_NAMES, "perturbation(s)")
        return ["none", *dict.fromkeys(n for n in names if n != "none")]

    @model_validator(mode="after")
    def _inputs(self) -> LandscapeConfig:
        if self.from_lm_eval:
            if "perturbations" in self.model_fields_set:
                raise ConfigError("--perturbations cannot apply with --from-lm-eval: lm-eval's logs hold each model's answers "
                                  "on the published prompt only, and a perturbation (noise injection too) needs the model "
                                  "to answer the changed prompt; the review candidates come from the logged answers "
                                  "(flags.from = lm_eval_logs)")
            given = [f for f in ("benchmark", "benchmarks", "input", "model", "models", "template")
                     if f in self.model_fields_set]
            if given:
                flags = ", ".join("--" + f.replace("_", "-") for f in given)
                raise ConfigError(f"--from-lm-eval reads the items, options and log-likelihoods from lm-eval's samples; "
                                  f"{flags} cannot apply")
            if self.classify and not self.classifier_model:
                raise ConfigError("--classify with --from-lm-eval needs --classifier-model SPEC (there is no model in the run)")
            return self
        self.benchmark_configs()  # a bad YAML entry or --input mapping fails here (none given: the shipped ARC-Challenge)
        models = self.model_configs()
        if not models:
            raise ConfigError("give a model (--model SPEC or --models YAML), or --from-lm-eval DIR")
        names = [m.name for m in models]
        if len(set(names)) != len(names):
            raise ConfigError(f"model names must be unique, got {names}; name them in --models")
        return self

    def items_per_benchmark(self) -> int | None:
        """``--sample``, else every item of a re-analysis (its model calls are already paid for) and
        ``MODEL_RUN_SAMPLE`` items of a model run (each item costs a forward per perturbation and model)."""
        if self.sample is not None:
            return self.sample
        return None if self.from_lm_eval else MODEL_RUN_SAMPLE

    def model_configs(self) -> list[ModelConfig]:
        """Every model of the run, in order: the --models YAML, then each --model (``jobs.common.models.pool.declared_models``)."""
        return declared_models(self.models, self.model, self.model_settings, self.batch_size, self.actors)

    def classifier(self, models: list[ModelConfig]) -> ModelConfig | None:
        """The structural classifier's model: one of the run's by name or spec, else a new spec."""
        if not self.classify:
            return None
        wanted = self.classifier_model
        if wanted is None:
            return models[0]
        for m in models:
            if wanted in (m.name, m.spec):
                return m
        return validated(ModelConfig, {"spec": wanted}, "--classifier-model")

    def perturbation_params(self) -> dict[str, dict[str, Any]]:
        return {"mask": {"rate": self.mask_rate}}
