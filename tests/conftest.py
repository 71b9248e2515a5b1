"""Shared fixtures: one local Ray for the whole session, the shipped lexicons, real captions."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# A test that uses one of these fixtures needs what the marker names; it gets the marker here, so
# the unit tier (scripts/test --fast: none of these markers) never starts it. Tests that need one
# without such a fixture (a CLI run in a subprocess that starts Ray) carry the marker themselves.
FIXTURE_MARKERS = {"ray_local": "ray", "sample_runs": "ray", "head": "ray", "s3": "s3", "s3_env": "s3", "browser": "browser",
                   "built_paper": "slow", "built_extended": "slow"}  # the last two build lexicons from their sources


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in set(FIXTURE_MARKERS) & set(getattr(item, "fixturenames", ())):
            item.add_marker(FIXTURE_MARKERS[fixture])
    # The order in which pytest-xdist hands out test files (scripts/test passes --no-loadscope-reorder to keep it):
    # xdist's own, the files with the most tests first, except that a file with a test that mostly waits on a fixed
    # timeout (marker ``waits``) goes first and a file of the longest end-to-end runs (marker ``longest``) second.
    # Why: in xdist's order such a one-test file came last, and its worker then waited 30 s on an idle machine, or ran
    # the lost-node tests for 80 s, while the other had nothing left; started first, the wait overlaps the other
    # worker's work, and the longest file runs beside the wait on the core it leaves idle. (Ordering every end-to-end
    # file first was measured: two at once crowd two cores, no faster.)
    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    tests_in: dict[str, int] = {}
    first: dict[str, int] = {}
    for item in items:
        tests_in[file_of(item)] = tests_in.get(file_of(item), 0) + 1
        if item.get_closest_marker("waits"):
            first[file_of(item)] = 0
        elif item.get_closest_marker("longest"):
            first.setdefault(file_of(item), 1)
    items.sort(key=lambda item: (first.get(file_of(item), 2), -tests_in[file_of(item)]))  # stable: in-file order kept


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray with more logical CPUs than cores, so no stage can starve another of a slot."""
    import ray

    from jobs.common.runtime.ray_start import init_ray

    for attempt in range(3):  # on a busy machine a local Ray can miss its start-up deadline: that is the machine
        if ray.is_initialized():
            break
        try:
            # address="local": a new local Ray even when a `ray start` cluster (or its stale address file) is on this machine
            ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
        except Exception as exc:  # noqa: BLE001 -- only Ray's start-up timeout is retried
            ray.shutdown()
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise
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
