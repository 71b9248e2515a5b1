"""What a model backend is given: a ``Prompt`` (an optional system turn, a user turn, and the text the answer
follows) and, to generate, a ``Decoding`` (how the continuation is drawn).

How a prompt becomes text is the backend's business (a chat template when the tokenizer has one, else
plain text ending in the answer prefix); what the model is asked is fixed by the audit, so every
backend asks the same question. The landscape's MCQA prompts and the contamination audit's router
and worker prompts are all of this type, and every generation of every audit takes one ``Decoding``:
the contamination plan's router and worker settings are the settings the backends run and the
response cache keys.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Prompt:
    """One prompt as a backend reads it."""

    user: str
    system: str | None = None
    answer_prefix: str = ""


@dataclass(frozen=True)
class Decoding:
    """Decoding settings of a generation; all of them change the response, so all are part of its keys.

    ``seed`` fixes the sample of each prompt on its own: the hf and vllm backends seed every row
    separately, so a seeded row's text depends on its prompt and seed, not on the batch it shares.
    """

    max_new_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {self.max_new_tokens}")
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ValueError(f"temperature must be >= 0 and top_p in (0, 1]; got {self.temperature}, {self.top_p}")

    @property
    def deterministic(self) -> bool:
        """Greedy, or sampled with a fixed seed: only then may a cached answer stand in for a call."""
        return self.temperature == 0 or self.seed is not None

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "stop": list(self.stop)}


GREEDY = Decoding()
