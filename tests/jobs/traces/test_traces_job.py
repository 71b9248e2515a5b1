"""benchaudit traces: rubric pass rates by verdict, the outcome-stratified sample, rater agreement, clear errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.stats.draws import hash_keys
from jobs.cli import main
from tests.jobs.coreset_design import RUBRIC, cli_error, llm_rows, load_run


def _write_traces(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "rubric.yaml").write_text(RUBRIC)
    pd.DataFrame({"id": [1, 2, 3, 4, 5], "model": "m1", "verdict": ["correct", "Correct", "incorrect", "INCORRECT", "incorrect"],
                  "trace": ["Saw $9,000 moved\nin a cycle.", "Pattern: Fan-In. Per RULE 7.", "Looks fine, rule 7 maybe", None,
                            "$ 5 to a cycle"]}).to_csv(tmp_path / "traces_m1.csv", index=False)
    pd.DataFrame({"id": [1, 2], "model": "m2", "verdict": [True, False],
                  "trace": ["cycle of $100", "RULE 3 applies"]}).to_json(tmp_path / "traces_m2.jsonl", orient="records", lines=True)
    return tmp_path / "rubric.yaml", tmp_path / "traces_m1.csv"


def test_traces_pass_rates_sample_and_agreement_by_hand(tmp_path):
    rubric, _ = _write_traces(tmp_path)
    pd.DataFrame({"id": [1, 2, 3, 1], "model": ["m1", "m1", "m1", "m2"], "judge_a": ["y", "y", "n", "y"],
                  "judge_b": ["y", "y", "n", "n"], "judge_c": ["y", "n", "n", "n"], "note": "x"}).to_csv(
        tmp_path / "ratings.csv", index=False)
    args = ["traces", "--rubric", str(rubric), "--traces", str(tmp_path / "traces_m1.csv"), "--traces",
            str(tmp_path / "traces_m2.jsonl"), "--verdict-column", "verdict", "--per-outcome", "1", "--seed", "5",
            "--ratings", str(tmp_path / "ratings.csv"), "--rater-columns", "judge_a,judge_b,judge_c", "--out", str(tmp_path / "runs")]
    assert main([*args, "--run-id", "t"]) == 0
    run_dir = tmp_path / "runs" / "traces" / "t"
    summary, manifest = load_run(run_dir)
    assert summary["models"] == {"m1": {"traces": 5, "correct": 2, "incorrect": 3}, "m2": {"traces": 2, "correct": 1, "incorrect": 1}}
    audit = {(r["model"], r["step"]): r for r in summary["table"]}
    # m1 correct: 1 ($, cycle), 2 (Fan-In, RULE 7); incorrect: 3 ('rule 7' is lower case), 4 (no text), 5 ($ 5, cycle)
    assert audit[("m1", "amount")]["pass_rate_correct"] == 0.5 and audit[("m1", "amount")]["pass_rate_incorrect"] == pytest.approx(1 / 3)
    assert audit[("m1", "typology")]["gap"] == pytest.approx(2 / 3) and audit[("m1", "rule")]["passes_incorrect"] == 0
    assert audit[("m2", "rule")]["gap"] == -1.0 and audit[("m2", "amount")]["pass_rate_correct"] == 1.0
    assert summary["traces_without_text"] == 1 and summary["rubric"]["description"] == "AML reasoning checks"
    # the sample keeps, per model and verdict, the trace with the smallest hash key for seed 5
    sample = pd.read_csv(run_dir / "trace_sample.csv")
    assert len(sample) == 4 and summary["sample"]["by_model"] == {"m1": {"correct": 1, "incorrect": 1},
                                                                  "m2": {"correct": 1, "incorrect": 1}}
    m1 = sample[sample["model"] == "m1"].set_index("verdict")["id"]
    assert m1["correct"] == [1, 2][int(np.argmin(hash_keys(np.array([1, 2]), 5)))]
    assert m1["incorrect"] == [3, 4, 5][int(np.argmin(hash_keys(np.array([3, 4, 5]), 5)))]
    assert sample.set_index(["model", "id"]).loc[("m2", 1), ["pass_amount", "pass_typology", "pass_rule"]].tolist() == [True, True, False]
    assert manifest["seeds"] == {"sample_seed": 5} and manifest["ray"]["address"] is None
    # Fleiss: subjects (3,0) (2,1) (0,3) (1,2) of 3 raters: P = 2/3, Pe = 1/2 -> 1/3; Cohen a-b 1/2, a-c 1/5, b-c 1/2
    agreement = summary["agreement"]
    assert agreement["fleiss_kappa"] == pytest.approx(1 / 3) and agreement["subjects"] == 4
    kappas = {(r["rater_a"], r["rater_b"]): r["kappa"] for r in agreement["pairwise_cohen"]}
    assert kappas == pytest.approx({("judge_a", "judge_b"): 0.5, ("judge_a", "judge_c"): 0.2, ("judge_b", "judge_c"): 0.5})
    assert len(pd.read_parquet(run_dir / "data" / "agreement")) == 3
    html = (run_dir / "report.html").read_text()
    assert "Fleiss" in html and "Pass rate by step and verdict" in html and "<svg" in html
    assert main([*args, "--run-id", "again"]) == 0
    assert (tmp_path / "runs" / "traces" / "again" / "trace_sample.csv").read_text() == (run_dir / "trace_sample.csv").read_text()


def test_traces_verdicts_joined_from_design_and_predictions(design, tmp_path):
    out, frame = design
    llm_rows(frame["id"]).to_csv(tmp_path / "llm.csv", index=False)
    (tmp_path / "rubric.json").write_text(json.dumps({"steps": [{"name": "amount", "pattern": r"\$\d"}]}))
    texts = ["$5", "$7", "$1", "none", "none", "none", "none", None]
    pd.DataFrame({"id": range(8), "model": "llm", "trace": texts}).to_parquet(tmp_path / "traces.parquet")
    assert main(["traces", "--rubric", str(tmp_path / "rubric.json"), "--traces", str(tmp_path / "traces.parquet"),
                 "--design", out, "--predictions", f"llm={tmp_path / 'llm.csv'}", "--out", str(tmp_path / "runs"),
                 "--run-id", "j"]) == 0
    summary, manifest = load_run(tmp_path / "runs" / "traces" / "j")
    # correct: 0, 1, 3, 5 (verdict equals label; the group does not matter); incorrect: 2, 6 and 4, 7 (no verdict)
    assert summary["models"] == {"llm": {"traces": 8, "correct": 4, "incorrect": 4}}
    row = summary["table"][0]
    assert row["pass_rate_correct"] == 0.5 and row["pass_rate_incorrect"] == 0.25
    assert summary["sample"]["rows"] == 8 and summary["agreement"] is None and "agreement" in summary["skipped"]
    assert set(manifest["inputs"]["predictions"]) == {"llm"}


def test_predictions_are_needed_for_the_traced_ids_only(design, tmp_path, capsys):
    """A design of many rows, traces of eight: a prediction file with those eight ids is enough, and
    gives the verdicts the full file gives; a traced id without a prediction is named."""
    out, frame = design
    assert len(frame) > 8  # design rows nobody traced
    (tmp_path / "rubric.json").write_text(json.dumps({"steps": [{"name": "amount", "pattern": r"\$\d"}]}))
    pd.DataFrame({"id": range(8), "model": "llm", "trace": ["$5", "$7", "$1", "none", "none", "none", "none", None]}
                 ).to_parquet(tmp_path / "traces.parquet")
    base = ["traces", "--rubric", str(tmp_path / "rubric.json"), "--traces", str(tmp_path / "traces.parquet"), "--design", out,
            "--out", str(tmp_path / "runs")]
    llm_rows(frame["id"]).to_csv(tmp_path / "all.csv", index=False)
    llm_rows(pd.Series(range(8))).to_csv(tmp_path / "traced.csv", index=False)
    assert main([*base, "--predictions", f"llm={tmp_path / 'all.csv'}", "--run-id", "all"]) == 0
    assert main([*base, "--predictions", f"llm={tmp_path / 'traced.csv'}", "--run-id", "traced"]) == 0
    every, _ = load_run(tmp_path / "runs" / "traces" / "all")
    traced, _ = load_run(tmp_path / "runs" / "traces" / "traced")
    assert traced["models"] == every["models"] == {"llm": {"traces": 8, "correct": 4, "incorrect": 4}}
    assert traced["table"] == every["table"]
    llm_rows(pd.Series([0, 1, 2, 4, 5, 6, 7])).to_csv(tmp_path / "short.csv", index=False)
    assert ("short.csv: column 'id' lacks a prediction for 1 of the 8 traced id(s) of model 'llm', e.g. 3; expected one for "
            "every traced id (design rows without a trace need none)") in cli_error(
        [*base, "--predictions", f"llm={tmp_path / 'short.csv'}"], capsys)
    llm_rows(pd.Series([*range(8), 10_000])).to_csv(tmp_path / "stray.csv", index=False)
    assert "stray.csv: column 'id' has 1 id(s) not in the design, e.g. 10000" in cli_error(
        [*base, "--predictions", f"llm={tmp_path / 'stray.csv'}"], capsys)


def test_trace_inputs_fail_naming_file_and_column_or_step(design, tmp_path, capsys):
    rubric, traces = _write_traces(tmp_path)
    base = ["traces", "--out", str(tmp_path / "runs")]
    ok = [*base, "--rubric", str(rubric), "--verdict-column", "verdict"]
    (tmp_path / "bad.yaml").write_text("steps:\n  - name: fine\n    pattern: 'x'\n  - name: broken\n    pattern: '(unclosed'\n")
    err = cli_error([*base, "--rubric", str(tmp_path / "bad.yaml"), "--traces", str(traces), "--verdict-column", "verdict"], capsys)
    assert "bad.yaml: step 'broken': invalid regex '(unclosed'" in err
    (tmp_path / "keys.json").write_text(json.dumps({"steps": [{"name": "s", "pattern": "x", "weight": 2}]}))
    err = cli_error([*base, "--rubric", str(tmp_path / "keys.json"), "--traces", str(traces), "--verdict-column", "verdict"], capsys)
    assert "keys.json: step 's': unknown key(s) ['weight']" in err
    pd.read_csv(traces).drop(columns="trace").to_csv(tmp_path / "notext.csv", index=False)
    assert "notext.csv: column(s) ['trace'] not found" in cli_error([*ok, "--traces", str(tmp_path / "notext.csv")], capsys)
    pd.read_csv(traces).assign(verdict="maybe").to_csv(tmp_path / "maybe.csv", index=False)
    assert "maybe.csv: column 'verdict' has verdict(s) ['maybe']" in cli_error([*ok, "--traces", str(tmp_path / "maybe.csv")], capsys)
    pd.concat([pd.read_csv(traces)] * 2).to_csv(tmp_path / "twice.csv", index=False)
    assert "columns ['id', 'model'] repeat 5 pair(s)" in cli_error([*ok, "--traces", str(tmp_path / "twice.csv")], capsys)
    pd.DataFrame({"id": [1, 2], "model": "m1", "a": ["y", None], "b": ["y", "n"]}).to_csv(tmp_path / "gap.csv", index=False)
    assert "gap.csv: column 'a' has 1 missing value(s)" in cli_error([*ok, "--traces", str(traces), "--ratings",
                                                                   str(tmp_path / "gap.csv")], capsys)
    pd.DataFrame({"id": [1, 9], "model": "m1", "a": "y", "b": "n"}).to_csv(tmp_path / "stray.csv", index=False)
    assert "stray.csv: columns ['id', 'model'] have 1 rated trace(s) not in the traces" in cli_error(
        [*ok, "--traces", str(traces), "--ratings", str(tmp_path / "stray.csv")], capsys)
    out, frame = design
    llm_rows(frame["id"]).to_csv(tmp_path / "llm.csv", index=False)
    joined = [*base, "--rubric", str(rubric), "--traces", str(traces), "--design", out]
    assert "traces_m1.csv: column 'model' has model(s) ['m1'] without --predictions" in cli_error(
        [*joined, "--predictions", f"llm={tmp_path / 'llm.csv'}"], capsys)
    assert "not both" in cli_error([*joined, "--predictions", f"m1={tmp_path / 'llm.csv'}", "--verdict-column", "verdict"], capsys)


def test_traces_help_says_no_ray_and_the_old_spelling_still_works(tmp_path):
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "traces", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "no Ray" in out and "--rubric" in out and "--per-outcome" in out
    top = subprocess.run([sys.executable, "-m", "jobs.cli", "coreset", "--help"], capture_output=True, text=True).stdout
    assert "traces" not in top.split("commands:")[1]  # the old spelling is hidden from help ...
    legacy = subprocess.run([sys.executable, "-m", "jobs.cli", "coreset", "traces", "--rubric", str(tmp_path / "none.yaml"),
                             "--traces", str(tmp_path / "none.csv"), "--verdict-column", "v", "--out", str(tmp_path)],
                            capture_output=True, text=True)
    assert "benchaudit coreset traces: warning: deprecated; use 'benchaudit traces'" in legacy.stderr  # ... and warns
