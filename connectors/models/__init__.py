"""Model backends behind one interface (``base``): ``hf`` (transformers), ``vllm`` (in-process
engine, optional) and ``openai`` (any OpenAI-compatible endpoint), built from a spec string
(``spec``) by ``registry``, optionally behind the response cache (``cache``); ``batches`` turns
Arrow prompt batches into Arrow answer columns. Nothing here imports torch or vLLM until a
backend of that kind is built.
"""
from connectors.models.base import (
    BackendError,
    CapabilityError,
    ChoiceScores,
    Generation,
    GenerationParams,
    LabelTokenError,
    ModelBackend,
)
from connectors.models.batches import (
    CHOICE_COLUMNS,
    GENERATION_COLUMNS,
    PROMPT_SCHEMA,
    REPORT_COLUMN,
    ChoiceScorer,
    TextGenerator,
    generate_prompt_batch,
    merge_backend_reports,
    score_prompt_batch,
)
from connectors.models.cache import CachedBackend, ResponseCache
from connectors.models.http_client import EndpointError
from connectors.models.registry import build_backend, open_backend
from connectors.models.spec import ModelSpec, ModelSpecError, parse_model_spec

__all__ = [
    "CHOICE_COLUMNS",
    "GENERATION_COLUMNS",
    "PROMPT_SCHEMA",
    "REPORT_COLUMN",
    "BackendError",
    "CachedBackend",
    "CapabilityError",
    "ChoiceScorer",
    "ChoiceScores",
    "EndpointError",
    "Generation",
    "GenerationParams",
    "LabelTokenError",
    "ModelBackend",
    "ModelSpec",
    "ModelSpecError",
    "ResponseCache",
    "TextGenerator",
    "build_backend",
    "generate_prompt_batch",
    "merge_backend_reports",
    "open_backend",
    "parse_model_spec",
    "score_prompt_batch",
]
