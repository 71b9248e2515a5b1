"""The ``openai`` backend: any OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp servers, hosted).

Choice log-probs need the legacy **completions** endpoint, the only one that takes a raw prompt
and reports log-probs at its end. Two ways, both one request per item:

- ``label_method="top_logprobs"`` (default): generate one token with ``logprobs=N`` and read the
  labels from the top-N list at that position. Exact for every label in the top N; a label
  outside it is an error on that item (servers cap N: OpenAI at 5, vLLM at 20 by default).
- ``label_method="echo"``: send the K prompts ``text + label`` with ``echo=True`` and read each
  label's own prompt log-prob (as lm-eval's ``local-completions`` does). Exact whatever the rank,
  at K prompts' worth of prompt tokens per item (a server with prefix caching pays ~one). The K
  prompts go as one list in one request, or, with ``prompt_lists=False``, one request each:
  llama.cpp's server (llama-cpp-python) reads a list ``prompt`` as token ids and answers HTTP 500.

What the endpoint says it serves (its ``/models`` entry for the spec's model, or its only entry:
llama.cpp serves its one model whatever a request names) is part of the settings, so answers from
another served model never share a cache key. ``tokenizer`` may name a GGUF (llama.cpp serves
those): its tokenizer and chat template are read from the de-quantised copy the hf backend uses.

A **chat**-only endpoint (``endpoint="chat"``) generates but cannot return log-probs of a prompt
position, so ``choice_logprobs`` refuses with a message saying so. The key is read from the
environment variable named by ``api_key_env``; it is sent in a header and never appears in
settings, messages or reprs: where an endpoint repeats it (an error body echoing the request's
headers, a generated text), it is replaced by ``[redacted]`` before the text leaves the backend.

A response that cannot be read as an answer (a missing field, a log-prob that is a string, NaN or
above 0, a count that is not one per label) is an error on its item naming the reason, and is
never cached; transport faults are retried by ``http_client``.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from connectors.io.http_guard import DEFAULT_MAX_BYTES
from connectors.models import gguf
from connectors.models.base import (
    GREEDY,
    CapabilityError,
    ChoiceScores,
    Decoding,
    Generation,
    ModelBackend,
    PromptLike,
    check_labels,
    check_params,
    choice_problem,
    settings_from,
)
from connectors.models.http_client import EndpointError, JsonClient, RetryPolicy, map_bounded
from connectors.models.render import render_prompt, template_sha256, uses_chat_template
from connectors.models.spec import ModelSpec

ENDPOINTS = ("completions", "chat")
# The fields of a /models entry that say what is served; others (vLLM's ``created``, its permission
# ids) change at every server start and would make every restart a new cache key.
MODEL_FIELDS = ("id", "root", "parent", "owned_by", "max_model_len")
LABEL_METHODS = ("top_logprobs", "echo")
# what a response of the wrong shape raises when it is read (a missing key, a string where a list belongs, ...)
MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)
ERROR_CHARS = 500  # an item's error message at most: one line, never a whole response


@dataclass(frozen=True)
class OpenAISettings:
    """``tokenizer`` (a local path or hub id of the served model's tokenizer) lets completions
    prompts go through the model's chat template, as the hf backend does; without it prompts are
    plain text. ``revision`` names the served weights for the cache key: change it when they change."""

    endpoint: str = "completions"
    label_method: str = "top_logprobs"
    top_logprobs: int = 20
    revision: str | None = None
    tokenizer: str | None = None
    chat_template: str = "auto"
    seed: int | None = 0
    prompt_lists: bool = True
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    concurrency: int = 8
    max_reply_bytes: int = DEFAULT_MAX_BYTES  # a reply over it is its item's error (one with log-probs is kilobytes)

    def __post_init__(self) -> None:
        if self.endpoint not in ENDPOINTS:
            raise ValueError(f"endpoint must be one of {ENDPOINTS}, got {self.endpoint!r}")
        if self.label_method not in LABEL_METHODS:
            raise ValueError(f"label_method must be one of {LABEL_METHODS}, got {self.label_method!r}")
        if self.top_logprobs < 1 or self.concurrency < 1 or self.max_reply_bytes < 1 or self.max_retries < 0:
            raise ValueError("top_logprobs, concurrency and max_reply_bytes must be positive, max_retries non-negative")


class OpenAIBackend(ModelBackend):
    def __init__(self, spec: ModelSpec, settings: OpenAISettings | dict[str, Any] | None = None) -> None:
        super().__init__()
        self.spec = spec
        self.config = settings_from(OpenAISettings, settings, spec)
        self.tokenizer = None
        if self.config.tokenizer:
            from transformers import AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(gguf.transformers_source(self.config.tokenizer)[1])
        self.chat = uses_chat_template(self.tokenizer, self.config.chat_template, str(spec)) if self.tokenizer else False
        policy = RetryPolicy(self.config.timeout_s, self.config.max_retries, self.config.backoff_s, self.config.max_backoff_s,
                             self.config.max_reply_bytes)
        self.client = JsonClient(spec.base_url or "", os.environ.get(self.config.api_key_env), policy, self.counters)
        self.served_model = self._served_model()

    def _served_model(self) -> dict[str, Any] | None:
        """The endpoint's ``/models`` entry for this model (None when it does not answer or lists neither)."""
        try:
            listing = self.client.get_once("/models", min(self.config.timeout_s, 10.0))
        except EndpointError:
            return None
        entries = [e for e in listing.get("data") or [] if isinstance(e, dict)] if isinstance(listing, dict) else []
        match = [e for e in entries if e.get("id") == self.spec.model] or (entries if len(entries) == 1 else [])
        return {k: match[0][k] for k in MODEL_FIELDS if k in match[0]} if match else None

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.spec})"

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"backend": "openai", "base_url": self.spec.base_url, "model": self.spec.model,
                               "revision": self.config.revision, "endpoint": self.config.endpoint,
                               "label_method": self.config.label_method, "chat_template": self.chat,
                               "tokenizer": self.config.tokenizer, "seed": self.config.seed,
                               "chat_template_sha256": template_sha256(self.tokenizer, self.chat),
                               "served_model": self.served_model}
        if self.config.label_method == "top_logprobs":
            out["top_logprobs"] = self.config.top_logprobs
        else:
            out["prompt_lists"] = self.config.prompt_lists
        return out

    def _messages(self, prompt: PromptLike) -> list[dict[str, str]]:
        user = f"{prompt.user}\n{prompt.answer_prefix}" if prompt.answer_prefix else prompt.user
        head = [{"role": "system", "content": prompt.system}] if prompt.system else []
        return [*head, {"role": "user", "content": user}]

    def render(self, prompt: PromptLike) -> str:
        if self.config.endpoint == "chat":
            return json.dumps(self._messages(prompt), ensure_ascii=False)
        return render_prompt(prompt, self.tokenizer, self.chat)

    def _base_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.spec.model, "temperature": 0.0}
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        return body

    def choice_logprobs(self, prompts: Sequence[PromptLike], labels: Sequence[Sequence[str]]) -> list[ChoiceScores]:
        check_labels(prompts, labels)
        if self.config.endpoint == "chat":
            raise CapabilityError(
                f"{self.spec}: a chat-only endpoint cannot return prompt log-probs (chat completions report "
                "log-probs of generated tokens only), so it cannot give final-position label log-probs; serve the "
                "model with a /v1/completions endpoint (vLLM, SGLang and llama.cpp servers have one) or use hf/vllm")
        work = [(self.render(p), self.label_strings(p, item_labels)) for p, item_labels in zip(prompts, labels)]
        score = self._score_top if self.config.label_method == "top_logprobs" else self._score_echo
        return map_bounded(lambda w: self._guarded(score, *w), work, self.config.concurrency)

    def _guarded(self, score: Any, text: str, strings: list[str]) -> ChoiceScores:
        """One item's answer, or its error with its reason code and whether it is transient: the endpoint's
        failure, a malformed response, or log-probs that are no label log-probs (``choice_problem``). Every
        text is redacted (an endpoint may echo the key)."""
        try:
            values = score(text, strings)
            if isinstance(values, _Problem):
                return self._failed_scores(values)
            problem = choice_problem(values, strings)
            if problem is not None:
                return self._failed_scores(_Problem("bad_logprobs", problem))
        except EndpointError as exc:
            return self._failed_scores(_Problem(exc.reason, str(exc), exc.transient))
        except MALFORMED as exc:
            return self._failed_scores(_Problem("malformed_response", f"unexpected completions response ({type(exc).__name__}: {exc})"))
        return ChoiceScores(tuple(float(v) for v in values), float(sum(math.exp(v) for v in values)))

    def _failed_scores(self, problem: _Problem) -> ChoiceScores:
        return ChoiceScores(None, None, self._item_error(problem.message), error_code=problem.code, transient=problem.transient)

    def _score_top(self, text: str, strings: list[str]) -> list[Any] | _Problem:
        body = {**self._base_body(), "prompt": text, "max_tokens": 1, "logprobs": self.config.top_logprobs}
        response = self.client.post("/completions", body)
        top = response["choices"][0]["logprobs"]["top_logprobs"][0]
        if not isinstance(top, dict):
            raise TypeError(f"top_logprobs[0] is a {type(top).__name__}, not an object")
        missing = [s for s in strings if s not in top]
        if missing:
            return _Problem("label_not_in_top_logprobs",
                            f"label(s) {missing} not among the top-{self.config.top_logprobs} log-probs the endpoint "
                            "returned; use label_method='echo' for exact values")
        return [top[s] for s in strings]

    def _score_echo(self, text: str, strings: list[str]) -> list[Any] | _Problem:
        body = {**self._base_body(), "max_tokens": 1, "logprobs": 1, "echo": True}
        if self.config.prompt_lists:
            response = self.client.post("/completions", {**body, "prompt": [text + s for s in strings]})
            choices = sorted(response["choices"], key=lambda c: c["index"])
            if len(choices) != len(strings):
                return _Problem("wrong_choice_count",
                                f"the endpoint answered {len(choices)} choices for the {len(strings)} prompts sent (one per label)")
        else:
            choices = [self.client.post("/completions", {**body, "prompt": text + s})["choices"][0] for s in strings]
        values = []
        for label, choice in zip(strings, choices):
            lp = choice["logprobs"]
            at = _label_position(text, label, choice)
            if lp["tokens"][at] != label:
                return _Problem("label_merged",
                                f"the endpoint tokenised label {label!r} as {lp['tokens'][at]!r:.40} (merged with the text before it)")
            values.append(lp["token_logprobs"][at])
        return values

    def generate(self, prompts: Sequence[PromptLike], params: Decoding = GREEDY) -> list[Generation]:
        return self.generate_each(prompts, [params] * len(prompts))

    def generate_each(self, prompts: Sequence[PromptLike], params: Sequence[Decoding]) -> list[Generation]:
        """One request per prompt with its own settings, at most ``concurrency`` in flight."""
        check_params(prompts, params)
        return map_bounded(lambda pair: self._generate_one(*pair), list(zip(prompts, params)), self.config.concurrency)

    def _generate_one(self, prompt: PromptLike, params: Decoding) -> Generation:
        body = {**self._base_body(), "max_tokens": params.max_new_tokens, "temperature": params.temperature,
                "top_p": params.top_p}
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        chat = self.config.endpoint == "chat"
        body.update({"messages": self._messages(prompt)} if chat else {"prompt": self.render(prompt)})
        try:
            response = self.client.post("/chat/completions" if chat else "/completions", body)
            choice = response["choices"][0]
            text = choice["message"]["content"] if chat else choice["text"]
            if not isinstance(text, str):
                raise TypeError(f"the generated text is a {type(text).__name__}, not a string")
            usage = response.get("usage") or {}
            finish = choice.get("finish_reason")
            return Generation(self.client.redact(text), int(usage.get("prompt_tokens", 0)),
                              int(usage.get("completion_tokens", 0)), None if finish is None else str(finish))
        except EndpointError as exc:
            problem = _Problem(exc.reason, str(exc), exc.transient)
        except MALFORMED as exc:
            problem = _Problem("malformed_response", f"unexpected response ({type(exc).__name__}: {exc})")
        return Generation(None, error=self._item_error(problem.message), error_code=problem.code, transient=problem.transient)

    def _item_error(self, problem: str) -> str:
        """An item's error: one line naming the model, credentials redacted before it is cut to length."""
        return " ".join(self.client.redact(f"{self.spec}: {problem}").split())[:ERROR_CHARS]


@dataclass(frozen=True)
class _Problem:
    """Why one item has no answer: its reason code, the message, and whether a rerun may pass."""

    code: str
    message: str
    transient: bool = False


def _label_position(text: str, label: str, choice: dict[str, Any]) -> int:
    """Where the label sits among an echoed ``text + label`` prompt's tokens: the last prompt token.

    ``max_tokens=1`` adds at most one generated token after it -- none when the model's next token
    is end-of-text (some servers then list nothing, others the end-of-text token). The echoed
    ``text`` says whether anything was generated; ``text_offset`` is the fallback when a server
    does not echo the prompt verbatim (it drifts on text that per-token decoding splits, such as
    non-ASCII characters, so it is not trusted first).
    """
    tokens = choice["logprobs"]["tokens"]
    echoed = choice.get("text")
    if isinstance(echoed, str) and echoed.startswith(text + label):
        generated = echoed[len(text) + len(label):]
        return len(tokens) - 1 if generated == "" and tokens[-1] == label else len(tokens) - 2
    offsets = choice["logprobs"].get("text_offset")
    return offsets.index(len(text)) if offsets and len(text) in offsets else len(tokens) - 2
