"""JSON over HTTP POST with timeouts, retries with exponential backoff, and bounded concurrency.

Retried: HTTP 429 and 5xx (``Retry-After`` is honoured, up to the backoff cap), connection
errors and timeouts. Not retried: other 4xx (a bad request stays bad). Every attempt, retry and
final failure is counted in the caller's counters, so a manifest can say how flaky the endpoint
was. The API key goes in the Authorization header only: it is never part of a message.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from threading import Lock
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class EndpointError(RuntimeError):
    """A request that failed for good (after its retries, or with a non-retryable status)."""


@dataclass(frozen=True)
class RetryPolicy:
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0

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
        self.policy = policy
        self.counters = counters
        self._lock = Lock()
        self._sleep = sleep

    def _count(self, name: str) -> None:
        with self._lock:
            self.counters[name] += 1

    def get_once(self, path: str, timeout_s: float) -> dict[str, Any]:
        """One GET without retries or counting (a side question such as ``/models``, not the work)."""
        url = f"{self.base_url}{path}"
        try:
            request = urllib.request.Request(url, headers=self._headers, method="GET")
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise EndpointError(f"GET {url} failed: HTTP {exc.code}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError, json.JSONDecodeError) as exc:
            raise EndpointError(f"GET {url} failed: {type(exc).__name__}: {getattr(exc, 'reason', exc)}") from exc

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        data = json.dumps(body).encode("utf-8")
        last = ""
        for attempt in range(self.policy.max_retries + 1):
            if attempt:
                self._count("retries")
            self._count("requests")
            retry_after = None
            try:
                request = urllib.request.Request(url, data=data, headers=self._headers, method="POST")
                with urllib.request.urlopen(request, timeout=self.policy.timeout_s) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:300]
                last = f"HTTP {exc.code}: {detail}"
                if exc.code != 429 and exc.code < 500:
                    self._count("failures")
                    raise EndpointError(f"POST {url} failed: {last}") from exc
                retry_after = exc.headers.get("Retry-After")
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                last = f"timed out after {self.policy.timeout_s:g} s" if isinstance(reason, TimeoutError) \
                    else f"{type(reason).__name__}: {reason}"
            except json.JSONDecodeError as exc:
                last = f"response is not JSON ({exc})"
            if attempt < self.policy.max_retries:
                self._sleep(self.policy.delay(attempt, retry_after))
        self._count("failures")
        raise EndpointError(f"POST {url} failed after {self.policy.max_retries} retries: {last}")


def map_bounded(fn: Callable[[T], R], items: Sequence[T], concurrency: int) -> list[R]:
    """``[fn(x) for x in items]`` with at most ``concurrency`` calls in flight, order kept."""
    if concurrency <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        return list(pool.map(fn, items))
