"""Progress people can trust: rows done of rows expected, rate and ETA, printed and recorded.

Ray's own progress bars count blocks and can sit at 99% for minutes; this counts *rows of the
input*, with the expected total taken from Parquet footers when every shard has one.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO


def _fmt_eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


@dataclass
class Progress:
    job: str
    expected_rows: int | None
    expected_shards: int
    stream: TextIO = sys.stderr
    interval_s: float = 2.0
    rows: int = 0
    shards: int = 0
    started: float = field(default_factory=time.monotonic)
    samples: list[dict] = field(default_factory=list)
    resumed_rows: int = 0  # rows finished by an earlier attempt: shown as done, not counted in the rate
    resumed_shards: int = 0
    _last: float = 0.0

    def resume(self, rows: int, shards: int = 1) -> None:
        self.rows += rows
        self.shards += shards
        self.resumed_rows += rows
        self.resumed_shards += shards

    def start(self) -> None:
        """Start the clock when the scan starts (after Ray start-up), so the rate is the scan's."""
        self.started = time.monotonic()

    def update(self, rows: int, shards: int = 1) -> None:
        self.rows += rows
        self.shards += shards
        now = time.monotonic()
        if now - self._last >= self.interval_s or self.shards == self.expected_shards:
            self._last = now
            self.emit(now)

    def rate(self, now: float | None = None) -> float:
        elapsed = (now or time.monotonic()) - self.started
        return (self.rows - self.resumed_rows) / elapsed if elapsed > 0 else 0.0

    def emit(self, now: float | None = None) -> None:
        now = now or time.monotonic()
        rate = self.rate(now)
        if self.expected_rows:
            pct = 100.0 * self.rows / self.expected_rows
            eta = (self.expected_rows - self.rows) / rate if rate > 0 else float("nan")
            done = f"{self.rows:,}/{self.expected_rows:,} rows ({pct:.1f}%)"
            eta_s = _fmt_eta(eta) if eta == eta else "?"
        else:
            done = f"{self.rows:,} rows (total unknown until read)"
            left, run = self.expected_shards - self.shards, self.shards - self.resumed_shards
            eta_s = _fmt_eta(left * (now - self.started) / run) if run else "?"
        self.samples.append({"t_s": round(now - self.started, 3), "rows": self.rows, "shards": self.shards})
        print(
            f"[{self.job}] {done} · shards {self.shards}/{self.expected_shards} · {rate:,.0f} rows/s · ETA {eta_s}",
            file=self.stream,
            flush=True,
        )
