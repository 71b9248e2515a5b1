"""A run root with a history, the way a team's root looks after a few weeks: what the index of runs
must stay readable for.

31 real runs of four jobs, none of them started on Ray: 24 trace audits of 14 models alternating
between two sample sizes (two configurations, a per-model trend with count metrics), two
contamination re-analyses of the 12-model reference outcomes, two geo runs of the shipped captions
with different lexicon profiles, two documentation audits and one that stopped with a long error
(a malformed card over ``--max-skipped 0``).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from jobs.common.cli.config import RunOptions
from tests.jobs.coreset_design import RUBRIC

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MODELS = [f"org/model-{chr(ord('a') + i)}-{7 * (i + 1)}b-instruct" for i in range(14)]
TRACE_RUNS = 24


def _traces(inputs: Path, out: str) -> None:
    from jobs.traces.config import TracesConfig
    from jobs.traces.run import run

    (inputs / "rubric.yaml").write_text(RUBRIC)
    texts = ["Saw $9,000 moved in a cycle", "Looks fine", "Fan-in per RULE 7", "$ 5 to a cycle", "nothing", "RULE 3 applies"]
    rows = [{"id": i, "model": m, "verdict": "correct" if (i + k) % 2 else "incorrect", "trace": texts[(i + k) % len(texts)]}
            for k, m in enumerate(MODELS) for i in range(4 + k % 3)]
    pd.DataFrame(rows).to_csv(inputs / "traces.csv", index=False)
    for i in range(TRACE_RUNS):
        cfg = TracesConfig(rubric=str(inputs / "rubric.yaml"), traces=[str(inputs / "traces.csv")], verdict_column="verdict",
                           per_outcome=2 + i % 2)
        run(cfg, RunOptions(out=out, log_level="warning"))


def _contamination(inputs: Path, out: str) -> None:
    from jobs.contamination.config import ContaminationConfig
    from jobs.contamination.run import run
    from tests.fixtures.contamination.reference_study import reference_outcomes

    reference_outcomes().to_parquet(inputs / "outcomes.parquet")
    for _ in range(2):
        run(ContaminationConfig(outcomes=[str(inputs / "outcomes.parquet")], bootstrap=20), RunOptions(out=out, log_level="warning"))


def _geo(out: str) -> None:
    from jobs.geo.config import GeoConfig
    from jobs.geo.run import run

    for profile in ("paper", "extended"):
        run(GeoConfig(limit=300, bootstrap=0, lexicon_profile=profile), RunOptions(out=out, executor="local", log_level="warning"))


def _docs(inputs: Path, out: str) -> None:
    from jobs.docs.config import DocsConfig
    from jobs.docs.run import run

    cards = inputs / "cards"
    shutil.copytree(FIXTURES / "docs" / "cards", cards)
    for criteria in (None, ["annotator_visibility", "locale_assumptions"]):
        cfg = DocsConfig(cards=[str(cards)], **({"criteria": criteria} if criteria else {}))
        run(cfg, RunOptions(out=out, executor="local", log_level="warning"))
    shutil.copy(FIXTURES / "docs" / "malformed" / "malformed_card.md", cards / "malformed_card.md")
    try:
        run(DocsConfig(cards=[str(cards)]), RunOptions(out=out, executor="local", max_skipped=0, log_level="warning"))
    except Exception as exc:  # noqa: BLE001 -- the stop is the point: a failed run with a long error in the history
        assert "over --max-skipped 0" in str(exc), exc
    else:
        raise AssertionError("the docs run over --max-skipped 0 should have stopped")


def build_history(root: Path) -> Path:
    """The run root (``root / "runs"``) with its index written after the last run."""
    inputs = root / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    out = str(root / "runs")
    _traces(inputs, out)
    _contamination(inputs, out)
    _geo(out)
    _docs(inputs, out)
    from jobs.common.pages.index import write_index

    write_index(out)  # the failed run was the last: no commit refreshed the index after it
    return root / "runs"
