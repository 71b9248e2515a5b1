"""Model stages on Ray Data actor pools: prompt rows in, the model's answers appended, per model.

Every model-based audit (landscape, contamination) runs its prompts through ``model_stage``: a
``map_batches`` with a callable class from ``connectors.models`` (``ChoiceScorer`` for option
log-probabilities, ``TextGenerator`` for generation) on an ``ActorPoolStrategy`` pool, so each
actor loads the model once and reads of the next batches overlap with the model's work. Local
backends (``hf``, ``vllm``) take one GPU per actor when the cluster has GPUs and run on CPU
otherwise; ``openai`` actors hold an HTTP client with bounded concurrency and no GPU.

Every call goes through the response cache under the run store, so a rerun, an added
perturbation or an added model repeats no forward pass; the rows say which answers came from it
(``cached``), and ``model_counts`` turns that into the manifest's call accounting.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from connectors.models.spec import parse_model_spec

Operation = Literal["choice", "generate"]
LOCAL_BACKENDS = ("hf", "vllm")


@dataclass(frozen=True)
class ModelStage:
    """One model and how it runs: its spec, output-changing settings, pool size and batch size."""

    spec: str
    settings: dict[str, Any] = field(default_factory=dict)
    batch_size: int = 16
    max_actors: int | None = None  # None: one per GPU (local backends) or 2 (HTTP backends)
    generation: dict[str, Any] = field(default_factory=dict)  # GenerationParams fields, for "generate"


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
    return ds.map_batches(cls, fn_constructor_kwargs=kwargs, batch_size=stage.batch_size, batch_format="pyarrow",
                          compute=ray.data.ActorPoolStrategy(min_size=1, max_size=actors), num_gpus=num_gpus,
                          num_cpus=num_cpus)


def model_counts(table: pa.Table) -> dict[str, int]:
    """Call accounting of one model's output rows: answered, from the cache, computed, failed."""
    cached = int(pc.sum(table.column("cached")).as_py() or 0) if table.num_rows else 0
    failed = table.num_rows - table.column("error").null_count if table.num_rows else 0
    return {"rows": table.num_rows, "cache_hits": cached, "computed": table.num_rows - cached, "errors": failed}
