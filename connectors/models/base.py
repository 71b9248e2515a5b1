"""One interface for every model backend (after lm-eval's ``lm_eval/api/model.py``).

Two operations:

- ``choice_logprobs(prompts, labels)``: for each prompt, the log-probabilities of its option
  labels (``A``, ``B``, ...) as the next token after the prompt, read from **one** forward pass
  per item (lm-eval's ``loglikelihood`` scores each option as a continuation, one sequence per
  option), plus ``label_mass``, the total probability the labels cover (1 - label_mass is what
  the model put on anything else).
- ``generate(prompts, params)``: text continuations, greedy by default.

A failure that belongs to one item (a NaN from the model, a label missing from an endpoint's
top log-probs, an endpoint that gave up after its retries) comes back in that item's ``error``;
only a misconfiguration that no item could survive (weights not found, a tokenizer without
single-token labels, an endpoint kind that cannot do the operation) raises.

A backend is built in-process from (spec, settings) -- in a Ray actor's ``__init__`` -- and is
Ray-free. ``settings()`` holds every setting that changes outputs, for the manifest and the
response cache key; it never holds an API key.
"""
from __future__ import annotations

import abc
import dataclasses
import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from audit.mcqa.prompt import GREEDY, Decoding
from connectors.models.spec import ModelSpec


class PromptLike(Protocol):
    """What a backend reads from a prompt (``audit.mcqa.prompt.Prompt`` is one)."""

    user: str
    system: str | None
    answer_prefix: str


class BackendError(RuntimeError):
    """A backend that cannot run at all (bad weights path, unsupported operation, ...).

    Errors as data: ``reason`` is the failure's code and ``transient`` whether a rerun may pass, set here
    where the failure is known, so a job decides what to do from them and never from the message text."""

    reason = "backend"
    transient = False


class LabelTokenError(BackendError):
    """The tokenizer does not encode an option label as one token: one forward cannot score it."""

    reason = "label_not_one_token"


class CapabilityError(BackendError):
    """The backend or endpoint kind cannot perform the requested operation."""

    reason = "capability"


@dataclass(frozen=True)
class ChoiceScores:
    """One item's label log-probabilities (natural log, in label order) and their total mass."""

    logprobs: tuple[float, ...] | None
    label_mass: float | None
    error: str | None = None
    error_code: str | None = None  # the reason code of ``error``, set where the item failed
    transient: bool = False  # whether ``error`` may pass on a rerun (a request that gave up after its retries)
    cached: bool = field(default=False, compare=False)  # answered by the response cache: no forward pass made


@dataclass(frozen=True)
class Generation:
    """One generated continuation with its token accounting."""

    text: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    error: str | None = None
    error_code: str | None = None  # the reason code of ``error``, set where the item failed
    transient: bool = False  # whether ``error`` may pass on a rerun (a request that gave up after its retries)
    cached: bool = field(default=False, compare=False)  # answered by the response cache: no call made


