"""The ``hf`` backend: transformers ``AutoModelForCausalLM`` on local weights or a hub cache.

Choice log-probs are one forward per item: prompts are tokenized, sorted by length (so a batch
pads little), left-padded with explicit position ids (so an item's logits do not depend on how
much padding its batch needed), and only the last position's logits are computed
(``logits_to_keep=1`` where the model supports it), whose log-softmax gives every label's
log-prob at once. ``trust_remote_code`` stays off unless the settings ask for it.

The model is a hub id, a transformers folder, a GGUF (``hf:/m/model.Q4_1.gguf``, or a folder
holding one ``.gguf`` and no ``config.json``), loaded from its de-quantised copy (``gguf``), or a
fetched fixture's name (``hf:smollm2-135m``, see ``fetch``). A
local model's revision hashes the **content** of every file that decides its answers (weights,
config, tokenizer, chat template; ``weights``), so weights saved over old ones of the same size
are a new revision and never get the old cached answers.
"""
from __future__ import annotations

import inspect
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from connectors.models import gguf
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
from connectors.models.fetch import FixtureError, fixture_model
from connectors.models.render import label_token_ids, render_prompt, template_sha256, uses_chat_template
from connectors.models.spec import ModelSpec
from connectors.models.weights import content_digests, deciding_files, local_revision

DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class HFSettings:
    """``dtype`` auto = bfloat16 on GPU, float32 on CPU; ``device`` auto = cuda:0 when available;
    ``device_map`` (e.g. "auto", needs accelerate) shards a model too big for one device.
    ``batch_size`` and ``max_batch_tokens`` bound a forward batch (items, padded tokens)."""

    revision: str | None = None
    dtype: str = "auto"
    device: str = "auto"
    device_map: str | None = None
    trust_remote_code: bool = False
    chat_template: str = "auto"
    batch_size: int = 16
    max_batch_tokens: int = 16384
    max_length: int | None = None

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.batch_size < 1 or self.max_batch_tokens < 1:
            raise ValueError("batch_size and max_batch_tokens must be positive")


class ModelLoadError(BackendError):
    """The weights would not load. They load on the first forward, not when the actor starts, so this
    carries the reason a failed actor start gives (``failure_reason``): permanent, the model's own."""

    reason = "model_init_failed"


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


class RowSampler:
    """A logits processor that turns greedy decoding into sampling with one generator per row.

    Why: ``model.generate(do_sample=True)`` draws every row from one global generator, so a row's
    text depends on which rows share its batch, and a per-row seed (one per question and router
    slot) would force batches of one. Here each row adds Gumbel noise from its own generator to
    its temperature-scaled, top-p-filtered logits; the argmax of ``logits + Gumbel`` is an exact
    draw from their softmax (the Gumbel-max trick), so each row's sample depends on its prompt and
    seed only. A row without a seed gets a fresh random one (sampling without a seed is never cached).
    Temperature and top-p are per row too: a row at temperature 0 keeps its scores, and so decodes greedily beside
    sampled rows in one batch (a clean and a noisy router call share it).
    """

    def __init__(self, torch: Any, seeds: Sequence[int | None], temperatures: Sequence[float], top_ps: Sequence[float],
                 device: Any) -> None:
        self.torch = torch
        self.sampled = torch.tensor([t > 0 for t in temperatures], device=device).unsqueeze(-1)
        self.temperature = torch.tensor([t if t > 0 else 1.0 for t in temperatures], device=device).unsqueeze(-1)
        self.top_p = torch.tensor(top_ps, device=device).unsqueeze(-1)
        self.generators = [torch.Generator(device=device).manual_seed(secrets.randbits(63) if s is None else s)
                           if t > 0 else None for s, t in zip(seeds, temperatures)]

    def nucleus(self, logits: Any) -> Any:
        """``logits`` with every token outside its row's top-p nucleus at -inf (the most likely token always stays)."""
        if bool((self.top_p >= 1.0).all()):
            return logits
        ordered, order = logits.sort(dim=-1, descending=True)
        probs = ordered.softmax(dim=-1)
        outside = ((probs.cumsum(dim=-1) - probs) >= self.top_p) & (self.top_p < 1.0)  # the mass before it reaches top_p
        return logits.masked_fill(outside.scatter(-1, order, outside), float("-inf"))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        torch = self.torch
        logits = self.nucleus(scores.float() / self.temperature)
        size = logits.shape[-1]
        uniform = torch.stack([torch.rand(size, generator=g, device=logits.device) if g is not None
                               else torch.full((size,), 0.5, device=logits.device) for g in self.generators])
        return torch.where(self.sampled, logits - torch.log(-torch.log(uniform.clamp(min=1e-20))), scores.float())


