"""What a model backend is given: an optional system turn, a user turn, and the text the answer follows.

How it becomes text is the backend's business (a chat template when the tokenizer has one, else
plain text ending in the answer prefix); what the model is asked is fixed by the audit, so every
backend asks the same question. The landscape's MCQA prompts and the contamination audit's router
and worker prompts are all of this type.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prompt:
    """One prompt as a backend reads it."""

    user: str
    system: str | None = None
    answer_prefix: str = ""
