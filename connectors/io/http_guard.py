"""One HTTP request with credentials, guarded: no redirect followed, the reply capped, the time bounded.

Why each guard:

- **Redirects are never followed.** urllib (and requests) resend a redirected request, its headers
  included, to whatever ``Location`` names: an endpoint or anything on the path of a plain-http
  one could send the API key or cluster token to a host the user never named, and that host's
  reply would be read as the answer. A 30x is the call's error, naming the status and the origin
  it pointed to (never its path, which may carry anything).
- **A reply is read up to ``max_bytes``** (a completion with log-probs is kilobytes): a larger one
  is the call's error after at most ``max_bytes`` bytes were read, so memory stays bounded.
- **``timeout_s`` bounds the whole request**: a socket timeout bounds each read, so an endpoint
  answering one byte a second, or a chunked stream that never ends, would hold the caller
  forever. A watchdog shuts the connection's socket down when the time is up.

``redact`` is the project's one way to keep credentials out of messages: every text made from what
a server said (an error body that repeats the request's headers) goes through it.
"""
from __future__ import annotations

import http.client
import io
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable
from urllib.parse import urlsplit

REDACTED = "[redacted]"
DEFAULT_MAX_BYTES = 8 * 2**20
ERROR_BODY_BYTES = 64 * 1024  # of an error reply: enough for its message
CHUNK = 64 * 1024


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret replaced by ``[redacted]``, longest first (so a secret holding another
    is not left half shown)."""
    for secret in sorted({s for s in secrets if s and s.strip()}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: where it points, without user info, path or query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}" if parts.scheme else "(no origin)"


class RefusedReply(Exception):
    """A reply the guard refuses to read further: not retried, the same request would get the same."""


class RedirectRefused(RefusedReply):
    def __init__(self, status: int, location: str) -> None:
        self.status = status
        self.location_origin = origin(location)
        super().__init__(f"redirected (HTTP {status}) to {self.location_origin}; redirects are not followed "
                         "(the request carries credentials)")


class ReplyTooLarge(RefusedReply):
    def __init__(self, limit: int, declared: int | None = None) -> None:
        said = f" (it declared {declared:,} bytes)" if declared is not None else ""
        super().__init__(f"the reply is larger than the {limit:,}-byte limit{said}; read no further")


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 -- urllib's signature
        fp.close()
        raise RedirectRefused(code, newurl)


class _Deadline:
    """Shuts down every socket of one request once ``seconds`` have passed since it was made."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        # a duplicate of the descriptor: shutting it down ends reads on the original (TLS included), and the
        # caller's socket object is never touched from this thread
        dup = socket.socket(sock.family, sock.type, sock.proto, fileno=socket.dup(sock.fileno()))
        with self._lock:
            self._sockets.append(dup)
            expired = self.expired
        if expired:
            self._shutdown(dup)

    @staticmethod
    def _shutdown(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            self._shutdown(sock)

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()


def _watched(base: type[http.client.HTTPConnection], deadline: _Deadline) -> type[http.client.HTTPConnection]:
    class Connection(base):  # type: ignore[misc,valid-type]
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    return Connection


class _Http(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self.deadline), req)


class _Https(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPSConnection, self.deadline), req, context=self._context)  # type: ignore[attr-defined]  # HTTPSHandler's own attribute, unstubbed


def _read_capped(response: http.client.HTTPResponse, limit: int) -> bytes:
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge(limit, int(declared))
    out = bytearray()
    while chunk := response.read(min(CHUNK, limit + 1 - len(out))):
        out += chunk
        if len(out) > limit:
            raise ReplyTooLarge(limit)
    if response.length:  # read(n) ends quietly at a body cut short of its Content-Length; read() would raise
        raise http.client.IncompleteRead(bytes(out), response.length)
    return bytes(out)


def fetch(request: urllib.request.Request, timeout_s: float, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The body of ``request``'s reply, guarded (see the module doc).

    Raises ``RedirectRefused`` or ``ReplyTooLarge`` (not worth retrying), ``TimeoutError`` when the whole
    request took longer than ``timeout_s``, ``urllib.error.HTTPError`` for a status of 400 or above (its
    body read within the same bounds, at most 64 KiB), and what urllib raises for transport faults.
    """
    deadline = _Deadline(timeout_s)
    opener = urllib.request.build_opener(_RefuseRedirects, _Http(deadline), _Https(deadline))
    try:
        try:
            with opener.open(request, timeout=timeout_s) as response:
                body = _read_capped(response, max_bytes)
            if not deadline.expired:  # a reply read to its connection's end may have been cut there by the watchdog
                return body
        except urllib.error.HTTPError as exc:
            with exc:
                body = exc.read(ERROR_BODY_BYTES)
            raise urllib.error.HTTPError(exc.url, exc.code, exc.msg, exc.headers, io.BytesIO(body)) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if not deadline.expired or isinstance(exc, urllib.error.HTTPError):
            raise
    finally:
        deadline.close()
    raise TimeoutError(f"no complete reply within {timeout_s:g} s")
