"""The calls of a run, planned before any is made: router calls with their keys, then worker calls.

Settings: the clean condition ``forward_full`` (one relay, r = 1) and the noisy condition
``noisy_rewrite`` with r = 1..M parallel routers. Designs for the noisy routers of one question:
- ``nested`` (default): one pool of M router outputs per question and router model, slots 0..M-1;
  the r-router setting uses slots 0..r-1. M noisy router calls per question per router model, and
  a larger M later reuses every slot already made.
- ``independent``: fresh routers for every r, slots (r, 0..r-1): M(M+1)/2 noisy calls.
Noisy routers sample (temperature > 0) with a seed derived from the run seed, question id and slot,
so the slots differ and each has its own cache key; the clean relay and the worker are greedy.

A key is the SHA-256 of (model, prompt, decoding) -- everything that changes a response -- so two
worker models sharing a router model share its router calls, and a rerun repeats no call. Worker
calls depend on router outputs, so the plan holds ``WorkerTask``s (which router keys feed which
setting) and ``worker_call`` turns one into a call once its router outputs are known.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Literal

from audit.contamination.answers import Outcome, score_answer, unscored
from audit.contamination.choices import DEFAULT_M
from audit.contamination.prompts import PromptSet, aggregate_reports
from audit.mcqa.items import McqaItem, format_problem
from audit.mcqa.prompt import Decoding, Prompt

CLEAN = "forward_full"
NOISY = "noisy_rewrite"
CONDITIONS = (CLEAN, NOISY)
Design = Literal["nested", "independent"]


@dataclass(frozen=True)
class ModelRoles:
    """An audited (worker) model and the model that routes for it (default: the same model)."""

    worker: str
    router: str | None = None

    @property
    def router_model(self) -> str:
        return self.router or self.worker


@dataclass(frozen=True)
class PlanConfig:
    """Everything that fixes the calls: M, design, the three decodings and the router seed."""

    m: int = DEFAULT_M
    design: Design = "nested"
    seed: int = 42
    clean_router: Decoding = Decoding(temperature=0.0, max_new_tokens=768)
    noisy_router: Decoding = Decoding(temperature=0.8, top_p=0.95, max_new_tokens=768)
    worker: Decoding = Decoding(temperature=0.0, max_new_tokens=16)

    def __post_init__(self) -> None:
        if self.m < 1:
            raise ValueError(f"M must be >= 1, got {self.m}")
        if self.design not in ("nested", "independent"):
            raise ValueError(f"design must be 'nested' or 'independent', got {self.design!r}")


def call_key(model: str, prompt: Prompt, decoding: Decoding) -> str:
    """SHA-256 of (model, prompt, decoding): equal keys are the same request."""
    payload = json.dumps({"model": model, "prompt": asdict(prompt), "decoding": decoding.as_dict()}, sort_keys=True,
                         ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Call:
    """One generation request. ``role``: router or worker. ``slot``: the router slot -- ``()`` for the
    clean relay, ``(j,)`` nested, ``(r, j)`` independent -- or ``(r,)`` for a worker call."""

    key: str
    role: str
    model: str
    question_id: str
    condition: str
    slot: tuple[int, ...]
    prompt: Prompt
    decoding: Decoding


@dataclass(frozen=True)
class WorkerTask:
    """One (question, worker model, setting) cell: the router calls whose outputs feed its worker."""

    question_id: str
    model: str
    router_model: str
    condition: str
    r: int
    router_keys: tuple[str, ...]


@dataclass(frozen=True)
class CallPlan:
    """Unique router calls (in plan order) and one worker task per cell."""

    router_calls: tuple[Call, ...]
    worker_tasks: tuple[WorkerTask, ...]

    def counts(self) -> dict[str, int]:
        """Router calls by condition, and worker calls as planned (a blocked cell later makes none)."""
        noisy = sum(c.condition == NOISY for c in self.router_calls)
        return {"router_calls": len(self.router_calls), "clean_router_calls": len(self.router_calls) - noisy,
                "noisy_router_calls": noisy, "worker_calls": len(self.worker_tasks)}


def router_prompt(item: McqaItem, condition: str, prompts: PromptSet) -> Prompt:
    """What a router of ``condition`` is asked about ``item`` (one user turn)."""
    return Prompt(user=prompts.router(condition).render(problem=format_problem(item)))


def worker_prompt(item: McqaItem, router_texts: Sequence[str], prompts: PromptSet) -> Prompt:
    """What the worker is asked: the aggregated router outputs and the valid letters, never the item itself."""
    return Prompt(user=prompts.worker.render(input=aggregate_reports(prompts.aggregate, list(router_texts)),
                                             letters=item.labels_phrase()))


def router_seed(run_seed: int, question_id: str, slot: tuple[int, ...]) -> int:
    """A 31-bit sampling seed per (run seed, question, slot): backends take small non-negative ints."""
    digest = hashlib.sha256(f"{run_seed}:{question_id}:{'.'.join(map(str, slot))}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _noisy_slots(config: PlanConfig, r: int) -> list[tuple[int, ...]]:
    return [(j,) for j in range(r)] if config.design == "nested" else [(r, j) for j in range(r)]


def plan_calls(items: Sequence[McqaItem], models: Sequence[ModelRoles], prompts: PromptSet, config: PlanConfig = PlanConfig()) -> CallPlan:
    """Every router call and worker task for ``items`` (the sample) x ``models`` x settings.

    A pure function of its arguments: item order is kept, duplicate router calls (same key) appear
    once. Per question and router model: 1 clean + M (nested) or M(M+1)/2 (independent) noisy
    router calls; per question and worker model: 1 + M worker calls.
    """
    if len({m.worker for m in models}) != len(models):
        raise ValueError("each worker model may be listed once")
    calls: dict[str, Call] = {}
    tasks: list[WorkerTask] = []

    def router_call(item: McqaItem, model: str, condition: str, slot: tuple[int, ...]) -> str:
        prompt = router_prompt(item, condition, prompts)
        decoding = config.clean_router
        if condition == NOISY:
            decoding = replace(config.noisy_router, seed=router_seed(config.seed, item.id, slot))
        key = call_key(model, prompt, decoding)
        calls.setdefault(key, Call(key, "router", model, item.id, condition, slot, prompt, decoding))
        return key

    for item in items:
        for roles in models:
            router = roles.router_model
            tasks.append(WorkerTask(item.id, roles.worker, router, CLEAN, 1, (router_call(item, router, CLEAN, ()),)))
            for r in range(1, config.m + 1):
                keys = tuple(router_call(item, router, NOISY, slot) for slot in _noisy_slots(config, r))
                tasks.append(WorkerTask(item.id, roles.worker, router, NOISY, r, keys))
    return CallPlan(router_calls=tuple(calls.values()), worker_tasks=tuple(tasks))


@dataclass(frozen=True)
class CallResult:
    """What a call returned: its text, or the error category (``failed`` or ``timeout``)."""

    text: str | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        if self.error not in (None, "failed", "timeout"):
            raise ValueError(f"call error must be 'failed' or 'timeout', got {self.error!r}")


TIMEOUT_CODE = "timeout"  # the reason code a backend gives a call that ran out of time


def call_result(text: str | None, error: str | None = None, error_code: str | None = None) -> CallResult:
    """A backend's reply as a ``CallResult``: an error whose reason code (set by the backend where the call
    failed, e.g. ``Generation.error_code``) is ``timeout`` is ``timeout``, any other error ``failed``."""
    if error is None:
        return CallResult(text=text)
    return CallResult(error="timeout" if error_code == TIMEOUT_CODE else "failed")


def blocked(results: Sequence[CallResult]) -> str | None:
    """Why a cell's worker cannot run: the first unusable router result in slot order, else None.

    A cell is an r-router measurement only if all r routers delivered, so one failed, timed-out or
    empty output blocks the cell (``failed``, ``timeout``, ``empty_router``) instead of silently
    asking the worker about fewer descriptions.
    """
    for result in results:
        if result.error is not None:
            return result.error
        if not (result.text or "").strip():
            return "empty_router"
    return None


def worker_call(task: WorkerTask, item: McqaItem, router_results: Mapping[str, CallResult], prompts: PromptSet,
                config: PlanConfig = PlanConfig()) -> Call | Outcome:
    """The worker call of ``task`` given the router results by key, or the cell's outcome when blocked."""
    results = [router_results[key] for key in task.router_keys]
    status = blocked(results)
    if status is not None:
        return unscored(status)
    prompt = worker_prompt(item, [r.text for r in results], prompts)
    key = call_key(task.model, prompt, config.worker)
    return Call(key, "worker", task.model, task.question_id, task.condition, (task.r,), prompt, config.worker)


def worker_outcome(item: McqaItem, result: CallResult) -> Outcome:
    """Score the worker's result: a call error is its category, a reply goes through ``parse_answer``."""
    if result.error is not None:
        return unscored(result.error)
    return score_answer(result.text, item.labels, item.gold_label)
