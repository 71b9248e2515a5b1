"""JSON over HTTP POST with timeouts, retries with exponential backoff, and bounded concurrency.

Retried: HTTP 429 and 5xx (``Retry-After`` is honoured, up to the backoff cap), transport faults
(a connection reset, a body cut short of its Content-Length, a broken status line), timeouts and a
body that is not JSON. Not retried: other 4xx (a bad request stays bad), a body that is not UTF-8
(the server said what it meant to say; it is the item's error) and a refused connection
(``EndpointDown``): nothing listens at the address, so the server was never started or has died
(a crashed llama.cpp server: its in-flight request is reset, the retry is refused), and minutes
of backoff would only hide that. Every attempt,
retry and final failure is counted in the caller's counters, so a manifest can say how flaky the
endpoint was.

The API key goes in the Authorization header only. Some proxies repeat a request's headers in
their error bodies, so every message this client makes (``EndpointError``) passes through
``redact``, which replaces each credential it sends with ``[redacted]`` before the text is cut to
length; the backend redacts the texts it returns the same way.

Every request goes through ``connectors.io.http_guard.fetch``: a redirect is never followed (it
would carry the key to wherever ``Location`` points) and is the call's error, naming the status and
the origin; a reply over ``max_reply_bytes`` is the call's error, read no further; ``timeout_s``
bounds the whole request, not each socket read (a timeout is retried like any transport fault).
"""
from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from threading import Lock
from typing import Any, TypeVar

from connectors.io.http_guard import DEFAULT_MAX_BYTES, RefusedReply, fetch, redact

T = TypeVar("T")
R = TypeVar("R")
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "api-key", "x-api-key")
DETAIL_CHARS = 300  # of an error body, in a message


class EndpointError(RuntimeError):
    """A request that failed for good (after its retries, or with a non-retryable status).

    ``reason``: its code (``http_<status>``, ``timeout``, ``connection``, ``cut_short``, ``broken_response``,
    ``not_json``, ``not_utf8``); ``transient``: whether a rerun may pass -- set here, where it is known: a
    request that gave up after retrying a failure the client retries (429, 5xx, lost or refused connections,
    timeouts, broken responses), never one refused at once (other 4xx, a body that is not UTF-8)."""

    def __init__(self, message: str, reason: str = "endpoint", transient: bool = False) -> None:
        super().__init__(message)
        self.reason, self.transient = reason, transient

    def __reduce__(self):  # keeps reason and transient across pickling (a Ray task's error)
        return type(self), (str(self), self.reason, self.transient)


class EndpointDown(EndpointError):
    """The endpoint refused the connection: no server listens at its address (not started, or crashed).

    Not retried within the run (fail fast), but transient (code ``connection``): a rerun with ``--resume``
    once the server is up may pass."""

    def __init__(self, message: str, reason: str = "connection", transient: bool = True) -> None:
        super().__init__(message, reason, transient)


@dataclass(frozen=True)
class RetryPolicy:
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_reply_bytes: int = DEFAULT_MAX_BYTES

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), self.max_backoff_s)
            except ValueError:
                pass
        return min(self.backoff_s * 2**attempt, self.max_backoff_s)


