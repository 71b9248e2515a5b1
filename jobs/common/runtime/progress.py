"""Progress people can trust: rows done of rows expected, rate and ETA, printed and recorded.

Ray's own progress bars count blocks and can sit at 99% for minutes; this counts *rows of the
input*. The expected total is known before the scan: Parquet footers give exact counts, and other
formats an expectation from their bytes (``connectors.io.row_counts``: lines of CSV/JSONL, samples of
a WebDataset tar), shown as ``≈`` until every such file is done; each finished shard replaces its
expectation by its real count, so the last line always has done = expected. Rows of shards still
running come from the workers' own counters (``live``), so a single large file moves too.

On a terminal the line is a bar redrawn in place; otherwise (a log, CI) plain lines every two
seconds. Every line is also a sample in the manifest. ``AnswerProgress`` does the same for a model
stage: answers back of answers expected, with cache hits against calls the model made.
"""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TextIO

BAR = 24


def _fmt_eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600:d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _is_tty(stream: TextIO | None, tty: bool | None) -> bool:
    """Whether lines go to a terminal (a bar redrawn in place) or to a log (plain lines)."""
    if tty is not None:
        return tty
    if stream is None:
        from jobs.common.runtime.ray_start import stderr_is_tty

        return stderr_is_tty()
    return bool(getattr(stream, "isatty", lambda: False)())


def _shown(head: str, text: str, fraction: float, tty: bool) -> str:
    """One progress line: on a terminal a bar, redrawn in place; otherwise the plain text."""
    if tty:
        filled = int(round(BAR * min(fraction, 1.0)))
        return f"\r{head} |{'█' * filled}{'·' * (BAR - filled)}| {text}\033[K"
    return f"{head} {text}"


@dataclass
class Progress:
    """Counters of one scan; ``expected_rows`` is the sum over shards whose size is known or estimated."""

    job: str
    expected_rows: int | None
    expected_shards: int
    stream: TextIO | None = None  # None: the current sys.stderr, looked up when printing
    interval_s: float = 2.0
    unknown_shards: int = 0  # shards whose size nobody could tell before reading them
    estimated_shards: int = 0  # shards whose size is an estimate (lines, samples), until they finish
    rows: int = 0
    shards: int = 0
    live_rows: int = 0  # rows read so far by shards still running
    started: float = field(default_factory=time.monotonic)
    samples: list[dict] = field(default_factory=list)
    resumed_rows: int = 0  # rows finished by an earlier attempt: shown as done, not counted in the rate
    resumed_shards: int = 0
    quiet: bool = False  # --log-level warning/error: record samples, print nothing
    tty: bool | None = None  # None: ask the stream
    _last: float = field(default_factory=time.monotonic)  # first line after one interval, not at the first shard
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _drawn: bool = False

    def __post_init__(self) -> None:
        if self.expected_rows is None and not self.unknown_shards:
            self.unknown_shards = self.expected_shards  # the old contract: no total means no shard is known
            self.expected_rows = 0

    # -- counting ---------------------------------------------------------------------------------
    def resume(self, rows: int, shards: int = 1, planned: int | None = None, estimated: bool = False) -> None:
        self._finish(rows, shards, planned, estimated)
        self.resumed_rows += rows
        self.resumed_shards += shards

    def start(self) -> None:
        """Start the clock when the scan starts (after Ray start-up), so the rate is the scan's, and record
        what is expected as the first sample (printed from the first interval on: a job that stops at once
        prints its error alone)."""
        self.started = self._last = time.monotonic()
        with self._lock:
            self.samples.append(self._line(self.started)[1])

    def update(self, rows: int, shards: int = 1, planned: int | None = None, estimated: bool = False) -> None:
        """A shard finished with ``rows``; ``planned`` is what it was expected to hold (None: one of the
        shards of unknown size, or, when there are none, as planned)."""
        with self._lock:
            self._finish(rows, shards, planned, estimated)
            now = time.monotonic()
            if now - self._last >= self.interval_s or self.shards == self.expected_shards:
                self._last = now
                self._emit(now)

    def live(self, rows: int) -> None:
        """Rows read so far by the shards still running (their workers' counters)."""
        with self._lock:
            self.live_rows = rows
            now = time.monotonic()
            if now - self._last >= self.interval_s:
                self._last = now
                self._emit(now)

    def _finish(self, rows: int, shards: int, planned: int | None, estimated: bool) -> None:
        self.rows += rows
        self.shards += shards
        if planned is None and self.unknown_shards:
            self.unknown_shards = max(self.unknown_shards - shards, 0)
            self.expected_rows = (self.expected_rows or 0) + rows
        elif planned is not None:
            self.expected_rows = (self.expected_rows or 0) + rows - planned  # the real count replaces the plan
        if estimated:
            self.estimated_shards = max(self.estimated_shards - shards, 0)

    def rate(self, now: float | None = None) -> float:
        elapsed = (now or time.monotonic()) - self.started
        return (self.rows + self.live_rows - self.resumed_rows) / elapsed if elapsed > 0 else 0.0

    # -- output -----------------------------------------------------------------------------------
    def emit(self, now: float | None = None) -> None:
        with self._lock:
            self._emit(now or time.monotonic())
            if self._drawn:
                print(file=self.stream or sys.stderr, flush=True)  # the bar's line ends here
                self._drawn = False

    def _line(self, now: float) -> tuple[str, dict]:
        done = self.rows + (self.live_rows if self.shards < self.expected_shards else 0)
        rate = self.rate(now)
        total = self.expected_rows or 0
        sample = {"t_s": round(now - self.started, 3), "rows": done, "shards": self.shards,
                  "expected_rows": total if not self.unknown_shards else None, "estimated": self.estimated_shards > 0}
        if self.unknown_shards:
            what = f"{done:,} of ≥ {max(total, done):,} rows (+{self.unknown_shards} shard(s) of unknown size)"
            run = self.shards - self.resumed_shards
            eta = _fmt_eta((self.expected_shards - self.shards) * (now - self.started) / run) if run else "?"
            fraction = self.shards / self.expected_shards if self.expected_shards else 1.0
        else:
            total = max(total, done)
            fraction = done / total if total else 1.0
            approx = "≈" if self.estimated_shards else ""
            what = f"{done:,}/{approx}{total:,} rows ({100 * fraction:.1f}%)"
            eta = _fmt_eta((total - done) / rate) if rate > 0 else "?"
            if done >= total and self.shards == self.expected_shards:
                eta = "done"
        tail = f"shards {self.shards}/{self.expected_shards} · {rate:,.0f} rows/s · ETA {eta}"
        return _shown(f"[{self.job}]", f"{what} · {tail}", fraction, self._is_tty()), sample

    def _is_tty(self) -> bool:
        return _is_tty(self.stream, self.tty)

    def _emit(self, now: float) -> None:
        line, sample = self._line(now)
        if self.samples and {k: self.samples[-1][k] for k in ("rows", "shards", "expected_rows")} == \
                {k: sample[k] for k in ("rows", "shards", "expected_rows")}:
            return  # nothing new since the last line (the final update and the closing emit)
        self.samples.append(sample)
        if self.quiet:
            return
        tty = self._is_tty()
        print(line, file=self.stream or sys.stderr, end="" if tty else "\n", flush=True)
        self._drawn = tty


