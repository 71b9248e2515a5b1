"""Shared pieces of the bench scripts: real captions, one-core pinning, peak-memory sampling."""
from __future__ import annotations

import os
import threading
import time
from importlib import resources

import numpy as np
import pandas as pd
import psutil
import pyarrow as pa


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


def pin_one_core() -> None:
    """Measure per-core rates honestly: one CPU for this process and for Arrow's thread pool."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)


class PeakRSS:
    """Peak resident memory of this process and all its descendants (Ray workers included)."""

    def __init__(self, interval_s: float = 0.1):
        self.interval_s, self.peak, self._stop = interval_s, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        me = psutil.Process()
        total = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
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