class JsonClient:
    """POSTs JSON to ``base_url + path``; thread-safe; counters shared with the backend."""

    def __init__(self, base_url: str, api_key: str | None, policy: RetryPolicy, counters: Counter[str],
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url.rstrip("/")
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        # the key, and each credential header's value without its scheme ("Bearer <token>": the token), so an
        # echo reads "Authorization: Bearer [redacted]"
        self._secrets = {api_key or ""} | {v.split(" ", 1)[-1] for k, v in self._headers.items() if k.lower() in CREDENTIAL_HEADERS}
        self.policy = policy
        self.counters = counters
        self._lock = Lock()
        self._sleep = sleep

    def redact(self, text: str) -> str:
        """``text`` with every credential this client sends replaced by ``[redacted]``."""
        return redact(text, self._secrets)

    def _error(self, message: str, reason: str, transient: bool) -> EndpointError:
        return EndpointError(self.redact(message), reason, transient)

    def _count(self, name: str, by: int = 1) -> None:
        with self._lock:
            self.counters[name] += by

    def get_once(self, path: str, timeout_s: float) -> dict[str, Any]:
        """One GET without retries or counting (a side question such as ``/models``, not the work)."""
        url = f"{self.base_url}{path}"
        try:
            request = urllib.request.Request(url, headers=self._headers, method="GET")
            return json.loads(fetch(request, timeout_s, self.policy.max_reply_bytes).decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise self._error(f"GET {url} failed: HTTP {exc.code}", f"http_{exc.code}", _retryable(exc.code)) from exc
        except RefusedReply as exc:
            raise self._error(f"GET {url} failed: {exc}", "refused_reply", False) from exc
        except ValueError as exc:
            raise self._error(f"GET {url} failed: {type(exc).__name__}: {exc}", "not_json", False) from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            raise self._error(f"GET {url} failed: {type(exc).__name__}: {reason}", _failure_code(reason), True) from exc

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        data = json.dumps(body).encode("utf-8")
        last, code = "", "endpoint"
        self._count("retries", 0)  # a manifest says "retries 0" of calls never retried (a refused connection)
        for attempt in range(self.policy.max_retries + 1):
            if attempt:
                self._count("retries")
            self._count("requests")
            retry_after = None
            try:
                request = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
                raw = fetch(request, self.policy.timeout_s, self.policy.max_reply_bytes)
                return json.loads(_utf8(raw))
            except RefusedReply as exc:  # a redirect or a reply over the limit: the same again on a retry
                self._count("failures")
                raise self._error(f"POST {url} failed: {exc}", "refused_reply", False) from None
            except urllib.error.HTTPError as exc:
                last, code = f"HTTP {exc.code}: {self._detail(exc)}", f"http_{exc.code}"
                if not _retryable(exc.code):
                    self._count("failures")
                    raise self._error(f"POST {url} failed: {last}", code, False) from exc
                retry_after = exc.headers.get("Retry-After")
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, ConnectionRefusedError):
                    self._count("failures")
                    host = urllib.parse.urlsplit(url).netloc
                    raise EndpointDown(self.redact(
                        f"POST {url} failed after {attempt} retries: connection refused: nothing listens at {host} (a "
                        "server not started, or one that crashed); a refused connection is not retried")) from exc
                last = f"timed out after {self.policy.timeout_s:g} s" if isinstance(reason, TimeoutError) \
                    else f"{type(reason).__name__}: {reason}"
                code = _failure_code(reason)
            except http.client.IncompleteRead as exc:
                last = f"the response was cut short ({len(exc.partial)} bytes read, {exc.expected} more expected)"
                code = "cut_short"
            except http.client.HTTPException as exc:
                last, code = f"broken response ({type(exc).__name__}: {exc})", "broken_response"
            except _NotUtf8 as exc:
                self._count("failures")
                raise self._error(f"POST {url} failed: {exc}", "not_utf8", False) from None
            except json.JSONDecodeError as exc:
                last, code = f"response is not JSON ({exc})", "not_json"
            if attempt < self.policy.max_retries:
                self._sleep(self.policy.delay(attempt, retry_after))
        self._count("failures")
        raise self._error(f"POST {url} failed after {self.policy.max_retries} retries: {last}", code, True)

    def _detail(self, exc: urllib.error.HTTPError) -> str:
        """The start of an error body, credentials removed before it is cut (a key cut in half would still show)."""
        try:
            raw = exc.read()  # fetch read at most 64 KiB of it
        except (OSError, http.client.HTTPException):
            return "(the error body could not be read)"
        return " ".join(self.redact(raw.decode("utf-8", "replace")).split())[:DETAIL_CHARS]


def _retryable(status: int) -> bool:
    """Statuses worth retrying (and so transient once the retries are spent): 429 and 5xx."""
    return status == 429 or status >= 500


def _failure_code(reason: object) -> str:
    """The code of a failure to get any response: ``timeout`` or ``connection``."""
    return "timeout" if isinstance(reason, TimeoutError) else "connection"


class _NotUtf8(ValueError):
    """A response body that is not UTF-8 (so not JSON either)."""


def _utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _NotUtf8(f"the response is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None


def map_bounded(fn: Callable[[T], R], items: Sequence[T], concurrency: int) -> list[R]:
    """``[fn(x) for x in items]`` with at most ``concurrency`` calls in flight, order kept."""
    if concurrency <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        return list(pool.map(fn, items))
