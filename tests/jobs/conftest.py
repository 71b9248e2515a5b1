"""Fixtures of the job tests."""
from __future__ import annotations

import pandas as pd
import pytest

from tests.jobs.coreset_design import write_design


@pytest.fixture()
def design(tmp_path) -> tuple[str, pd.DataFrame]:
    """A small coreset build run directory and its design rows (see ``tests/jobs/coreset_design.py``)."""
    return write_design(tmp_path / "build")


@pytest.fixture(scope="session")
def sample_runs(ray_local, tmp_path_factory) -> dict:
    """One small two-input run of every job in one run root (see ``tests/jobs/sample_runs.py``)."""
    from tests.jobs.sample_runs import build_sample_runs

    return build_sample_runs(tmp_path_factory.mktemp("sample_runs"))


@pytest.fixture(scope="session")
def history_runs(tmp_path_factory):
    """A run root with 31 runs of four jobs, none on Ray (see ``tests/jobs/history_runs.py``)."""
    from tests.jobs.history_runs import build_history

    return build_history(tmp_path_factory.mktemp("history"))
