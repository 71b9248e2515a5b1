"""Shared fixtures: one local Ray for the whole session, the shipped lexicons, real captions."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray with more logical CPUs than cores, so no stage can starve another of a slot."""
    import ray

    from jobs.common.ray_start import init_ray

    if not ray.is_initialized():
        # address="local": a new local Ray even when a `ray start` cluster (or its stale address file) is on this machine
        ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
    init_ray(None)  # the jobs' own entry point, which reuses the running instance
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def paper_lexicon():
    from connectors.geo.lexicon import load_lexicon

    return load_lexicon("paper")


@pytest.fixture(scope="session")
def extended_lexicon():
    from connectors.geo.lexicon import load_lexicon

    return load_lexicon("extended")


@pytest.fixture(scope="session")
def real_captions() -> list[str]:
    """The shipped COCO and CC3M captions (40,847 real captions)."""
    root = resources.files("connectors") / "samples"
    coco = pd.read_csv(str(root / "coco2017_val_captions.csv"))["caption"]
    cc3m = pd.read_csv(str(root / "cc3m_val_captions.tsv"), sep="\t", header=None, quoting=3)[0]
    return pd.concat([coco, cc3m]).astype(str).tolist()
