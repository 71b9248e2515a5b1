"""Response cache: a rerun, an added perturbation or an added model repeats no model call.

Key = sha256 of (operation, model spec, the backend's whole ``settings()``, the exact rendered
prompt text, and the labels or decoding parameters). The settings hold what decides an answer:
the revision (for local weights a hash of the **content** of the weights, config, tokenizer files
and chat template, see ``weights``; else a hub commit), the weights' sha256, what an endpoint's
``/models`` says it serves, the chat template's sha256, dtype, device and library versions.
Entries live under a run store directory (local path or any fsspec URL) as **immutable** Parquet
files, one per written batch, in a folder per model::

    <root>/<model hash>/model.json              which model (for humans)
    <root>/<model hash>/<sha256 of keys>.parquet  columns key, value (JSON)

A writer never reads, modifies or appends to a file: it writes a new one under a temporary name
and renames it (an object store's put is atomic), named by the hash of its keys, so two actors
that compute the same batch write the same name and the second rename is harmless. Readers
list the folder once and index keys to files; files are read only when one of their keys is
asked for. Items that failed (``error`` set) are not cached: a rerun tries them again.
Sampled generation without a seed is never cached (lm-eval's rule).
"""
from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from connectors.models.base import GREEDY, ChoiceScores, Generation, GenerationParams, ModelBackend, PromptLike, check_params

_SCHEMA = pa.schema([("key", pa.string()), ("value", pa.string())])


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class ResponseCache:
    """Key -> JSON value store of one model under ``root``; ``hits``/``misses`` in ``counters``."""

    def __init__(self, root: str, identity: Mapping[str, Any]) -> None:
        self.fs, base = fsspec.core.url_to_fs(root)
        self.namespace = _digest(dict(identity))[:24]
        self.path = f"{base.rstrip('/')}/{self.namespace}"
        self.counters: Counter[str] = Counter()
        self._identity = dict(identity)
        self._index: dict[str, str] | None = None
        self._files: dict[str, dict[str, str]] = {}

    def _load_index(self) -> dict[str, str]:
        if self._index is None:
            self._index = {}
            if self.fs.exists(self.path):
                for file in sorted(self.fs.find(self.path)):
                    name = file.rsplit("/", 1)[-1]
                    if name.endswith(".parquet") and not name.startswith("."):
                        with self.fs.open(file, "rb") as fh:
                            for key in pq.read_table(fh, columns=["key"]).column("key").to_pylist():
                                self._index[key] = file
        return self._index

    def refresh(self) -> None:
        """Forget the listing, so entries written since by other actors become visible."""
        self._index = None
        self._files.clear()

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        index = self._load_index()
        found: dict[str, Any] = {}
        for key in keys:
            file = index.get(key)
            if file is None:
                self.counters["misses"] += 1
                continue
            if file not in self._files:
                with self.fs.open(file, "rb") as fh:
                    table = pq.read_table(fh)
                self._files[file] = dict(zip(table.column("key").to_pylist(), table.column("value").to_pylist()))
            found[key] = json.loads(self._files[file][key])
            self.counters["hits"] += 1
        return found

    def put_many(self, entries: Mapping[str, Any]) -> None:
        """Write ``entries`` as one new immutable file (nothing when empty)."""
        if not entries:
            return
        keys = sorted(entries)
        name = _digest(keys)[:32]
        final = f"{self.path}/{name}.parquet"
        tmp = f"{self.path}/.tmp-{uuid.uuid4().hex}.parquet"
        self.fs.makedirs(self.path, exist_ok=True)
        if not self.fs.exists(f"{self.path}/model.json"):
            with self.fs.open(f"{self.path}/model.json", "w") as fh:
                json.dump(self._identity, fh, indent=1, sort_keys=True)
        table = pa.table({"key": keys, "value": [json.dumps(entries[k], allow_nan=True) for k in keys]}, schema=_SCHEMA)
        with self.fs.open(tmp, "wb") as fh:
            pq.write_table(table, fh)
        self.fs.mv(tmp, final)
        self.counters["files_written"] += 1
        self.counters["entries_written"] += len(keys)
        index = self._load_index()
        for key in keys:
            index[key] = final
        self._files.pop(final, None)


class CachedBackend(ModelBackend):
    """A backend behind a ``ResponseCache``: only misses reach the model. Its ``counters`` merge
    the cache's (hits, misses, files_written) with the wrapped backend's (forward_passes, requests)."""

    def __init__(self, backend: ModelBackend, cache_root: str) -> None:
        super().__init__()
        self.backend = backend
        self.spec = backend.spec
        self._settings = backend.settings()
        self.cache = ResponseCache(cache_root, {"spec": str(backend.spec), "revision": self._settings.get("revision")})
        self.counters = backend.counters
        self.cache.counters = backend.counters

    def settings(self) -> dict[str, Any]:
        return self._settings

    def render(self, prompt: PromptLike) -> str:
        return self.backend.render(prompt)

    def label_strings(self, prompt: PromptLike, labels: Sequence[str]) -> list[str]:
        return self.backend.label_strings(prompt, labels)

    def key(self, operation: str, prompt: PromptLike, extra: Any) -> str:
        return _digest([operation, str(self.spec), self._settings, self.render(prompt), extra])

    def choice_logprobs(self, prompts: Sequence[PromptLike], labels: Sequence[Sequence[str]]) -> list[ChoiceScores]:
        keys = [self.key("choice_logprobs", p, self.label_strings(p, item_labels)) for p, item_labels in zip(prompts, labels)]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        fresh = self.backend.choice_logprobs([prompts[i] for i in todo], [labels[i] for i in todo]) if todo else []
        self.cache.put_many({keys[i]: {"logprobs": list(r.logprobs), "label_mass": r.label_mass}
                             for i, r in zip(todo, fresh) if r.error is None and r.logprobs is not None})
        out: list[ChoiceScores | None] = [None] * len(prompts)
        for i, r in zip(todo, fresh):
            out[i] = r
        for i, k in enumerate(keys):
            if k in found:
                out[i] = ChoiceScores(tuple(found[k]["logprobs"]), found[k]["label_mass"], cached=True)
        return out  # type: ignore[return-value]

    def generate(self, prompts: Sequence[PromptLike], params: GenerationParams = GREEDY) -> list[Generation]:
        return self.generate_each(prompts, [params] * len(prompts))

    def generate_each(self, prompts: Sequence[PromptLike], params: Sequence[GenerationParams]) -> list[Generation]:
        check_params(prompts, params)
        keys = [self.key("generate", p, q.as_dict()) if q.deterministic else None for p, q in zip(prompts, params)]
        found = self.cache.get_many([k for k in keys if k is not None])
        todo = [i for i, k in enumerate(keys) if k is None or k not in found]
        fresh = self.backend.generate_each([prompts[i] for i in todo], [params[i] for i in todo]) if todo else []
        self.cache.put_many({keys[i]: {"text": g.text, "prompt_tokens": g.prompt_tokens, "completion_tokens": g.completion_tokens,
                                       "finish_reason": g.finish_reason}
                             for i, g in zip(todo, fresh) if keys[i] is not None and g.error is None})
        out: list[Generation | None] = [None] * len(prompts)
        for i, g in zip(todo, fresh):
            out[i] = g
        for i, k in enumerate(keys):
            if k is not None and k in found:
                out[i] = Generation(**found[k], cached=True)
        return out  # type: ignore[return-value]

    def close(self) -> None:
        self.backend.close()
