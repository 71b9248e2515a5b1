"""The model step every model audit runs (``jobs.common.models.step``): a model that fails reaches the job as a
``ModelFailure`` with the reason code and transient flag set where it failed -- across Ray, by its type --
and ``--on-error`` decides from them. Real Ray, the real openai backend against a real loopback server."""
from __future__ import annotations

import socket

import pyarrow as pa
import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.batches import PROMPT_SCHEMA
from jobs.common.models.answers import SkipBudget, unusable_answers
from jobs.common.models.pool import ModelStage
from jobs.common.models.step import ModelFailure, ModelSteps
from tests.servers.faulty_completions import FaultyCompletionsServer

pytestmark = pytest.mark.ray
PROMPT = Prompt("Question: the largest river?\nA. red\nB. blue\nC. green\nD. fire", None, "Answer:")


def rows(n: int = 4):
    import ray

    return ray.data.from_arrow(pa.Table.from_pylist(
        [{"id": f"q{i}", "system": None, "user": PROMPT.user, "answer_prefix": PROMPT.answer_prefix, "labels": list("ABCD")}
         for i in range(n)], schema=PROMPT_SCHEMA))


def steps(tmp_path, on_error: str, planned: int = 4) -> ModelSteps:
    return ModelSteps("test", SkipBudget(0.5, planned), str(tmp_path / "cache"), on_error, lost_node_timeout=60.0, quiet=True)


def answer(s: ModelSteps, spec: str, settings: dict, **extra) -> pa.Table:
    return s.answer(rows(), ModelStage(spec, settings, batch_size=2, max_actors=1), "choice", what="model m",
                    named=f"model m ({spec})", expected=4, reasons=unusable_answers,
                    empty=PROMPT_SCHEMA.empty_table(), **extra)


def test_a_model_that_cannot_run_is_a_permanent_failure_by_its_type(ray_local, tmp_path):
    with FaultyCompletionsServer() as server:
        spec = f"openai:{server.base_url}#m"
        s = steps(tmp_path, "skip")
        with pytest.raises(ModelFailure) as failed:  # a chat-only endpoint cannot score labels: CapabilityError in the batch
            answer(s, spec, {"endpoint": "chat"})
    exc = failed.value
    assert (exc.reason, exc.transient) == ("capability", False) and str(exc).startswith(f"model m ({spec}): ")
    assert s.leave_out(exc, "m", spec, 4) is None and s.failed[0]["reason"] == "capability"  # --on-error skip
    assert s.budget.planned == 0
    stop = steps(tmp_path, "fail").leave_out(exc, "m", spec, 4)
    assert stop is not None and not stop.resumable and stop.reason == "capability"  # --on-error fail


def test_a_model_that_answers_nothing_is_transient_when_its_answers_were(ray_local, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = f"openai:http://127.0.0.1:{port}/v1#m"
    s = steps(tmp_path, "fail", planned=400)  # a budget large enough that the stage runs to its end
    with pytest.raises(ModelFailure) as failed:
        answer(s, spec, {"max_retries": 0, "concurrency": 1}, no_answer_fails=True)
    exc = failed.value
    assert exc.reason == "no_answer" and exc.transient and exc.resumable  # every answer: a refused connection
    assert exc.skips.codes == {"connection": 4} and "answered none of its 4 prompts" in str(exc)
    assert s.manifest()["model m"]["batches"] == 2
