"""Shared pieces of the bench scripts: real captions (and corpora of them), one-core pinning, peak-memory sampling."""
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


class PeakRSS:
    """Peak resident memory of this process and all its descendants (Ray workers included).

    ``peak``: of all of them together; ``driver``: of this process alone; ``others``: of its
    descendants together (a local Ray's raylet, GCS, object store and workers), each a peak of its own.
    """

    def __init__(self, interval_s: float = 0.1):
        self.interval_s, self.peak, self.driver, self.others = interval_s, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> tuple[int, int]:
        me = psutil.Process()
        driver, others = me.memory_info().rss, 0
        for p in me.children(recursive=True):
            try:
                others += p.memory_info().rss
            except psutil.Error:
                pass
        return driver, others

    def _run(self) -> None:
        while not self._stop.is_set():
            driver, others = self._sample()
            self.peak = max(self.peak, driver + others)
            self.driver, self.others = max(self.driver, driver), max(self.others, others)
            time.sleep(self.interval_s)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


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
