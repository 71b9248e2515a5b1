"""A stdlib HTTP server on loopback whose every answer is a test's function, and which records what reaches
it: for the attacks on the HTTP clients (a redirect to another host, a reply without end, one byte a
second), and as the "other host" that must see nothing.

``answer(handler)`` writes the reply with ``http.server``'s own calls (``send_response``, ``wfile``...);
``seen`` lists ``(method, path, headers)`` of every request, ``sent`` the body bytes the helpers below
managed to write (what a client read at most, give or take the socket buffers). ``stop`` is set when the
server closes, so an answer that streams forever ends with the test.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Answer = Callable[["ScriptedServer", BaseHTTPRequestHandler], None]


class ScriptedServer:
    def __init__(self, answer: Answer | None = None) -> None:
        self.answer = answer or (lambda server, h: server.send_json(h, 200, {"ok": True}))
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.bodies: list[bytes] = []
        self.sent = 0
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- what an answer uses ---------------------------------------------------------------------------

    def send_json(self, h: BaseHTTPRequestHandler, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(value).encode()
        h.send_response(status)
        for name, text in {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}.items():
            h.send_header(name, text)
        h.end_headers()
        self.write(h, data)

    def write(self, h: BaseHTTPRequestHandler, data: bytes) -> None:
        h.wfile.write(data)
        h.wfile.flush()
        with self._lock:
            self.sent += len(data)

    def stream(self, h: BaseHTTPRequestHandler, chunk: bytes, every_s: float, limit: int | None = None) -> None:
        """Write ``chunk`` every ``every_s`` seconds until ``limit`` bytes, the client leaves or the test ends."""
        try:
            while not self.stop.is_set() and (limit is None or self.sent < limit):
                self.write(h, chunk)
                if every_s:
                    time.sleep(every_s)
        except OSError:  # the client hung up: what a guarded client does
            pass

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with server._lock:
                    server.seen.append((self.command, self.path, dict(self.headers.items())))
                    server.bodies.append(body)
                self.close_connection = True
                server.answer(server, self)

            do_GET = do_POST = do_PUT = do_DELETE = _any  # http.server's names for the handlers

        return Handler
