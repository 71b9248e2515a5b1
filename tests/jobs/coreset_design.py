"""A small HT-Coreset design on disk and one model's answers to it: shared by the estimate and traces tests.

40 targets: ids 0-5 positive (groups a, a, a, b, b, c), ids 6 and 7 hard negatives (a census at
budget 2x); the model "llm" answers every design row, with each failure kind once.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from audit.coreset.design import DesignConfig, build_design
from jobs.cli import main

TAU = 0.5
GROUPS = {0: "a", 1: "a", 2: "a", 3: "b", 4: "b", 5: "c"}
# the model "llm" on the design rows: (prediction, named group, raw response); None = empty cell / null
LLM = {
    0: (1, "a", "Yes.\nTypology: a"),              # correct
    1: (1, "b", "yes, b"),                         # wrong_group
    2: (0, None, "no"),                            # under_prediction
    3: (1, " b ", "yes b"),                        # correct (spaces around the group ignored)
    4: (None, None, None),                         # no_response
    5: (1, None, "yes"),                           # wrong_group: no group named
    6: (1, "a", "yes a"),                          # over_prediction
    7: (None, None, "It depends on the amounts"),  # unparsable
}
RUBRIC = """description: AML reasoning checks
steps:
  - name: amount
    pattern: '\\$\\s?\\d'
  - name: typology
    pattern: '\\b(fan-in|cycle|smurfing)\\b'
  - name: rule
    pattern: 'RULE \\d+'
    ignore_case: false
"""


def write_design(root: Path, with_group: bool = True) -> tuple[str, pd.DataFrame]:
    """A build run directory written from the in-memory build (what 'coreset build' writes)."""
    ids = np.arange(40)
    score = np.where(ids < 6, 0.9, 0.02 + 0.004 * ids)
    score[6], score[7] = 0.4, 0.35
    design, manifest = build_design(ids, (ids < 6).astype(int), score, DesignConfig(tau=TAU, seed=7))
    design["score"] = score[design["id"]]
    if with_group:
        design["group"] = [GROUPS.get(int(i)) for i in design["id"]]
    (root / "data" / "design").mkdir(parents=True)  # the run-data layout a build writes (connectors.runs.tables)
    design.rename(columns={"group": "group_value"}).to_parquet(root / "data" / "design" / "part-0.parquet", index=False)
    (root / "design.json").write_text(json.dumps(manifest.to_dict()))
    return str(root), design


def llm_rows(ids: pd.Series) -> pd.DataFrame:
    rows = [LLM.get(int(i), (0, None, "no")) for i in ids]
    return pd.DataFrame({"id": ids.to_numpy(), "prediction": pd.array([r[0] for r in rows], dtype="Int64"),
                         "named_group": [r[1] for r in rows], "raw": [r[2] for r in rows]})


def load_run(run_dir: Path) -> tuple[dict, dict]:
    return json.loads((run_dir / "summary.json").read_text()), json.loads((run_dir / "manifest.json").read_text())


def cli_error(args: list[str], capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


