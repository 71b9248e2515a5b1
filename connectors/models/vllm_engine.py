"""The ``vllm`` backend: an in-process vLLM engine (``vllm.LLM``), imported only when built.

Label log-probs are read exactly, never from a truncated top-k: one token is generated per item
with ``SamplingParams(max_tokens=1, temperature=0)`` and

- ``logprob_token_ids=<the item's label ids>`` where this vLLM has it (log-probs of exactly those
  tokens, raw, before any processing), else
- ``logprobs=-1`` (the whole vocabulary; the engine is built with ``max_logprobs=-1``), from
  which the label ids are picked. Exact, at the cost of moving a vocabulary row per item.

vLLM's log-probs depend slightly on batch composition (kernels and chunked prefill vary with
the batch), so the engine settings that shape batches are in ``settings()`` and comparisons
with another backend use a tolerance. Prompts are passed as token ids rendered and tokenized
exactly as the hf backend does.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connectors.models.base import (
    GREEDY,
    BackendError,
    ChoiceScores,
    Decoding,
    Generation,
    ModelBackend,
    PromptLike,
    check_labels,
    check_params,
    settings_from,
)
from connectors.models.render import label_token_ids, render_prompt, template_sha256, uses_chat_template
from connectors.models.spec import ModelSpec
from connectors.models.weights import content_digests, deciding_files, local_revision


@dataclass(frozen=True)
class VLLMSettings:
    """Engine arguments that change outputs; ``load_format="dummy"`` gives random weights from a
    config alone (the GPU bench)."""

    revision: str | None = None
    dtype: str = "auto"
    tensor_parallel_size: int = 1
    max_model_len: int | None = None
    max_num_seqs: int = 256
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float = 0.9
    enable_prefix_caching: bool = True
    seed: int = 0
    trust_remote_code: bool = False
    chat_template: str = "auto"
    load_format: str = "auto"


class VLLMBackend(ModelBackend):
    def __init__(self, spec: ModelSpec, settings: VLLMSettings | dict[str, Any] | None = None) -> None:
        super().__init__()
        try:
            import vllm
        except ImportError as exc:
            raise BackendError(f"{spec}: the vllm backend needs vLLM (pip install 'benchaudit[vllm]' on a GPU machine)") from exc
        self.spec = spec
        self.config = settings_from(VLLMSettings, settings, spec)
        self._vllm = vllm
        fields = {f.name for f in dataclasses.fields(vllm.SamplingParams)} if dataclasses.is_dataclass(vllm.SamplingParams) \
            else set(getattr(vllm.SamplingParams, "__struct_fields__", ()))
        self.label_method = "logprob_token_ids" if "logprob_token_ids" in fields else "full_vocabulary"
        engine = {k: v for k, v in dataclasses.asdict(self.config).items() if k != "chat_template" and v is not None}
        if self.label_method == "full_vocabulary":
            engine["max_logprobs"] = -1
        self.llm = vllm.LLM(model=spec.model, **engine)
        self.tokenizer = self.llm.get_tokenizer()
        self.chat = uses_chat_template(self.tokenizer, self.config.chat_template, str(spec))
        self._versions = {"vllm": vllm.__version__}
        folder = Path(spec.model)
        # a local folder's revision is its files' content, as for the hf backend (weights saved over old ones are new)
        self.revision = local_revision(content_digests(deciding_files(folder))) if folder.is_dir() else self.config.revision

    def settings(self) -> dict[str, Any]:
        return {"backend": "vllm", "model": self.spec.model, **dataclasses.asdict(self.config), "revision": self.revision,
                "chat_template": self.chat, "chat_template_sha256": template_sha256(self.tokenizer, self.chat),
                "label_method": self.label_method, **self._versions,
                "note": "vLLM log-probs vary slightly with batch composition; compare with a tolerance"}

    def render(self, prompt: PromptLike) -> str:
        return render_prompt(prompt, self.tokenizer, self.chat)

    def _inputs(self, prompts: Sequence[PromptLike]) -> list[dict[str, list[int]]]:
        return [{"prompt_token_ids": self.tokenizer(self.render(p), add_special_tokens=not self.chat)["input_ids"]}
                for p in prompts]

    def choice_logprobs(self, prompts: Sequence[PromptLike], labels: Sequence[Sequence[str]]) -> list[ChoiceScores]:
        check_labels(prompts, labels)
        ids = [label_token_ids(self.tokenizer, self.label_strings(p, item_labels), str(self.spec))
               for p, item_labels in zip(prompts, labels)]
        make = self._vllm.SamplingParams
        if self.label_method == "logprob_token_ids":
            params = [make(max_tokens=1, temperature=0.0, logprob_token_ids=list(i)) for i in ids]
        else:
            params = [make(max_tokens=1, temperature=0.0, logprobs=-1) for _ in ids]
        outputs = self.llm.generate(self._inputs(prompts), sampling_params=params, use_tqdm=False)
        self.counters["forward_passes"] += 1
        self.counters["items_scored"] += len(prompts)
        out = []
        for item_ids, result in zip(ids, outputs):
            position = result.outputs[0].logprobs[0]
            missing = [i for i in item_ids if i not in position]
            if missing:
                out.append(ChoiceScores(None, None, f"vLLM returned no log-prob for label token id(s) {missing}",
                                       error_code="label_logprob_missing"))
                continue
            values = [float(position[i].logprob) for i in item_ids]
            if any(math.isnan(v) for v in values):
                out.append(ChoiceScores(None, None, "NaN log-probs from the model at the final position",
                                       error_code="nan_logprobs"))
                continue
            out.append(ChoiceScores(tuple(values), float(sum(math.exp(v) for v in values))))
        return out

    def generate(self, prompts: Sequence[PromptLike], params: Decoding = GREEDY) -> list[Generation]:
        return self.generate_each(prompts, [params] * len(prompts))

    def generate_each(self, prompts: Sequence[PromptLike], params: Sequence[Decoding]) -> list[Generation]:
        """One engine call for the whole batch, each request with its own sampling settings (vLLM seeds per request)."""
        check_params(prompts, params)
        sampling = [self._vllm.SamplingParams(max_tokens=p.max_new_tokens, temperature=p.temperature, top_p=p.top_p,
                                              stop=list(p.stop) or None, seed=p.seed) for p in params]
        outputs = self.llm.generate(self._inputs(prompts), sampling_params=sampling, use_tqdm=False)
        self.counters["generate_calls"] += 1
        return [Generation(r.outputs[0].text, len(r.prompt_token_ids), len(r.outputs[0].token_ids), r.outputs[0].finish_reason)
                for r in outputs]

    def close(self) -> None:
        del self.llm
