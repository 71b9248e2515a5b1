"""A stand-in for ``python -m llama_cpp.server`` that dies as a natively built llama.cpp does on a CPU without the
instructions it was built for: it answers ``/v1/models``, then kills itself with SIGILL on a completion.

Run as a script (``LlamaCppServer(launcher=[python, this file])``) it crashes on completion number
``$CRASH_AT_COMPLETION`` (0: never). Packaged as ``llama_cpp/server/__main__.py`` of a stand-in llama-cpp-python
sdist (tests/connectors/models/test_llama_cpp_setup.py), the build decides: ``llama_cpp/_build.py`` says whether
``CMAKE_ARGS`` asked for a native build, and a native build crashes on its first completion. Every completion
answers with the build it came from (``" portable"`` or ``" native"``), so a test sees which one ran.
It takes the real server's flags (only ``--host`` and ``--port`` matter) and speaks as much of the protocol as the
``openai`` backend's generation and ``LlamaCppServer`` use.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from llama_cpp._build import NATIVE  # type: ignore[import-not-found]  # packaged: the build says
except ImportError:
    NATIVE = None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="stand-in")
    args, _ = parser.parse_known_args()
    crash_at = 1 if NATIVE else int(os.environ.get("CRASH_AT_COMPLETION", "0"))
    build = "native" if NATIVE else "portable"
    completions = 0
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _send(self, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 -- the http.server protocol
            self._send({"object": "list", "data": [{"id": args.model, "object": "model", "owned_by": "me"}]})

        def do_POST(self) -> None:  # noqa: N802
            nonlocal completions
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                completions += 1
                if completions == crash_at:
                    # an illegal instruction: to this thread, so it lands before another byte is written
                    signal.pthread_kill(threading.get_ident(), signal.SIGILL)
            self._send({"choices": [{"index": 0, "text": f" {build}", "finish_reason": "length", "logprobs": None}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 1}})

        def log_message(self, *a) -> None:
            pass

    signal.signal(signal.SIGILL, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the crash leaves no core file behind
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
