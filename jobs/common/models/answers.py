"""Model answers counted on the driver as they come back: progress, unusable answers by reason, the limit.

Every model job (landscape, contamination) consumes its model stages through ``collect``, called by
the model step they share (``jobs.common.models.step``). Why on
the driver: a stage runs in a Ray Data actor pool, and its output rows are the one thing that comes
back from it (an actor's counters die with it). The rows were coming to the driver anyway (scores
and short generations are small), so ``iter_batches`` there counts each batch the moment it
arrives, with no server or counter actor of our own: answers back of answers expected, cache hits
against calls the model made, and every unusable answer (a failed call, a timeout, an empty or
unparsable reply) under its reason (``reason_code``: the message without its particulars).

**The limit** is ``--max-skipped``, the share the readers apply to bad rows, here of the answers a
run counts: a run with more unusable answers fails instead of reporting success, and its one-line
error names the top reasons with their counts. A run within the limit shows its skips in the
report, in the manifest and as a warning on the terminal.

**Fail fast.** A model stage stops as soon as the run can no longer meet the limit: when its
unusable answers exceed ``floor(max_skipped x planned answers)``, the planned answers being every
answer the run may still count (an upper bound, so a run that could succeed is never stopped).
That is the N of "the first N answers all failed": the smallest number of failures after which no
later answer can save the run, so every further call is wasted. A configuration error (every
prompt longer than the model's context, labels the endpoint does not return among its top
log-probs) fails every call the same way and is caught after about ``max_skipped`` of the planned
answers (1% by default) plus the batches already in flight, whatever the order of the items. A
fixed count of leading failures would instead need failures independent of the order, and a
benchmark read in file order keeps its long passages (one subject) together.

**Resume** is advised only where it can help: every unusable answer the limit cannot absorb is
transient (a request that failed after its retries -- HTTP 429/5xx, a refused or lost connection --
or timed out). Errors are data: each unusable answer is an ``Unusable`` with its reason code and
``transient`` flag, set where the failure happened (the backend's ``error_code``/``error_transient``
columns, ``connectors.models.http_client.EndpointError``), never read back out of the message. The
response cache keeps every answer that came back, and failed ones are not cached, so a rerun with
``--resume`` repeats only those calls; a permanent reason (a prompt too long, a label outside the top
log-probs, NaN log-probs, an unparsable reply) would meet the same answer again.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jobs.common.runtime.errors import JobError
from jobs.common.runtime.nodes import watch_nodes
from jobs.common.runtime.progress import AnswerProgress
from jobs.common.runtime.summaries import clip_text

if TYPE_CHECKING:
    import pyarrow as pa

# Reason codes whose fix is a setting or flag: shown after the reasons in the error.
REMEDIES = {
    "label_not_in_top_logprobs":
        "the endpoint's top log-probs do not hold every option label: score each label itself with "
        "--model-settings '{\"label_method\": \"echo\"}' (in a --models YAML: settings: {label_method: echo}); "
        "resuming cannot help",
    "prompt_too_long":
        "prompts (with the tokens to generate) longer than the model's context: use a model with a longer context, "
        "shorter prompts or fewer new tokens, or raise the hf setting max_length if the model takes more "
        "(--model-settings '{\"max_length\": N}'); resuming cannot help",
}
TOP = 3  # reasons named in an error line; all of them are in the manifest
EXAMPLE_CHARS = 240  # the top reason's first message, shown in full up to this length


_HTTP_STATUS = re.compile(r"\bHTTP ([1-5]\d\d)\b")


def reason_code(reason: str) -> str:
    """A reason without its particulars, for counting: an endpoint's refusal is its ``HTTP <status>``;
    else the text after the last ``": "`` (file, row, spec and URL prefixes dropped), a trailing
    parenthesis, quoted text and bracketed lists (option text, label lists), single capital letters
    (option letters) and standalone numbers (counts, rows, lengths) replaced. A digit inside a word
    stays: ``utf-8``, ``top-20``, ``gpt-4o``."""
    status = _HTTP_STATUS.search(reason)
    if status:  # an endpoint's refusal: its status is the reason, the body it sent back is particulars
        return f"HTTP {status.group(1)}"
    text = re.sub(r"\s*\(.*\)$", "", reason.rsplit(": ", 1)[-1])
    text = re.sub(r"\[[^\]]*\]", "[…]", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\b[A-Z]\b", "X", text)
    return re.sub(r"(?<![\w.\-])\d+(?:\.\d+)?(?![\w\-]|\.\d)", "N", text)


@dataclass(frozen=True)
class Unusable:
    """One unusable answer: its message, its reason code and whether a rerun may pass, as set where it failed."""

    message: str
    code: str
    transient: bool = False


def unusable_answers(batch: pa.Table) -> list[Unusable | None]:
    """Per row of a model's answers, its failure (None: answered), from the ``error``, ``error_code`` and
    ``error_transient`` columns the backend set (``connectors.models.batches``); a table without the last
    two (lm-eval's rows) has permanent errors of code ``error``."""
    n = batch.num_rows
    errors = batch.column("error").to_pylist()
    codes = batch.column("error_code").to_pylist() if "error_code" in batch.column_names else [None] * n
    flags = batch.column("error_transient").to_pylist() if "error_transient" in batch.column_names else [None] * n
    return [None if e is None else Unusable(e, c or "error", bool(t)) for e, c, t in zip(errors, codes, flags)]


@dataclass
class Skips:
    """Unusable answers by reason (``reason_code`` of the message: how they are shown and counted), each with
    its first full message, by the code set where they failed, and how many are transient."""

    by_reason: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    codes: Counter[str] = field(default_factory=Counter)
    transient: int = 0

    @classmethod
    def of(cls, found: Iterable[Unusable | None]) -> Skips:
        out = cls()
        for one in found:
            if one is not None:
                out.add(one)
        return out

    def add(self, one: Unusable, n: int = 1) -> None:
        reason = reason_code(one.message)
        self.by_reason[reason] += n
        self.examples.setdefault(reason, one.message)
        self.codes[one.code] += n
        self.transient += n if one.transient else 0

    def merge(self, other: Skips, sign: int = 1) -> None:
        """Add (``sign`` -1: take away) another count, e.g. a model left out of the run."""
        for code, n in other.by_reason.items():
            self.by_reason[code] += sign * n
            if self.by_reason[code] <= 0:
                del self.by_reason[code]
            elif code in other.examples:
                self.examples.setdefault(code, other.examples[code])
        self.examples = {k: v for k, v in self.examples.items() if k in self.by_reason}
        for code, n in other.codes.items():
            self.codes[code] += sign * n
        self.codes = +self.codes  # drop codes counted down to zero
        self.transient += sign * other.transient

    @property
    def total(self) -> int:
        return sum(self.by_reason.values())

    def top(self, k: int = TOP) -> str:
        """``"590 × reason; 11 × other"`` for the first ``k`` reasons (and how many more), then the fix
        of any reason that has a known one."""
        shown = [f"{n:,} × {code}" for code, n in self.by_reason.most_common(k)]
        first = self.examples.get(self.by_reason.most_common(1)[0][0], "") if self.by_reason else ""
        if first and first != self.by_reason.most_common(1)[0][0]:  # the top reason in full: spec, URL, numbers
            shown[0] += f" (first: {clip_text(first, EXAMPLE_CHARS)})"
        more = len(self.by_reason) - k
        text = " · ".join(shown) + (f" · {more} more reason(s) in manifest.json" if more > 0 else "")
        fixes = [fix for code, fix in REMEDIES.items() if self.codes.get(code)]
        return text + "".join(f"; fix: {fix}" for fix in fixes)

    def resumable(self, allowed: int) -> bool:
        """Whether a rerun can bring the run within ``allowed`` unusable answers: some are transient and
        the permanent ones alone fit."""
        return self.transient > 0 and self.total - self.transient <= allowed

    def to_json(self) -> dict:
        return {"total": self.total, "by_reason": dict(self.by_reason.most_common()), "by_code": dict(self.codes.most_common()),
                "transient": self.transient,
                "examples": {code: self.examples[code] for code, _ in self.by_reason.most_common()}}


@dataclass
class SkipBudget:
    """How many unusable answers ``--max-skipped`` lets a run have, over the answers it plans."""

    max_skipped: float
    planned: int  # every answer the run may count: exact, or an upper bound while later stages are unknown
    skips: Skips = field(default_factory=Skips)  # of the whole run so far
    counted: int = 0  # answers counted so far, over every stage

    @property
    def allowed(self) -> int:
        return math.floor(self.max_skipped * self.planned + 1e-9)

    def exceeded(self) -> bool:
        return self.skips.total > self.allowed


class StageStopped(JobError):
    """A model stage stopped early: the run's unusable answers exceed what ``--max-skipped`` allows."""

    def __init__(self, message: str, resumable: bool, skips: Skips):
        super().__init__(message, resumable=resumable)
        self.skips = skips


Reasons = Callable[["pa.Table"], list]  # a batch -> per row, its ``Unusable`` (None: usable)


@dataclass
class StageAnswers:
    """One model stage, counted as ``collect`` consumes it."""

    what: str  # "model hf-tiny": the stage in progress lines and errors
    expected: int
    budget: SkipBudget
    reasons: Reasons
    progress: AnswerProgress
    skips: Skips = field(default_factory=Skips)  # of this stage
    batches: list = field(default_factory=list)  # every batch back so far (what a stopped stage did answer)

    def add(self, batch: pa.Table) -> None:
        import pyarrow.compute as pc

        self.batches.append(batch)
        found = Skips.of(self.reasons(batch))
        self.skips.merge(found)
        self.budget.skips.merge(found)
        self.budget.counted += batch.num_rows
        cached = int(pc.sum(batch.column("cached")).as_py() or 0) if batch.num_rows else 0
        self.progress.update(batch.num_rows, cached, found.total)

    def table(self, empty: pa.Table) -> pa.Table:
        """The rows back so far, in the columns of ``empty``."""
        import pyarrow as pa

        return pa.concat_tables([empty, *self.batches], promote_options="default")

    def stop_message(self) -> str:
        """Why the stage stopped (the caller names the model before it)."""
        b = self.budget
        return (f"stopped after {self.progress.done:,} of {self.expected:,} answers: the run has {b.skips.total:,} unusable "
                f"answers so far, more than --max-skipped {b.max_skipped:g} allows ({b.allowed:,} of its {b.planned:,} planned "
                f"answers); top reasons: {self.skips.top() if self.skips.total else b.skips.top()}")


def stage_answers(job: str, what: str, expected: int, budget: SkipBudget, reasons: Reasons, quiet: bool) -> StageAnswers:
    return StageAnswers(what, expected, budget, reasons, AnswerProgress(job, what, expected, quiet=quiet))


def collect(ds, answers: StageAnswers, empty: pa.Table, needs: dict[str, float], lost_node_timeout: float) -> pa.Table:
    """Every output row of a model stage (a Ray Dataset), counted batch by batch on the driver (``empty``
    gives the columns when there is none); raises ``StageStopped`` when the run's budget is spent and
    answers are still to come, and ``NodeLost`` when a Ray node died and for ``lost_node_timeout`` seconds
    no live node has had ``needs`` (what one actor of the stage asks) to take its work over (closing the
    iteration shuts the stage's pool down either way)."""
    batches = iter(ds.iter_batches(batch_format="pyarrow", batch_size=None))  # closed below: the stage stops at once
    try:
        with watch_nodes(answers.progress.job, answers.what, needs, lost_node_timeout):
            for batch in batches:
                answers.add(batch)
                if answers.budget.exceeded() and answers.progress.done < answers.expected:
                    raise StageStopped(answers.stop_message(), answers.budget.skips.resumable(answers.budget.allowed),
                                       answers.skips)
    finally:
        batches.close()
        answers.progress.emit()
    return answers.table(empty)
