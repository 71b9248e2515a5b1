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
asked for. Items that failed (``error`` set) are not cached: a rerun tries them again; nor are
answers that are no answer (log-probs that ``choice_problem`` refuses: the wrong count, a string,
NaN, above 0), which become errors on their items. Sampled generation without a seed is never
cached (lm-eval's rule).

Nothing read from the cache is trusted: a file that is not a Parquet file of string ``key`` and
``value`` columns (garbage bytes, cut short, another schema), or that holds an entry that is not a
valid answer for its key (wrong log-prob count, strings, a value that is not JSON), is **set
aside**: renamed to ``<name>.parquet.bad`` beside the others (kept for inspection, never listed
again), counted as ``cache_bad`` in the backend's counters (so in the manifest's call accounting)
and logged with the reason; its answers are misses, so they are recomputed and written anew.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from connectors.models.base import (
    GREEDY,
    ChoiceScores,
    Decoding,
    Generation,
    ModelBackend,
    PromptLike,
    check_params,
    choice_problem,
)
from connectors.runs.output import write_whole

_SCHEMA = pa.schema([("key", pa.string()), ("value", pa.string())])
SET_ASIDE = ".bad"  # suffix of a cache file that could not be read or held a bad entry
GENERATION_FIELDS = {"text": str, "prompt_tokens": int, "completion_tokens": int, "finish_reason": (str, type(None))}
log = logging.getLogger(__name__)


class BadCacheFile(ValueError):
    """A cache file that is not what this module writes; the message says how."""


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
                        table = self._read(file, ["key"])
                        for key in [] if table is None else table.column("key").to_pylist():
                            self._index[key] = file
        return self._index

    def _read(self, file: str, columns: list[str]) -> pa.Table | None:
        """``columns`` of one cache file; None when it vanished (another reader set it aside) or is bad (set aside here)."""
        try:
            with self.fs.open(file, "rb") as fh:
                parquet = pq.ParquetFile(fh)
                if not parquet.schema_arrow.equals(_SCHEMA):
                    raise BadCacheFile(f"columns {parquet.schema_arrow.names} of types "
                                       f"{[str(t) for t in parquet.schema_arrow.types]}, not key and value strings")
                table = parquet.read(columns=columns)
            if table.column("key").null_count:
                raise BadCacheFile("a null key")
            return table
        except FileNotFoundError:
            self._forget(file)
            return None
        except (ConnectionError, TimeoutError):
            raise  # the store did not answer: the file may be fine, and the run's retry decides
        except (BadCacheFile, pa.ArrowException, OSError, ValueError) as exc:  # OSError: pyarrow's "Couldn't deserialize thrift"
            self.set_aside(file, f"not a readable cache file ({type(exc).__name__}: {exc})")
            return None

    def _forget(self, file: str) -> None:
        """Drop ``file`` and its keys from what this reader knows (their answers become misses)."""
        self._files.pop(file, None)
        if self._index is not None:
            for key in [k for k, f in self._index.items() if f == file]:
                del self._index[key]

    def set_aside(self, file: str, reason: str) -> None:
        """Rename a bad cache file to ``<file>.bad``, forget its keys, count it (``cache_bad``) and log why.

        A reader that finds it already gone (another actor set it aside) does not count it: one file, one count."""
        self._forget(file)
        try:
            self.fs.mv(file, file + SET_ASIDE)
        except FileNotFoundError:
            return
        except OSError as exc:  # a read-only store: this reader ignores the file all the same
            log.warning("response cache: %s: %s; could not be set aside (%s), its answers are recomputed", file, reason, exc)
        else:
            log.warning("response cache: %s: %s; set aside as %s%s, its answers are recomputed", file, reason, file,
                        SET_ASIDE)
        self.counters["cache_bad"] += 1

    def refresh(self) -> None:
        """Forget the listing, so entries written since by other actors become visible."""
        self._index = None
        self._files.clear()

    def get_many(self, keys: Sequence[str], check: Callable[[str, Any], str | None] | None = None) -> dict[str, Any]:
        """The cached values of ``keys`` (absent ones left out). ``check(key, value)`` says why a value is no
        valid answer; its file is then set aside, and every key read from that file is a miss (so each
        answer handed out is in a live file, and a rerun finds it there)."""
        index = self._load_index()
        read: dict[str, tuple[str, Any]] = {}
        for key in keys:
            file = index.get(key)
            if file is not None and file not in self._files:
                table = self._read(file, ["key", "value"])
                if table is not None:
                    self._files[file] = dict(zip(table.column("key").to_pylist(), table.column("value").to_pylist()))
            if file is None or file not in self._files:
                continue
            try:
                value = json.loads(self._files[file][key])
                problem = check(key, value) if check else None
            except (KeyError, TypeError, ValueError) as exc:  # listed but absent, null, or not JSON
                problem = f"not a JSON value ({type(exc).__name__}: {exc})"
            if problem is not None:
                self.set_aside(file, f"entry {key[:12]}...: {problem}")
                continue
            read[key] = (file, value)
        found = {key: value for key, (file, value) in read.items() if file in self._files}
        hits = sum(key in found for key in keys)
        self.counters["hits"] += hits
        self.counters["misses"] += len(keys) - hits
        return found

    def put_many(self, entries: Mapping[str, Any]) -> None:
        """Write ``entries`` as one new immutable file (nothing when empty)."""
        if not entries:
            return
        keys = sorted(entries)
        name = _digest(keys)[:32]
        final = f"{self.path}/{name}.parquet"
        self.fs.makedirs(self.path, exist_ok=True)
        if not self.fs.exists(f"{self.path}/model.json"):
            write_whole(self.fs.unstrip_protocol(f"{self.path}/model.json"),
                        lambda fh: json.dump(self._identity, fh, indent=1, sort_keys=True), "w")
        table = pa.table({"key": keys, "value": [json.dumps(entries[k], allow_nan=True) for k in keys]}, schema=_SCHEMA)
        write_whole(self.fs.unstrip_protocol(final), lambda fh: pq.write_table(table, fh))
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
        strings = [self.label_strings(p, item_labels) for p, item_labels in zip(prompts, labels)]
        keys = [self.key("choice_logprobs", p, s) for p, s in zip(prompts, strings)]
        wanted = dict(zip(keys, strings))
        found = self.cache.get_many(keys, lambda key, value: _choice_entry_problem(value, wanted[key]))
        todo = [i for i, k in enumerate(keys) if k not in found]
        fresh = self.backend.choice_logprobs([prompts[i] for i in todo], [labels[i] for i in todo]) if todo else []
        fresh = [self._checked(r, strings[i]) for i, r in zip(todo, fresh)]
        self.cache.put_many({keys[i]: {"logprobs": list(r.logprobs), "label_mass": r.label_mass}
                             for i, r in zip(todo, fresh) if r.error is None and r.logprobs is not None})
        out: list[ChoiceScores | None] = [None] * len(prompts)
        for i, r in zip(todo, fresh):
            out[i] = r
        for i, k in enumerate(keys):
            if k in found:
                out[i] = ChoiceScores(tuple(found[k]["logprobs"]), found[k]["label_mass"], cached=True)
        return out  # type: ignore[return-value]

    def _checked(self, scores: ChoiceScores, strings: list[str]) -> ChoiceScores:
        """A fresh answer, or an error in its place when it is no answer (it is then not cached)."""
        if scores.error is not None:
            return scores
        problem = _choice_entry_problem({"logprobs": scores.logprobs, "label_mass": scores.label_mass}, strings)
        return scores if problem is None else ChoiceScores(None, None, f"{self.spec}: {problem}", error_code="bad_logprobs")

    def generate(self, prompts: Sequence[PromptLike], params: Decoding = GREEDY) -> list[Generation]:
        return self.generate_each(prompts, [params] * len(prompts))

    def generate_each(self, prompts: Sequence[PromptLike], params: Sequence[Decoding]) -> list[Generation]:
        check_params(prompts, params)
        keys = [self.key("generate", p, q.as_dict()) if q.deterministic else None for p, q in zip(prompts, params)]
        found = self.cache.get_many([k for k in keys if k is not None], lambda _, value: _generation_entry_problem(value))
        todo = [i for i, k in enumerate(keys) if k is None or k not in found]
        fresh = self.backend.generate_each([prompts[i] for i in todo], [params[i] for i in todo]) if todo else []
        entries = {keys[i]: _generation_entry(g) for i, g in zip(todo, fresh) if keys[i] is not None and g.error is None}
        self.cache.put_many({k: v for k, v in entries.items() if _generation_entry_problem(v) is None})
        out: list[Generation | None] = [None] * len(prompts)
        for i, g in zip(todo, fresh):
            out[i] = g
        for i, k in enumerate(keys):
            if k is not None and k in found:
                out[i] = Generation(**found[k], cached=True)
        return out  # type: ignore[return-value]

    def close(self) -> None:
        self.backend.close()


