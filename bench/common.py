"""Shared pieces of the bench scripts: real captions (and corpora of them), one-core pinning, CPU and peak-memory readings."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources

import numpy as np
import pandas as pd
import psutil
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def real_captions() -> list[str]:
    """The shipped COCO 2017 val and CC3M val captions (40,847 real captions)."""
    root = resources.files("connectors") / "samples"
    coco = pd.read_csv(str(root / "coco2017_val_captions.csv"))["caption"]
    cc3m = pd.read_csv(str(root / "cc3m_val_captions.tsv"), sep="\t", header=None, quoting=3)[0]
    return pd.concat([coco, cc3m]).astype(str).tolist()


def repeated_shuffled(n: int, seed: int = 2026) -> pa.Array:
    """``n`` real captions: the shipped ones repeated and shuffled (seeded)."""
    caps = real_captions()
    idx = np.random.default_rng(seed).integers(0, len(caps), n)
    return pa.array([caps[i] for i in idx], pa.string())


_TLDS = ("com", "co.uk", "jp", "de", "fr")
_HEX = np.array([f"{i:02x}".encode() for i in range(256)], dtype="S2")


def write_captions_parquet(path: str, rows: int, seed: int, captions: pa.Array | None = None,
                           row_group_rows: int = 250_000) -> None:
    """One DataComp-shaped metadata file (``uid``, ``url``, ``text``) of ``rows`` real captions.

    Built with Arrow and numpy only (a take over the shipped captions, URLs joined from a few hundred
    hosts and the row number, uids as hex of random bytes), so a 100M-row corpus is minutes of
    writing, not hours of Python strings. zstd, no dictionary encoding: the captions' repetition
    must not make the file cheaper to read than a real one.
    """
    caps = captions if captions is not None else pa.array(real_captions(), pa.string())
    rng = np.random.default_rng(seed)
    text = pc.take(caps, pa.array(rng.integers(0, len(caps), rows)))
    hosts = pa.array([f"http://img{k}.example.{_TLDS[k % len(_TLDS)]}/" for k in range(485)], pa.string())
    number = pc.cast(pa.array(np.arange(rows, dtype=np.int64)), pa.string())
    url = pc.binary_join_element_wise(pc.take(hosts, pa.array(np.arange(rows) % len(hosts))), number, pa.scalar(".jpg"), "")
    uid = pa.array(np.ascontiguousarray(_HEX[rng.integers(0, 256, (rows, 16), dtype=np.uint8)]).view("S32").ravel()).cast(pa.string())
    pq.write_table(pa.table({"uid": uid, "url": url, "text": text}), path, row_group_size=row_group_rows,
                   use_dictionary=False, compression="zstd")


def pin_one_core(core: int | None = None) -> None:
    """Measure per-core rates honestly: one CPU (``core``, else the first allowed) for this process
    and for Arrow's thread pool."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0] if core is None else core})
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)


@contextmanager
def one_core() -> Iterator[None]:
    """``pin_one_core`` for a block, then every CPU again: a bench that then starts Ray must not hand
    its pinning down to the Ray processes it spawns."""
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    threads, io_threads = pa.cpu_count(), pa.io_thread_count()
    pin_one_core()
    try:
        yield
    finally:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
        pa.set_cpu_count(threads)
        pa.set_io_thread_count(io_threads)


class ProcessWatch:
    """CPU seconds and peak resident memory of this process and its descendants (a local Ray's raylet,
    GCS, object store and workers), read from the kernel by one thread once a second.

    Why so seldom: the bench shares the cores it measures. Walking every process of the machine ten
    times a second (``psutil``'s ``children(recursive=True)`` reads every ``/proc/*/stat``) cost ~5 ms a
    sample, 5% of a core on the 2-core machine class, charged to the driver and taken from the workers.
    The peaks need no fast sampling: the kernel keeps each process's own high-water mark (``VmHWM``);
    descendants are looked for every ``rescan_s`` and processes already found are read directly.

    ``driver``: this process's peak; ``others``: the sum of its descendants' peaks (each its own, so an
    upper bound of their simultaneous peak); ``peak``: both together. ``samples``: (monotonic time,
    CPU seconds of this process, of Ray's workers (``ray::`` processes), of Ray's own processes),
    exited processes counted with their last reading.
    """

    def __init__(self, interval_s: float = 1.0, rescan_s: float = 5.0):
        self.interval_s, self.rescan_s = interval_s, rescan_s
        self.driver = self.others = self.peak = 0  # bytes, set when the watch ends
        self.samples: list[tuple[float, float, float, float]] = []
        self._me = psutil.Process()
        self._procs: dict[int, tuple[psutil.Process, str]] = {}  # pid -> (process, "workers" | "ray")
        self._last: dict[int, tuple[str, float, int]] = {}  # pid -> (kind, CPU seconds, peak RSS bytes)
        self._scanned = float("-inf")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        now = time.monotonic()
        if now - self._scanned >= self.rescan_s:
            self._scanned = now
            for p in self._me.children(recursive=True):
                if p.pid not in self._procs:
                    try:
                        kind = "workers" if " ".join(p.cmdline()[:1]).startswith("ray::") else "ray"
                    except psutil.Error:
                        continue
                    self._procs[p.pid] = (p, kind)
        for pid, (p, kind) in list(self._procs.items()):
            try:
                cpu = p.cpu_times()
                self._last[pid] = (kind, cpu.user + cpu.system, max(_peak_rss(p), self._last.get(pid, ("", 0, 0))[2]))
            except psutil.Error:
                del self._procs[pid]  # exited: its last reading stays in _last
        own = self._me.cpu_times()
        totals = {"workers": 0.0, "ray": 0.0}
        for kind, seconds, _ in self._last.values():
            totals[kind] += seconds
        self.samples.append((now, own.user + own.system, totals["workers"], totals["ray"]))

    def cpu_between(self, start: float, stop: float) -> dict[str, float]:
        """CPU seconds of each kind spent between two monotonic times (linear between samples)."""
        t = np.array([s[0] for s in self.samples])
        return {kind: float(np.interp(stop, t, [s[i] for s in self.samples]) - np.interp(start, t, [s[i] for s in self.samples]))
                for i, kind in ((1, "driver"), (2, "workers"), (3, "ray"))}

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval_s):
                return

    def __enter__(self) -> ProcessWatch:
        try:  # this process's peak counts from here: an earlier phase of the same bench is not this one's
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")
        except OSError:
            pass
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()
        self.driver = _peak_rss(self._me)
        self.others = sum(peak for _, _, peak in self._last.values())
        self.peak = self.driver + self.others


def _peak_rss(p: psutil.Process) -> int:
    """A process's own peak resident memory (Linux ``VmHWM``; elsewhere its current RSS)."""
    try:
        with open(f"/proc/{p.pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return p.memory_info().rss


def random_llama(config, device: str, dtype):
    """A ``LlamaForCausalLM`` with seeded random weights built directly on ``device`` in ``dtype``
    (no download, no float32 copy of an 8B model on the host first)."""
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            return LlamaForCausalLM(config).eval()
    finally:
        torch.set_default_dtype(default)