class HFBackend(ModelBackend):
    """``HFBackend(spec, settings)`` loads the tokenizer and config, and the weights on the first forward;
    ``model=``/``tokenizer=`` take objects already in memory instead (the GPU bench's randomly initialised model)."""

    def __init__(self, spec: ModelSpec, settings: HFSettings | dict[str, Any] | None = None, *,
                 model: Any = None, tokenizer: Any = None) -> None:
        super().__init__()
        import torch
        import transformers

        self.spec = spec
        self.config = settings_from(HFSettings, settings, spec)
        self._torch, self._transformers = torch, transformers
        device = self.config.device
        if device == "auto":
            device = "cuda:0" if torch.cuda.is_available() else "cpu"
        dtype = self.config.dtype
        if dtype == "auto":
            dtype = "bfloat16" if device.startswith("cuda") else "float32"
        self.device, self.dtype = device, dtype
        self.gguf, self.load_from, self.files_sha256 = self._locate(model is not None)
        self.tokenizer = tokenizer if tokenizer is not None else self._load_tokenizer(transformers)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            if self.tokenizer.eos_token_id is None:
                raise BackendError(f"{spec}: the tokenizer has neither a pad nor an eos token to pad batches with")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._model = model.eval() if model is not None else None
        model_config = model.config if model is not None else self._load_config(transformers)
        self.chat = uses_chat_template(self.tokenizer, self.config.chat_template, str(spec))
        self.max_length = self.config.max_length or getattr(model_config, "max_position_embeddings", None)
        self._label_ids: dict[str, int] = {}
        commit = getattr(model_config, "_commit_hash", None)
        self.revision = local_revision(self.files_sha256) if self.files_sha256 else self.config.revision or commit
        self._versions = {"transformers": transformers.__version__, "torch": torch.__version__}

    def _locate(self, in_memory: bool) -> tuple[gguf.GGUFInfo | None, str, dict[str, str]]:
        """(the GGUF read, where transformers loads from, the content hashes of the local files)."""
        if in_memory:
            return None, self.spec.model, {}
        try:
            model = fixture_model(self.spec.model)
            info, source = gguf.transformers_source(model)
        except (gguf.GGUFError, FixtureError) as exc:
            raise BackendError(f"{self.spec}: {exc}") from exc
        if info is not None:
            return info, source, {info.path.name: info.sha256}
        path = Path(model)
        return None, source, content_digests(deciding_files(path)) if path.is_dir() else {}

    def _load_tokenizer(self, transformers: Any) -> Any:
        return self._from_pretrained(transformers.AutoTokenizer, "the tokenizer")

    def _load_config(self, transformers: Any) -> Any:
        return self._from_pretrained(transformers.AutoConfig, "the model")

    def _from_pretrained(self, auto: Any, what: str) -> Any:
        """``auto.from_pretrained`` on this model's files, a failure named as ``what`` that would not load."""
        try:
            return auto.from_pretrained(self.load_from, revision=self.config.revision,
                                        trust_remote_code=self.config.trust_remote_code)
        except (OSError, ValueError) as exc:
            raise BackendError(f"{self.spec}: cannot load {what}: {exc}") from exc

    @property
    def model(self) -> Any:
        """The weights, loaded on the first forward: the cache key needs only the files' content hashes,
        the tokenizer and the config, so a rerun the response cache answers whole never loads them (the
        load is most of an actor's start: 4 s of its 7 s for smollm2-135m on CPU)."""
        if self._model is None:
            self._model = self._load_model(self._transformers, self._torch)
        return self._model

    @cached_property
    def _keep_last(self) -> bool:
        return "logits_to_keep" in inspect.signature(self.model.forward).parameters

    def _load_model(self, transformers: Any, torch: Any) -> Any:
        kwargs: dict[str, Any] = {"revision": self.config.revision, "trust_remote_code": self.config.trust_remote_code,
                                  "dtype": getattr(torch, self.dtype)}
        if self.config.device_map:
            kwargs["device_map"] = self.config.device_map
        try:
            model = transformers.AutoModelForCausalLM.from_pretrained(self.load_from, **kwargs)
        except Exception as exc:  # noqa: BLE001 -- any failure to load is the model's (corrupt weights: SafetensorError)
            raise ModelLoadError(f"{self.spec}: cannot load the model: {exc}") from exc
        model = model if self.config.device_map else model.to(self.device)
        return model.eval()

    def settings(self) -> dict[str, Any]:
        """Besides the run settings: ``weights_sha256`` (weight file name -> sha256 of its bytes, for
        local weights), the GGUF's quant type and tensor types, and the hash of the chat template used."""
        weights = {name: h for name, h in self.files_sha256.items() if Path(name).suffix in WEIGHT_SUFFIXES}
        return {"backend": "hf", "model": self.spec.model, "revision": self.revision, "dtype": self.dtype,
                "device": self.config.device_map or self.device.split(":")[0], "chat_template": self.chat,
                "chat_template_sha256": template_sha256(self.tokenizer, self.chat),
                "weights_sha256": weights or None, **(self.gguf.settings() if self.gguf else {}),
                "trust_remote_code": self.config.trust_remote_code, "max_length": self.max_length, **self._versions}

    def render(self, prompt: PromptLike) -> str:
        return render_prompt(prompt, self.tokenizer, self.chat)

    def _encode(self, text: str) -> list[int]:
        # a chat-rendered text already holds its special tokens (BOS and the role markers)
        return self.tokenizer(text, add_special_tokens=not self.chat)["input_ids"]

    def _ids_of(self, strings: Sequence[str]) -> list[int]:
        missing = [s for s in strings if s not in self._label_ids]
        if missing:
            self._label_ids.update(zip(missing, label_token_ids(self.tokenizer, missing, str(self.spec))))
        return [self._label_ids[s] for s in strings]

    def _batches(self, lengths: Sequence[int]) -> Iterator[list[int]]:
        """Item indices, longest first, in batches within ``batch_size`` and ``max_batch_tokens``."""
        batch: list[int] = []
        for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
            if batch and (len(batch) + 1 > self.config.batch_size
                          or (len(batch) + 1) * lengths[batch[0]] > self.config.max_batch_tokens):
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def _padded(self, seqs: Sequence[list[int]]) -> tuple[Any, Any]:
        torch = self._torch
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, s in enumerate(seqs):
            ids[row, width - len(s):] = torch.tensor(s, dtype=torch.long)
            mask[row, width - len(s):] = 1
        return ids.to(self.model.device), mask.to(self.model.device)

    def _too_long(self, n_tokens: int) -> tuple[str, str] | None:
        """(reason code, message) when the prompt cannot be run, else None."""
        if n_tokens == 0:
            return "empty_prompt", "empty prompt"
        if self.max_length and n_tokens > self.max_length:
            return "prompt_too_long", f"prompt is {n_tokens} tokens; {self.spec} takes at most {self.max_length}"
        return None

    def choice_logprobs(self, prompts: Sequence[PromptLike], labels: Sequence[Sequence[str]]) -> list[ChoiceScores]:
        check_labels(prompts, labels)
        torch = self._torch
        label_ids = [self._ids_of(self.label_strings(p, item_labels)) for p, item_labels in zip(prompts, labels)]
        encoded = [self._encode(self.render(p)) for p in prompts]
        out: list[ChoiceScores | None] = [None] * len(prompts)
        todo = []
        for i, seq in enumerate(encoded):
            problem = self._too_long(len(seq))
            if problem:
                out[i] = ChoiceScores(None, None, problem[1], error_code=problem[0])
            else:
                todo.append(i)
        for batch in self._batches([len(encoded[i]) for i in todo]):
            rows = [todo[b] for b in batch]
            ids, mask = self._padded([encoded[i] for i in rows])
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            kwargs = {"logits_to_keep": 1} if self._keep_last else {}
            with torch.inference_mode():
                logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, **kwargs).logits[:, -1, :]
            self.counters["forward_passes"] += 1
            self.counters["items_scored"] += len(rows)
            logp = torch.log_softmax(logits.float(), dim=-1).cpu()
            for row, i in enumerate(rows):
                lp = logp[row, label_ids[i]].double()
                if torch.isnan(logp[row]).any():
                    out[i] = ChoiceScores(None, None, "NaN log-probs from the model at the final position", error_code="nan_logprobs")
                    continue
                out[i] = ChoiceScores(tuple(lp.tolist()), float(lp.exp().sum()))
        return out  # type: ignore[return-value]

    def generate(self, prompts: Sequence[PromptLike], params: Decoding = GREEDY) -> list[Generation]:
        return self.generate_each(prompts, [params] * len(prompts))

    def generate_each(self, prompts: Sequence[PromptLike], params: Sequence[Decoding]) -> list[Generation]:
        """Rows with the same ``max_new_tokens`` share batches, whatever else their settings are: each row samples
        with its own seed, temperature and top-p, or decodes greedily, and stops at its own stop strings."""
        check_params(prompts, params)
        groups: dict[int, list[int]] = {}
        for i, p in enumerate(params):
            groups.setdefault(p.max_new_tokens, []).append(i)
        out: list[Generation | None] = [None] * len(prompts)
        for rows in groups.values():
            texts = self._generate([prompts[i] for i in rows], [params[i] for i in rows])
            for i, g in zip(rows, texts):
                out[i] = g
        return out  # type: ignore[return-value]

    def _generate(self, prompts: Sequence[PromptLike], params: Sequence[Decoding]) -> list[Generation]:
        """``prompts`` with their settings, all with one ``max_new_tokens``."""
        torch = self._torch
        max_new_tokens = params[0].max_new_tokens
        encoded = [self._encode(self.render(p)) for p in prompts]
        out: list[Generation | None] = [None] * len(prompts)
        todo = []
        for i, seq in enumerate(encoded):
            problem = self._too_long(len(seq) + max_new_tokens)
            if problem:
                out[i] = Generation(None, len(seq), 0, None, problem[1], error_code=problem[0])
            else:
                todo.append(i)
        eos = self.tokenizer.eos_token_id
        for batch in self._batches([len(encoded[i]) for i in todo]):
            rows = [todo[b] for b in batch]
            ids, mask = self._padded([encoded[i] for i in rows])
            extra = {}
            if any(params[i].temperature > 0 for i in rows):  # greedy decoding over scores RowSampler made a sample's argmax
                sampler = RowSampler(torch, [params[i].seed for i in rows], [params[i].temperature for i in rows],
                                     [params[i].top_p for i in rows], ids.device)
                extra["logits_processor"] = self._transformers.LogitsProcessorList([sampler])
            with torch.inference_mode():
                new = self.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                          do_sample=False, pad_token_id=self.tokenizer.pad_token_id, **extra)[:, ids.shape[1]:]
            self.counters["generate_calls"] += 1
            for row, i in enumerate(rows):
                tokens = new[row].tolist()
                stopped = eos in tokens
                tokens = tokens[: tokens.index(eos)] if stopped else tokens
                text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                cut = [text.index(s) for s in params[i].stop if s in text]
                if cut:
                    text, stopped = text[: min(cut)], True
                out[i] = Generation(text, len(encoded[i]), len(tokens), "stop" if stopped else "length")
        return out  # type: ignore[return-value]

    def close(self) -> None:
        self._model = None
        if self._torch.cuda.is_available():
            self._torch.cuda.empty_cache()

