"""Prompt text and label tokens, shared by every backend so they all ask the same question.

Rendering: with a chat template (the tokenizer has one and ``chat_template`` is ``auto``, or it
is ``always``) the system and user turns go through ``apply_chat_template`` with the generation
prompt, and the answer prefix opens the assistant's turn; otherwise plain text
``system\\n\\nuser\\nanswer_prefix``. A template that rejects the system role (some do) gets the
system text prepended to the user turn instead.

Labels: the next token after ``...Answer:`` is ``" A"``, not ``"A"``; a label is written with a
leading space when the answer prefix ends in a non-space character. The landscape reads each
label's log-prob from one position, so each label must be exactly one token: a tokenizer that
splits one is an error naming the model and the label.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from connectors.models.base import LabelTokenError, PromptLike

CHAT_TEMPLATE_MODES = ("auto", "always", "never")


def uses_chat_template(tokenizer: Any, mode: str, model: str) -> bool:
    if mode not in CHAT_TEMPLATE_MODES:
        raise ValueError(f"{model}: chat_template must be one of {CHAT_TEMPLATE_MODES}, got {mode!r}")
    has = tokenizer is not None and bool(getattr(tokenizer, "chat_template", None))
    if mode == "always" and not has:
        raise ValueError(f"{model}: chat_template='always' but the tokenizer has no chat template")
    return has and mode != "never"


def template_sha256(tokenizer: Any, chat: bool) -> str | None:
    """The sha256 of the chat template the prompts go through (None when none is applied): the
    manifest and the cache key name the template, not only whether there was one."""
    return hashlib.sha256(tokenizer.chat_template.encode()).hexdigest() if chat else None


def render_prompt(prompt: PromptLike, tokenizer: Any = None, chat: bool = False) -> str:
    """The text a model sees; ``chat`` requires a tokenizer with a chat template."""
    if not chat:
        head = f"{prompt.system}\n\n" if prompt.system else ""
        return f"{head}{prompt.user}\n{prompt.answer_prefix}" if prompt.answer_prefix else f"{head}{prompt.user}\n"
    messages = [{"role": "user", "content": prompt.user}]
    if prompt.system:
        messages.insert(0, {"role": "system", "content": prompt.system})
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except Exception:  # jinja's TemplateError (any type) for a template without a system role
        if not prompt.system:
            raise
        merged = [{"role": "user", "content": f"{prompt.system}\n\n{prompt.user}"}]
        text = tokenizer.apply_chat_template(merged, tokenize=False, add_generation_prompt=True)
    return text + prompt.answer_prefix


def label_token_ids(tokenizer: Any, strings: Sequence[str], model: str) -> list[int]:
    """One token id per label string, or ``LabelTokenError`` naming the model and the label."""
    ids = []
    for text in strings:
        pieces = tokenizer.encode(text, add_special_tokens=False)
        if len(pieces) != 1:
            shown = [tokenizer.decode([p]) for p in pieces]
            raise LabelTokenError(f"{model}: label {text!r} is {len(pieces)} tokens {shown} with this tokenizer, not one; "
                                  "the landscape reads each label at one position, so labels must be single tokens "
                                  "(try another answer prefix or a template without a leading space)")
        ids.append(pieces[0])
    return ids
