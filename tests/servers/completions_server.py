"""A real OpenAI-compatible completions server on loopback, serving a transformers model.

Written independently of ``connectors.models.hf`` (its own tokenization and forward, one
unpadded sequence at a time), so agreement between the ``openai`` and ``hf`` backends is a
check of both. It speaks the legacy completions protocol: ``prompt`` (a string or a list),
``max_tokens``, ``logprobs`` (top-N per position), ``echo`` (prompt tokens and their log-probs),
``stop``; greedy decoding; ``GET /v1/models`` lists the one model, with a ``created`` stamp that
changes at every start as vLLM's does. ``requests`` counts completions requests per path and
``listings`` the model listings; ``fail_with`` makes the next completions requests answer with
the given HTTP statuses (to test retries).
"""
from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class CompletionsServer:
    def __init__(self, model_dir: str, model_name: str = "tiny", host: str = "127.0.0.1", port: int = 0) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
        self.model_name = model_name
        self.requests: Counter[str] = Counter()
        self.listings = 0
        self.started = time.time_ns()
        self.fail_with: list[int] = []
        self._lock = threading.Lock()
        self._forward_lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), self._handler())  # port 0: any free one
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

    def _logprobs(self, ids: list[int]) -> Any:
        torch = self.torch
        with self._forward_lock, torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0]
        return torch.log_softmax(logits.float(), dim=-1)

    def _top(self, row: Any, n: int) -> dict[str, float]:
        values, ids = row.topk(min(n, row.shape[-1]))
        return {self.tokenizer.decode([int(i)]): float(v) for v, i in zip(values, ids)}

    def complete(self, prompt: str, body: dict[str, Any]) -> tuple[dict[str, Any], int, int]:
        """One choice for one prompt: (choice, prompt tokens, completion tokens)."""
        ids = self.tokenizer(prompt)["input_ids"]
        n_top = body.get("logprobs")
        echo = bool(body.get("echo"))
        tokens, token_lps, tops = [], [], []
        if echo:
            lp = self._logprobs(ids)
            for t, tid in enumerate(ids):
                tokens.append(self.tokenizer.decode([tid]))
                token_lps.append(None if t == 0 else float(lp[t - 1, tid]))
                tops.append(None if t == 0 or n_top is None else self._top(lp[t - 1], n_top))
        generated: list[int] = []
        finish = "length"
        for _ in range(int(body.get("max_tokens", 16))):
            row = self._logprobs(ids + generated)[-1]
            tid = int(row.argmax())
            if tid == self.tokenizer.eos_token_id:
                finish = "stop"
                break
            generated.append(tid)
            tokens.append(self.tokenizer.decode([tid]))
            token_lps.append(float(row[tid]))
            tops.append(None if n_top is None else self._top(row, n_top))
        text = self.tokenizer.decode(generated)
        for stop in body.get("stop") or []:
            if stop in text:
                text, finish = text[: text.index(stop)], "stop"
        offsets, at = [], 0
        for tok in tokens:
            offsets.append(at)
            at += len(tok)
        logprobs = None if n_top is None else {"tokens": tokens, "token_logprobs": token_lps, "top_logprobs": tops,
                                               "text_offset": offsets}
        choice = {"text": (prompt + text) if echo else text, "logprobs": logprobs, "finish_reason": finish}
        return choice, len(ids), len(generated)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # http.server's name for the GET handler
                if self.path != "/v1/models":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server.listings += 1
                self._send(200, {"object": "list", "data": [{"id": server.model_name, "object": "model",
                                                              "created": server.started, "owned_by": "benchaudit-tests"}]})

            def do_POST(self) -> None:  # http.server's name for the POST handler
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.requests[self.path] += 1
                    status = server.fail_with.pop(0) if server.fail_with else None
                if status is not None:
                    self._send(status, {"error": {"message": "injected failure"}}, {"Retry-After": "0"})
                    return
                if self.path != "/v1/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if body.get("model") != server.model_name:
                    self._send(404, {"error": {"message": f"model {body.get('model')!r} not served"}})
                    return
                prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
                choices, n_in, n_out = [], 0, 0
                for index, prompt in enumerate(prompts):
                    choice, a, b = server.complete(prompt, body)
                    choices.append({"index": index, **choice})
                    n_in, n_out = n_in + a, n_out + b
                self._send(200, {"id": "cmpl-test", "object": "text_completion", "model": server.model_name,
                                 "choices": choices,
                                 "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}})

        return Handler
