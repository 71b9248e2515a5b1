"""Model stages on Ray Data actor pools: prompt rows in, the model's answers appended, per model.

Every model-based audit (landscape, contamination) runs its prompts through ``model_stage``: a
``map_batches`` with a callable class from ``connectors.models`` (``ChoiceScorer`` for option
log-probabilities, ``TextGenerator`` for generation) on an ``ActorPoolStrategy`` pool, so each
actor loads the model once and reads of the next batches overlap with the model's work. Local
backends (``hf``, ``vllm``) take one GPU per actor when the cluster has GPUs and run on CPU
otherwise; ``openai`` actors hold an HTTP client with bounded concurrency and no GPU.

Every call goes through the response cache under the run store, so a rerun, an added
perturbation or an added model repeats no forward pass; the rows say which answers came from it
(``cached``), and ``model_counts`` turns that into the manifest's call accounting. The jobs run a
stage through the model step (``jobs.common.models.step``), which counts its answers on the driver as
they come back (progress, unusable answers by reason, the ``--max-skipped`` budget).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from connectors.models.spec import BACKENDS, ModelSpecError, parse_model_spec

if TYPE_CHECKING:
    import pyarrow as pa

Operation = Literal["choice", "generate"]
LOCAL_BACKENDS = ("hf", "vllm")


@dataclass(frozen=True)
class ModelStage:
    """One model and how it runs: its spec, output-changing settings, pool size and batch size."""

    spec: str
    settings: dict[str, Any] = field(default_factory=dict)
    batch_size: int = 16
    max_actors: int | None = None  # None: one per GPU (local backends) or 2 (HTTP backends)
    generation: dict[str, Any] = field(default_factory=dict)  # Decoding fields, for "generate"


def default_model_name(spec: str) -> str:
    """A short name for tables: the served name (openai) or the last part of the path or hub id."""
    parsed = parse_model_spec(spec)
    return parsed.model if parsed.backend == "openai" else PurePosixPath(parsed.model.rstrip("/")).name or parsed.model


class ModelConfig(BaseModel):
    """One model of a run: its spec, its name in the tables, its backend settings and its pool."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: str
    name: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    batch_size: int = Field(16, ge=1)
    actors: int | None = Field(None, ge=1)

    @field_validator("spec")
    @classmethod
    def _parses(cls, spec: str) -> str:
        try:
            return str(parse_model_spec(spec))
        except ModelSpecError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _named(self) -> ModelConfig:
        """The name defaults to one taken from the spec; either way it is an input name (it names a folder,
        ``data/scores/model=<name>/``: see ``connectors.runs.paths``)."""
        from connectors.runs.paths import input_name  # when a value is validated, never while flags are parsed

        if not self.name:
            object.__setattr__(self, "name", default_model_name(self.spec))
        input_name(self.name, "model name")
        return self

    def stage(self) -> ModelStage:
        return ModelStage(self.spec, dict(self.settings), self.batch_size, self.actors)


MODELS_YAML_FIELDS = "spec, name, settings, batch_size, actors"


def declared_models(models_yaml: str | None, specs: Sequence[str], settings: dict[str, Any], batch_size: int,
                    actors: int | None, flag: str = "--model") -> list[ModelConfig]:
    """The one way a model job declares its models: the entries of a ``--models`` YAML list (each with its
    own settings and pool), then each model given by flag (``flag``), with ``--model-settings`` (under
    ``check_model_settings``' rule), ``--batch-size`` and ``--actors``. Errors name the file and entry, or
    the flag and spec."""
    from connectors.models.spec import shown_spec
    from jobs.common.cli.config import read_entries, validated

    out = read_entries(ModelConfig, models_yaml, MODELS_YAML_FIELDS) if models_yaml else []
    return out + [validated(ModelConfig, {"spec": s, "settings": settings_for(settings, s), "batch_size": batch_size,
                                          "actors": actors}, f"{flag} {shown_spec(s)}") for s in specs]


def read_model_settings(value: object) -> object:
    """``--model-settings``: inline JSON (starting with ``{``) or a JSON/YAML file holding one mapping."""
    if not isinstance(value, str):
        return value
    if value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    import fsspec
    import yaml

    from audit.safe_yaml import load_yaml

    try:
        with fsspec.open(value, "r", encoding="utf-8") as fh:
            found = load_yaml(fh)
    except FileNotFoundError:
        raise ValueError(f"{value}: no such file (expected inline JSON or a JSON/YAML file)") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{value}: not valid JSON/YAML ({exc})") from None
    if not isinstance(found, dict):
        raise ValueError(f"{value}: expected one mapping of settings")
    return found


def _keyed(settings: dict[str, Any]) -> bool:
    """Whether settings are given per backend or per model (every key a backend name or a model spec)."""
    return bool(settings) and all(k in BACKENDS or ":" in k for k in settings)