class ModelBackend(abc.ABC):
    """Base of the hf, vllm and openai backends. ``counters`` counts real work: ``forward_passes``
    (hf/vllm batches through the model), ``requests``/``retries``/``failures`` (HTTP)."""

    spec: ModelSpec

    def __init__(self) -> None:
        self.counters: Counter[str] = Counter()

    @abc.abstractmethod
    def settings(self) -> dict[str, Any]:
        """Every setting that changes outputs (resolved values, not defaults), JSON-serialisable."""

    @abc.abstractmethod
    def render(self, prompt: PromptLike) -> str:
        """The exact text the model is given for ``prompt`` (chat template applied or not)."""

    def label_strings(self, prompt: PromptLike, labels: Sequence[str]) -> list[str]:
        """The text of each label as the next token after the rendered prompt (e.g. ``" A"``)."""
        return label_strings(labels, prompt.answer_prefix)

    @abc.abstractmethod
    def choice_logprobs(self, prompts: Sequence[PromptLike], labels: Sequence[Sequence[str]]) -> list[ChoiceScores]:
        """Label log-probs at the final position, one forward per item; ``labels[i]`` for ``prompts[i]``."""

    @abc.abstractmethod
    def generate(self, prompts: Sequence[PromptLike], params: Decoding = GREEDY) -> list[Generation]:
        """Continuations of the rendered prompts."""

    def generate_each(self, prompts: Sequence[PromptLike], params: Sequence[Decoding]) -> list[Generation]:
        """Continuations with settings of their own, ``params[i]`` for ``prompts[i]`` (e.g. a sampling seed per row).

        Why: one batch may mix decodings (the contamination audit's greedy relay and its seeded noisy
        routers, one seed per question and router slot). This default sends each group of equal
        settings to ``generate``, order kept; backends that can batch mixed settings override it.
        """
        check_params(prompts, params)
        groups: dict[Decoding, list[int]] = {}
        for i, p in enumerate(params):
            groups.setdefault(p, []).append(i)
        out: list[Generation | None] = [None] * len(prompts)
        for p, rows in groups.items():
            for i, g in zip(rows, self.generate([prompts[i] for i in rows], p)):
                out[i] = g
        return out  # type: ignore[return-value]

    def identity(self) -> dict[str, Any]:
        """Which model this is: the spec and the weights' revision (part of every cache key)."""
        return {"spec": str(self.spec), "revision": self.settings().get("revision")}

    def close(self) -> None:  # noqa: B027 -- optional hook: most backends hold nothing to release
        """Release the model or connections (an actor calls it on shutdown)."""


S = TypeVar("S")


def settings_from(cls: type[S], values: Mapping[str, Any] | S | None, spec: ModelSpec) -> S:
    """A backend's frozen settings from a mapping; an unknown key names the spec and the known keys."""
    if values is None:
        return cls()
    if isinstance(values, cls):
        return values
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise BackendError(f"{spec}: unknown setting(s) {unknown}; known: {sorted(known)}")
    return cls(**values)


def label_strings(labels: Sequence[str], answer_prefix: str) -> list[str]:
    """Labels as the next token: ``" A"`` after ``Answer:``, ``"A"`` after a space or newline."""
    space = " " if answer_prefix and not answer_prefix[-1].isspace() else ""
    return [space + label for label in labels]


def check_params(prompts: Sequence[Any], params: Sequence[Decoding]) -> None:
    """``generate_each`` takes one settings object per prompt."""
    if len(params) != len(prompts):
        raise ValueError(f"{len(prompts)} prompts but {len(params)} generation settings")


MAX_LOGPROB = 1e-6  # above this a log-prob is no probability (audit.landscape.metrics allows the same rounding)


def choice_problem(logprobs: Any, labels: Sequence[str]) -> str | None:
    """Why ``logprobs`` cannot be one item's label log-probs (None when they can): one real number per
    label, none NaN, +inf or above 0. Why one check for every backend: an answer that fails it is an
    error on its item, and is never written to nor read back from the response cache."""
    if not isinstance(logprobs, (list, tuple)):
        return f"log-probs are a {type(logprobs).__name__}, not a list"
    if len(logprobs) != len(labels):
        return f"{len(logprobs)} log-probs for {len(labels)} labels"
    for label, value in zip(labels, logprobs):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"log-prob {json.dumps(value)[:40]} of label {label!r} is not a number"
        if math.isnan(value) or value > MAX_LOGPROB:
            return f"log-prob {value:g} of label {label!r} is {'NaN' if math.isnan(value) else 'above 0'}"
    return None


def check_labels(prompts: Sequence[Any], labels: Sequence[Sequence[str]]) -> None:
    if len(prompts) != len(labels):
        raise ValueError(f"{len(prompts)} prompts but {len(labels)} label lists")
    for i, item_labels in enumerate(labels):
        if len(item_labels) < 2 or len(set(item_labels)) != len(item_labels):
            raise ValueError(f"prompt {i}: labels must be at least two distinct strings, got {list(item_labels)}")
