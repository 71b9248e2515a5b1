"""A stdlib OpenAI-compatible completions server on loopback that answers label log-probs without a
model, and breaks on request: for the faults a real endpoint or proxy shows (a 401 or 500 whose body
repeats the request's Authorization header, a generated text that repeats it, a body that is not UTF-8, a body cut short of its
Content-Length, a reset connection, a log-prob that is a string, NaN or above 0, the wrong number of
choices).

Its answers are a pure function of the prompt (the sha256 of the text, as log-softmax scores over the
letters A-J and "anything else"), so a rerun must reproduce them exactly. It speaks as much of the
legacy protocol as the ``openai`` backend uses: ``GET /v1/models``; ``POST /v1/completions`` with
``logprobs=N`` (top log-probs of the next token), ``echo`` with a prompt or a list of prompts (each
``text + label``: the label's own log-prob), and plain generation (``"text": " A"``).

``faults`` is consumed one per completions request; ``always`` applies to every request while set.
``requests`` counts completions requests, ``seen_auth`` the Authorization headers received.
"""
from __future__ import annotations

import hashlib
import json
import math
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

LETTERS = "ABCDEFGHIJ"
FAULTS = ("echo_auth_401", "echo_auth_500", "auth_in_text", "bad_utf8", "short_body", "reset", "logprob_string",
          "logprob_nan", "logprob_positive", "wrong_count")


def label_logprobs(prompt: str) -> dict[str, float]:
    """``{" A": lp, ...}`` for the letters A-J: a log-softmax over them and one "anything else" entry."""
    digest = hashlib.sha256(prompt.encode("utf-8")).digest()
    scores = [b / 32.0 for b in digest[: len(LETTERS) + 1]]
    top = max(scores)
    norm = top + math.log(sum(math.exp(s - top) for s in scores))
    return {f" {letter}": s - norm for letter, s in zip(LETTERS, scores)}


def echoed_auth_body(auth: str) -> bytes:
    """What a proxy that repeats the request's headers answers: the header near the start, and again
    straddling byte 300 (where a client that cuts before redacting would show half the key)."""
    head = f"proxy refused the request. Request headers: Authorization: {auth}; Content-Type: application/json. "
    pad = "x" * max(0, 290 - len(head) - len("Authorization: Bearer "))
    return (head + pad + f"Authorization: {auth} (end)").encode()


class FaultyCompletionsServer:
    def __init__(self, model_name: str = "m", host: str = "127.0.0.1") -> None:
        self.model_name = model_name
        self.faults: list[str] = []
        self.always: str | None = None
        self.requests = 0
        self.seen_auth: list[str | None] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, 0), self._handler())
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next_fault(self) -> str | None:
        with self._lock:
            self.requests += 1
            return self.faults.pop(0) if self.faults else self.always

    def answer(self, body: dict[str, Any], fault: str | None, auth: str | None = None) -> dict[str, Any]:
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for index, prompt in enumerate(prompts):
            if body.get("echo"):
                label = " " + prompt[-1]
                lp = label_logprobs(prompt[: -len(label)])[label]
                logprobs = {"tokens": [prompt[: -len(label)], label], "token_logprobs": [None, lp],
                            "top_logprobs": [None, None], "text_offset": [0, len(prompt) - len(label)]}
                choices.append({"index": index, "text": prompt, "logprobs": logprobs, "finish_reason": "stop"})
            elif body.get("logprobs"):
                top: dict[str, Any] = label_logprobs(prompt)
                if fault == "logprob_string":
                    top[" A"] = "-0.5"
                elif fault == "logprob_nan":
                    top[" A"] = float("nan")
                elif fault == "logprob_positive":
                    top[" A"] = 0.5
                choices.append({"index": index, "text": " A", "finish_reason": "length",
                                "logprobs": {"tokens": [" A"], "token_logprobs": [top[" A"]], "top_logprobs": [top]}})
            else:
                text = f" A (you sent {auth})" if fault == "auth_in_text" else " A"
                choices.append({"index": index, "text": text, "logprobs": None, "finish_reason": "length"})
        if fault == "wrong_count":
            choices = choices[:-1]
        return {"id": "cmpl-faulty", "object": "text_completion", "model": self.model_name, "choices": choices,
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, data: bytes, length: int | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # http.server's name for the GET handler
                listing = {"object": "list", "data": [{"id": server.model_name, "object": "model", "owned_by": "faulty"}]}
                self._send(200, json.dumps(listing).encode())

            def do_POST(self) -> None:  # http.server's name for the POST handler
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                auth = self.headers.get("Authorization")
                fault = server._next_fault()
                with server._lock:
                    server.seen_auth.append(auth)
                if fault in ("echo_auth_401", "echo_auth_500"):
                    self._send(401 if fault == "echo_auth_401" else 500, echoed_auth_body(str(auth)))
                    return
                if fault == "reset":  # close with RST, no response at all
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                data = json.dumps(server.answer(body, fault, auth)).encode()
                if fault == "bad_utf8":
                    data = data.replace(b'"text_completion"', b'"text_\xff\xfecompletion"')
                if fault == "short_body":
                    self.close_connection = True
                    self._send(200, data[: len(data) // 2], length=len(data))
                    return
                self._send(200, data)

        return Handler
