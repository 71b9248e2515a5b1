"""Errors as data: every failed answer carries a reason code and a transient flag set where it failed -- the
HTTP client for what it retried or refused at once, the backend for answers that are no answers -- and the
rows a model stage returns carry both (``error_code``, ``error_transient``). A real stdlib server on
loopback (tests/servers); no model is loaded."""
from __future__ import annotations

import pickle
import socket

import pyarrow as pa
import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.batches import generate_prompt_batch, score_prompt_batch
from connectors.models.http_client import EndpointError
from connectors.models.registry import build_backend
from tests.servers.faulty_completions import FaultyCompletionsServer

PROMPTS = [Prompt("Question: the largest river?\nA. red\nB. blue\nC. green\nD. fire", None, "Answer:")]
LABELS = [list("ABCD")]
FAST = {"backoff_s": 0.0, "max_backoff_s": 0.0, "concurrency": 1, "max_retries": 1}


@pytest.fixture()
def server():
    with FaultyCompletionsServer() as srv:
        yield srv


@pytest.mark.parametrize("fault, code, transient", [
    ("echo_auth_401", "http_401", False),  # refused at once: a rerun meets the same refusal
    ("echo_auth_500", "http_500", True),  # retried and still failing: may pass later
    ("short_body", "cut_short", True),
    ("bad_utf8", "not_utf8", False),
    ("logprob_nan", "bad_logprobs", False),
])
def test_a_failed_answer_carries_the_code_and_flag_of_where_it_failed(server, fault, code, transient):
    server.always = fault
    backend = build_backend(f"openai:{server.base_url}#m", FAST)
    scores = backend.choice_logprobs(PROMPTS, LABELS)[0]
    generated = backend.generate(PROMPTS)[0]
    assert (scores.error_code, scores.transient) == (code, transient) and scores.error
    if fault.startswith(("echo", "short", "bad_utf8")):  # a generation fails the same way at the HTTP client
        assert (generated.error_code, generated.transient) == (code, transient)


def test_a_refused_connection_is_transient_and_the_rows_carry_code_and_flag():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = build_backend(f"openai:http://127.0.0.1:{port}/v1#m", {**FAST, "max_retries": 0})
    batch = pa.table({"id": ["q"], "system": [None], "user": [PROMPTS[0].user], "answer_prefix": ["Answer:"],
                      "labels": [LABELS[0]]}, schema=pa.schema([("id", pa.string()), ("system", pa.string()),
                                                                ("user", pa.string()), ("answer_prefix", pa.string()),
                                                                ("labels", pa.list_(pa.string()))]))
    for rows in (score_prompt_batch(backend, batch), generate_prompt_batch(backend, batch)):
        assert rows.column("error_code").to_pylist() == ["connection"]
        assert rows.column("error_transient").to_pylist() == [True]


def test_an_endpoint_error_keeps_its_code_and_flag_across_pickling():
    """A Ray task's error crosses processes pickled: the data must survive it."""
    again = pickle.loads(pickle.dumps(EndpointError("POST u failed after 1 retries: HTTP 503", "http_503", True)))
    assert (str(again), again.reason, again.transient) == ("POST u failed after 1 retries: HTTP 503", "http_503", True)