def check_model_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The one meaning of ``--model-settings`` in every model job: a flat mapping (``{"dtype": "bfloat16"}``)
    is every model's; a mapping keyed by backend name or model spec (``{"openai": {...}, "hf:/m": {...}}``)
    gives each model its backend's entry, then its own. A key that is neither is a setting, so the two
    forms cannot be confused (no setting is called ``hf`` or holds a ``:``)."""
    if _keyed(settings):
        for key, value in settings.items():
            if key not in BACKENDS:
                parse_model_spec(key)  # a misspelt spec is an error here, not a silently unused entry
            if not isinstance(value, dict):
                raise ValueError(f"{key}: expected a mapping of settings, got {type(value).__name__}")
    return settings


def settings_for(settings: dict[str, Any], spec: str) -> dict[str, Any]:
    """A model's backend settings under ``check_model_settings``' rule."""
    if not _keyed(settings):
        return dict(settings)
    parsed = parse_model_spec(spec)
    return {**settings.get(parsed.backend, {}), **settings.get(str(parsed), {}), **settings.get(spec, {})}


MODEL_SETTINGS_HELP = ("backend settings: one JSON object (or a JSON/YAML file) for every model, e.g. '{\"dtype\": \"bfloat16\"}', "
                       "or keyed by backend name or model spec, e.g. '{\"openai\": {\"label_method\": \"echo\"}, "
                       "\"hf\": {\"batch_size\": 8}}' (a spec's entry overrides its backend's)")
ModelSettings = Annotated[dict[str, Any], BeforeValidator(read_model_settings), AfterValidator(check_model_settings)]


def response_cache_root(cache: str | None, out: str) -> str:
    """``--cache``, else ``<out>/_cache/models``: one folder for every model audit under a run root, so a
    landscape and a contamination run of the same model share the answers they have in common."""
    import os

    from connectors.runs.output import refuse_links
    from connectors.runs.rundir import join

    if cache:
        return cache
    root = out if "://" in out else os.path.abspath(out)
    refuse_links(root, join(root, "_cache", "models"))  # a planted <out>/_cache link would take the answers elsewhere
    return join(root, "_cache", "models")


def _resources(stage: ModelStage) -> tuple[float, float, int]:
    """(num_gpus, num_cpus, actors) per actor for this backend on the current cluster."""
    import ray

    gpus = int(ray.cluster_resources().get("GPU", 0))
    cpus = int(ray.cluster_resources().get("CPU", 1))
    if parse_model_spec(stage.spec).backend in LOCAL_BACKENDS:
        if gpus:
            return 1.0, 1.0, stage.max_actors or gpus
        # CPU only: leave a CPU for the reads and the prompt stage (an actor pool that claims every
        # CPU starves the tasks feeding it)
        return 0.0, 1.0, stage.max_actors or max(1, cpus - 1)
    return 0.0, 0.5, stage.max_actors or 2


def actor_needs(stage: ModelStage) -> dict[str, float]:
    """What one actor of the stage asks of a node: what a live node must have to take a lost node's actors over."""
    num_gpus, num_cpus, _ = _resources(stage)
    return {"CPU": num_cpus, "GPU": num_gpus}


def model_stage(ds, stage: ModelStage, operation: Operation, cache_root: str):
    """``ds`` (prompt rows, see ``connectors.models.batches.PROMPT_SCHEMA``) with the model's answers."""
    import ray

    from connectors.models.batches import ChoiceScorer, TextGenerator

    num_gpus, num_cpus, actors = _resources(stage)
    kwargs: dict[str, Any] = {"spec": stage.spec, "settings": stage.settings, "cache_root": cache_root}
    cls = ChoiceScorer
    if operation == "generate":
        cls = TextGenerator
        kwargs["params"] = stage.generation
    # One block per batch: a task's outputs are merged into one block, so a block of many batches would come
    # back to the driver whole, after its last batch -- no progress to show and no early stop until then.
    ds = ds.repartition(target_num_rows_per_block=stage.batch_size)
    out = ds.map_batches(cls, fn_constructor_kwargs=kwargs, batch_size=stage.batch_size, batch_format="pyarrow",
                         compute=ray.data.ActorPoolStrategy(min_size=1, max_size=actors), num_gpus=num_gpus,
                         num_cpus=num_cpus)
    # A real model on a loaded CPU once took over Ray Data's 30-minute no-progress limit for one block of prompt rows,
    # and the run failed (the answers made so far kept in the response cache). A model stage is as slow as its rows
    # are; HTTP backends bound a stuck call with their own timeouts and retries, so the stall detector is off here.
    out.context.execution_no_progress_timeout_s = -1
    return out


def model_counts(table: pa.Table) -> dict[str, int]:
    """Call accounting of one model's output rows: answered, from the cache, computed, failed."""
    import pyarrow.compute as pc

    cached = int(pc.sum(table.column("cached")).as_py() or 0) if table.num_rows else 0
    failed = table.num_rows - table.column("error").null_count if table.num_rows else 0
    return {"rows": table.num_rows, "cache_hits": cached, "computed": table.num_rows - cached, "errors": failed}


def check_model(entry: dict, check_files: bool) -> str:
    """One models-list entry: a spec that parses, settings the backend knows and, for a local
    ``hf``/``vllm`` path, weights that exist (an endpoint is not called)."""
    import os

    from connectors.models.fetch import FIXTURES, fixture_model
    from jobs.common.cli.config import validated

    cfg = validated(ModelConfig, entry, "model")
    spec = parse_model_spec(cfg.spec)
    if cfg.settings:
        from connectors.models.registry import check_settings

        check_settings(spec, cfg.settings)
    if spec.backend == "hf" and spec.model in FIXTURES:
        return f"{cfg.name}: hf (model fixture{', ' + fixture_model(spec.model) if check_files else ''})"
    local = spec.backend in LOCAL_BACKENDS and (spec.model.startswith((os.sep, ".", "~")) or os.path.exists(spec.model))
    if check_files and local and not os.path.exists(os.path.expanduser(spec.model)):
        raise ValueError(f"{cfg.spec}: no such file or folder")
    where = "local weights" if local else ("endpoint, not called" if spec.backend == "openai" else "hub id, not downloaded")
    return f"{cfg.name}: {spec.backend} ({where})"


def validate_file(path: str, check_files: bool) -> list:
    """``benchaudit validate`` of a models YAML list (see ``jobs.common.cli.validation``)."""
    from connectors.io.yaml_lists import read_yaml_list
    from jobs.common.cli.validation import check_entries

    return check_entries(read_yaml_list(path, "spec, name, settings, batch_size, actors"),
                         lambda entry: check_model(entry, check_files))
