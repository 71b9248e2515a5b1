"""The model step every model audit runs: prompt rows in, answers out, counted as they come back.

Why one step: a model audit (landscape, contamination, the next ones) needs the same things around its
model calls -- the response cache, an actor pool per model (``jobs.common.models.pool.model_stage``),
progress and unusable answers counted on the driver batch by batch, the ``--max-skipped`` budget
that stops a stage as soon as the run cannot meet it (``jobs.common.models.answers``), a lost node noticed,
and one policy for a model that fails: a ``ModelFailure`` naming the model, with the reason code and
transient flag set where it failed (``jobs.common.runtime.errors.failure_reason``), then ``--on-error``:
``fail`` stops the run, ``skip`` leaves the model out and lists it (within ``--max-skipped-inputs``).
A job gives ``ModelSteps.answer`` its rows, its model and how to judge an answer (``reasons``), and
gets the answered rows back; it never writes that loop itself.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jobs.common.models.answers import SkipBudget, Skips, StageAnswers, StageStopped, collect, stage_answers
from jobs.common.models.pool import ModelStage, Operation, actor_needs, model_stage
from jobs.common.runtime.errors import JobError, failure_reason, one_line, user_code_error
from jobs.common.runtime.nodes import NodeLost

if TYPE_CHECKING:
    import pyarrow as pa

    from jobs.common.runtime.job import JobRun


class ModelFailure(JobError):
    """A model that could not run, stopped the run's budget, or answered nothing; the message names it.
    ``reason`` and ``transient`` come from where it failed; ``skips`` are its unusable answers so far."""

    def __init__(self, message: str, *, reason: str, transient: bool, skips: Skips | None = None,
                 info: dict | None = None) -> None:
        super().__init__(message, resumable=transient, reason=reason)
        self.skips, self.info = skips or Skips(), info


@dataclass
class ModelSteps:
    """A run's model stages: the shared budget, cache and failure policy, and each stage's answers by name."""

    job: str
    budget: SkipBudget
    cache_root: str
    on_error: str  # "fail": a failed model stops the run; "skip": it is left out and listed
    lost_node_timeout: float
    quiet: bool = False
    stages: dict[str, StageAnswers] = field(default_factory=dict)
    failed: list[dict] = field(default_factory=list)  # models left out under --on-error skip

    @classmethod
    def of(cls, job: JobRun, planned: int, cache_root: str, on_error: str | None = None) -> ModelSteps:
        """The steps of ``job``'s run: ``planned`` answers in all (an upper bound while later stages are unknown),
        the run's --on-error unless the job's design allows only ``fail``."""
        opts = job.opts
        return cls(job.job, SkipBudget(opts.max_skipped, planned), cache_root, on_error or opts.on_error,
                   opts.lost_node_timeout, quiet=opts.log_level in ("warning", "error"))

    def answer(self, rows: Any, stage: ModelStage, operation: Operation, *, what: str, expected: int,
               reasons: Callable[[pa.Table], list], empty: pa.Table, named: str | None = None, key: str | None = None,
               then: Callable | None = None, then_kwargs: dict | None = None, no_answer_fails: bool = False,
               calls: Callable[[pa.Table], str] | None = None) -> pa.Table:
        """``rows`` (a Ray Dataset of prompt rows) answered by ``stage``'s model, then mapped by ``then`` (a CPU
        stage over each answered batch), every batch counted as it comes back (``reasons`` judges each row,
        ``empty`` gives the columns when there is none). ``no_answer_fails``: a model with no usable answer is a
        failed model (``calls`` says what its calls cost, for the error), not answers for the skip limits to count.
        ``what`` names the stage in progress lines, ``named`` in errors and ``key`` in the manifest (default: ``what``).
        Raises ``ModelFailure`` naming the model when it could not run, when the budget is spent, or
        (``no_answer_fails``) when it answered none of its rows; ``NodeLost`` (the cluster's failure, not the
        model's) passes through."""
        answers = stage_answers(self.job, what, expected, self.budget, reasons, self.quiet)
        self.stages[key or what] = answers
        named = named or what
        try:
            out = model_stage(rows, stage, operation, self.cache_root)
            if then is not None:
                out = out.map_batches(then, fn_kwargs=then_kwargs or {}, batch_format="pyarrow")
            # Errors as data across Ray: by default Ray Data re-raises a batch's failure as a UserCodeException
            # whose cause is lost in pickling; the original (an EndpointError with its reason and transient flag)
            # comes back only when raised as it is (measured on Ray 2.60: RayTaskError(EndpointError), the data kept).
            out.context.raise_original_map_exception = True
            table = collect(out, answers, empty, actor_needs(stage), self.lost_node_timeout)
        except NodeLost:
            raise  # the run stops, resumably, whatever --on-error says
        except StageStopped as exc:
            raise ModelFailure(f"{named} {exc}", reason="max_skipped", transient=exc.resumable, skips=answers.skips) from exc
        except Exception as exc:  # noqa: BLE001 -- one model's failure is reported as that model's, with its cause
            reason, transient = failure_reason(exc)
            raise ModelFailure(f"{named}: {user_code_error(exc) or one_line(exc)}", reason=reason, transient=transient,
                               skips=answers.skips) from exc
        if no_answer_fails and table.num_rows and answers.skips.total == table.num_rows:
            cost = f" ({calls(table)})" if calls is not None else ""
            raise ModelFailure(f"{named} answered none of its {table.num_rows} prompts{cost}; top reasons: "
                               f"{answers.skips.top()}", reason="no_answer", transient=answers.skips.resumable(0),
                               skips=answers.skips)
        return table

    def leave_out(self, failure: ModelFailure, model: str, spec: str, planned: int) -> JobError | None:
        """--on-error for a model that failed: under ``skip`` it is listed and its ``planned`` answers and
        unusable ones leave the budget (a model left out counts as an input, not by its answers), and None
        is returned; under ``fail`` the error to stop the run with."""
        self.failed.append({"file": spec, "model": model, "error": str(failure), "reason": failure.reason})
        self.budget.skips.merge(failure.skips, -1)
        self.budget.planned -= planned
        if self.on_error == "fail":
            return JobError(str(failure), resumable=failure.transient, reason=failure.reason)
        return None

    def manifest(self) -> dict:
        """Each stage's expected answers, unusable ones by reason, and progress samples."""
        return {name: {"expected": a.expected, "batches": len(a.batches), "unusable": a.skips.to_json(),
                       "progress": a.progress.samples} for name, a in self.stages.items()}