def _choice_entry_problem(value: Any, strings: Sequence[str]) -> str | None:
    """Why a cached choice entry is no answer for these labels (None when it is one)."""
    if not isinstance(value, dict) or set(value) != {"logprobs", "label_mass"}:
        return f"not a choice entry (logprobs, label_mass): {json.dumps(value)[:60]}"
    mass = value["label_mass"]
    if mass is not None and (isinstance(mass, bool) or not isinstance(mass, (int, float)) or not 0 <= mass < math.inf):
        return f"label_mass {json.dumps(mass)[:40]} is not a probability mass"
    return choice_problem(value["logprobs"], strings)


def _generation_entry(g: Generation) -> dict[str, Any]:
    return {"text": g.text, "prompt_tokens": g.prompt_tokens, "completion_tokens": g.completion_tokens,
            "finish_reason": g.finish_reason}


def _generation_entry_problem(value: Any) -> str | None:
    """Why a cached generation entry is no generation (None when it is one)."""
    if not isinstance(value, dict) or set(value) != set(GENERATION_FIELDS):
        return f"not a generation entry ({', '.join(GENERATION_FIELDS)}): {json.dumps(value)[:60]}"
    for name, kind in GENERATION_FIELDS.items():
        v = value[name]
        if isinstance(v, bool) or not isinstance(v, kind) or (isinstance(v, int) and v < 0):
            return f"{name} {json.dumps(v)[:40]} is not a {getattr(kind, '__name__', 'string or null')}"
    return None