@dataclass
class AnswerProgress:
    """Progress of one model stage: answers back of answers expected, how many the response cache
    gave (cache hits) and how many the model computed (calls), the unusable ones, rate and ETA.

    The driver counts each batch as it comes back from the stage's actor pool
    (``jobs.common.models.answers.collect``); lines and samples as ``Progress`` makes them for a scan.
    """

    job: str
    what: str  # "model hf-tiny", "router calls of hf:…"
    expected: int
    stream: TextIO | None = None
    interval_s: float = 2.0
    quiet: bool = False
    tty: bool | None = None
    done: int = 0
    cache_hits: int = 0
    unusable: int = 0
    started: float = field(default_factory=time.monotonic)
    samples: list[dict] = field(default_factory=list)
    _last: float = field(default_factory=time.monotonic)
    _drawn: bool = False
    _first: tuple[float, int] | None = None  # when the first batch came back, and its answers

    def update(self, answers: int, cache_hits: int, unusable: int) -> None:
        """A batch of ``answers`` came back; a line when the interval has passed."""
        if self._first is None:
            self._first = (time.monotonic(), answers)
        self.done += answers
        self.cache_hits += cache_hits
        self.unusable += unusable
        now = time.monotonic()
        if now - self._last >= self.interval_s:
            self._last = now
            self._emit(now)

    def emit(self) -> None:
        """The stage's last line (always printed, so a log shows what the stage did)."""
        self._emit(time.monotonic())
        if self._drawn:
            print(file=self.stream or sys.stderr, flush=True)
            self._drawn = False

    def rate(self, now: float) -> float:
        """Answers per second since the first batch came back (the model's loading is not its pace),
        over the whole stage until a second one has."""
        if self._first is not None and now > self._first[0] and self.done > self._first[1]:
            return (self.done - self._first[1]) / (now - self._first[0])
        return self.done / (now - self.started) if now > self.started else 0.0

    def _emit(self, now: float) -> None:
        elapsed = now - self.started
        rate = self.rate(now)
        total = max(self.expected, self.done)
        fraction = self.done / total if total else 1.0
        eta = "done" if self.done >= total else (_fmt_eta((total - self.done) / rate) if rate > 0 else "?")
        sample = {"t_s": round(elapsed, 3), "answers": self.done, "expected": total, "cache_hits": self.cache_hits,
                  "calls": self.done - self.cache_hits, "unusable": self.unusable}
        if self.samples and self.samples[-1]["answers"] == self.done:
            return
        self.samples.append(sample)
        if self.quiet:
            return
        text = (f"{self.done:,}/{total:,} answers ({100 * fraction:.1f}%) · cache hits {self.cache_hits:,} · calls "
                f"{self.done - self.cache_hits:,} · unusable {self.unusable:,} · {rate:,.1f} answers/s · ETA {eta}")
        tty = _is_tty(self.stream, self.tty)
        print(_shown(f"[{self.job}] {self.what}:", text, fraction, tty), file=self.stream or sys.stderr,
              end="" if tty else "\n", flush=True)
        self._drawn = tty


@dataclass
class Stages:
    """Progress of work that comes in a few long steps (a lexicon build): a line as each step starts,
    with the time the steps before took, and one when all are done. Called with a step's description."""

    prog: str
    quiet: bool = False
    stream: TextIO | None = None  # None: the current sys.stderr
    started: float = field(default_factory=time.monotonic)
    count: int = 0

    def _print(self, text: str) -> None:
        if not self.quiet:
            print(f"{self.prog}: {text}", file=self.stream or sys.stderr, flush=True)

    def __call__(self, what: str) -> None:
        self.count += 1
        self._print(f"step {self.count}: {what} ({time.monotonic() - self.started:.1f} s so far)")

    def note(self, text: str) -> None:
        self._print(text)

    def done(self) -> None:
        if self.count:
            self._print(f"done in {time.monotonic() - self.started:.1f} s")
