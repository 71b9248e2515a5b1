"""Coreset diagnostics through the CLI, without Ray: group recall and macro-F1, the failure taxonomy,
the trace audit and rater agreement, on small files written here; expected values worked out by hand."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.sampling.design import DesignConfig, build_design
from audit.sampling.hashdraw import hash_keys
from jobs.cli import main

TAU = 0.5
# 40 targets: ids 0-5 positive (groups a, a, a, b, b, c), ids 6 and 7 hard negatives (a census at budget 2x)
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


def _design(root: Path, with_group: bool = True) -> tuple[str, pd.DataFrame]:
    """A build run directory written from the in-memory build (what 'coreset build' writes)."""
    ids = np.arange(40)
    score = np.where(ids < 6, 0.9, 0.02 + 0.004 * ids)
    score[6], score[7] = 0.4, 0.35
    design, manifest = build_design(ids, (ids < 6).astype(int), score, DesignConfig(tau=TAU, seed=7))
    design["score"] = score[design["id"]]
    if with_group:
        design["group"] = [GROUPS.get(int(i)) for i in design["id"]]
    root.mkdir(parents=True)
    design.to_parquet(root / "design.parquet", index=False)
    (root / "design.json").write_text(json.dumps(manifest.to_dict()))
    return str(root), design


def _llm_rows(ids: pd.Series) -> pd.DataFrame:
    rows = [LLM.get(int(i), (0, None, "no")) for i in ids]
    return pd.DataFrame({"id": ids.to_numpy(), "prediction": pd.array([r[0] for r in rows], dtype="Int64"),
                         "named_group": [r[1] for r in rows], "raw": [r[2] for r in rows]})


@pytest.fixture()
def design(tmp_path) -> tuple[str, pd.DataFrame]:
    return _design(tmp_path / "build")


def _load(run_dir: Path) -> tuple[dict, dict]:
    return json.loads((run_dir / "summary.json").read_text()), json.loads((run_dir / "manifest.json").read_text())


def _error(args: list[str], capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_estimate_group_f1_and_failure_taxonomy_by_hand(design, tmp_path):
    out, frame = design
    assert len(frame) == 18 and set(range(8)) <= set(frame["id"])
    llm = _llm_rows(frame["id"])
    llm.to_csv(tmp_path / "llm.csv", index=False)
    perfect = llm.assign(prediction=(frame["id"] < 6).astype(int).to_numpy(),
                         named_group=[GROUPS.get(int(i)) for i in frame["id"]], raw="ok")
    pd.concat([llm.assign(seed=0), perfect.assign(seed=1)]).to_json(tmp_path / "llm2.jsonl", orient="records", lines=True)
    frame[["id"]].assign(prediction=(frame["score"] >= TAU).astype(int)).to_parquet(tmp_path / "scorer.parquet")
    assert main(["coreset", "estimate", "--design", out, "--predictions", f"llm={tmp_path / 'llm.csv'}",
                 "--predictions", f"llm2={tmp_path / 'llm2.jsonl'}", "--predictions", f"scorer={tmp_path / 'scorer.parquet'}",
                 "--run-column", "seed", "--group-column", "named_group", "--response-column", "raw",
                 "--missing", "negative", "--out", str(tmp_path / "runs"), "--run-id", "diag"]) == 0
    run_dir = tmp_path / "runs" / "coreset-estimate" / "diag"
    summary, _ = _load(run_dir)
    llm_d, llm2_d, scorer_d = (summary["predictors"][n] for n in ("llm", "llm2", "scorer"))
    # recall by group: a detects ids 0, 1 of 0-2; b detects 3, not 4 (no verdict, counted negative); c detects 5
    recall = {g["group"]: g["recall"] for g in llm_d["group_recall"]}
    assert recall == pytest.approx({"a": 2 / 3, "b": 1 / 2, "c": 1.0})
    assert {g["group"]: g["recall"] for g in llm2_d["group_recall"]} == pytest.approx({"a": 5 / 6, "b": 3 / 4, "c": 1.0})
    # detected positives 0 (a->a), 1 (a->b), 3 (b->b), 5 (c->none): F1 a 2/3, b 2/3, c 0, (none) 0
    groups = llm_d["group_f1"]["groups"]
    assert {g["group"]: (g["support"], g["predicted"]) for g in groups} == {"(none)": (0, 1), "a": (2, 1), "b": (1, 2), "c": (1, 0)}
    assert {g["group"]: g["f1"] for g in groups} == pytest.approx({"(none)": 0.0, "a": 2 / 3, "b": 2 / 3, "c": 0.0})
    assert llm_d["group_f1"]["macro_f1"] == pytest.approx(1 / 3)
    assert llm2_d["group_f1"]["macro_f1_by_run"] == pytest.approx({"0": 1 / 3, "1": 1.0})
    assert llm2_d["group_f1"]["macro_f1"] == pytest.approx(2 / 3)
    assert llm_d["missing_counted_negative"] == 2 and llm_d["diagnostics_skipped"] == {}
    # the construction scorer is right on every row; the model errs on 2, 4 and 6 (weight 1 each)
    cells = {c["cell"]: c["n"] for c in llm_d["versus_construction_scorer"]}
    assert cells == pytest.approx({"both_correct": 37, "reference_only": 3, "model_only": 0, "both_wrong": 0})
    taxonomy = {r["model"]: r for r in summary["failure_taxonomy"]}
    assert set(taxonomy) == {"llm", "llm2"}
    expected = {"correct": 12, "over_prediction": 1, "under_prediction": 1, "wrong_group": 2, "no_response": 1, "unparsable": 1}
    assert {k: taxonomy["llm"][k] for k in expected} == expected and taxonomy["llm"]["n"] == 18
    assert taxonomy["llm2"]["n"] == 36 and taxonomy["llm2"]["correct"] == 30 and taxonomy["llm2"]["unparsable"] == 1
    assert taxonomy["llm"]["wrong_group_share"] == pytest.approx(2 / 18)
    assert set(scorer_d["diagnostics_skipped"]) == {"group_f1", "failure_taxonomy"} and "group_f1" not in scorer_d
    assert "--response-column" in scorer_d["diagnostics_skipped"]["failure_taxonomy"]
    assert pd.read_csv(run_dir / "failure_taxonomy.csv").set_index("model").loc["llm", "no_response"] == 1
    html = (run_dir / "report.html").read_text()
    assert "Failure taxonomy" in html and "Macro-F1 0.333" in html and "Skipped: group_f1" in html


def test_estimate_diagnostic_inputs_fail_naming_file_and_column(design, tmp_path, capsys):
    out, frame = design
    base = ["coreset", "estimate", "--out", str(tmp_path / "runs"), "--missing", "negative"]
    llm = _llm_rows(frame["id"])
    llm.to_csv(tmp_path / "llm.csv", index=False)
    no_group, _ = _design(tmp_path / "nogroup", with_group=False)
    err = _error([*base, "--design", no_group, "--predictions", f"m={tmp_path / 'llm.csv'}", "--group-column", "named_group"], capsys)
    assert "nogroup/design.parquet: column 'group' not found" in err
    err = _error([*base, "--design", out, "--predictions", f"m={tmp_path / 'llm.csv'}", "--group-column", "typo"], capsys)
    assert "llm.csv: column 'typo' (--group-column) not found in any prediction file" in err
    llm.iloc[:9].to_csv(tmp_path / "part1.csv", index=False)
    llm.iloc[9:].drop(columns="raw").to_csv(tmp_path / "part2.csv", index=False)
    err = _error([*base, "--design", out, "--predictions", f"m={tmp_path / 'part1.csv'}", "--predictions",
                  f"m={tmp_path / 'part2.csv'}", "--response-column", "raw"], capsys)
    assert "part2.csv: column 'raw' not found, but other files of predictor 'm' have it" in err


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
                  "judge_b": ["y", "y", "n", "n"], "judge_c": ["y", "n", "n", "n"], "note": "x"}).to_csv(tmp_path / "ratings.csv", index=False)
    args = ["coreset", "traces", "--rubric", str(rubric), "--traces", str(tmp_path / "traces_m1.csv"), "--traces",
            str(tmp_path / "traces_m2.jsonl"), "--verdict-column", "verdict", "--per-outcome", "1", "--seed", "5",
            "--ratings", str(tmp_path / "ratings.csv"), "--rater-columns", "judge_a,judge_b,judge_c", "--out", str(tmp_path / "runs")]
    assert main([*args, "--run-id", "t"]) == 0
    run_dir = tmp_path / "runs" / "coreset-traces" / "t"
    summary, manifest = _load(run_dir)
    assert summary["models"] == {"m1": {"traces": 5, "correct": 2, "incorrect": 3}, "m2": {"traces": 2, "correct": 1, "incorrect": 1}}
    audit = {(r["model"], r["step"]): r for r in summary["audit"]}
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
    assert len(pd.read_csv(run_dir / "agreement.csv")) == 3
    html = (run_dir / "report.html").read_text()
    assert "Fleiss" in html and "Pass rate by step and verdict" in html and "<svg" in html
    assert main([*args, "--run-id", "again"]) == 0
    assert (tmp_path / "runs" / "coreset-traces" / "again" / "trace_sample.csv").read_text() == (run_dir / "trace_sample.csv").read_text()


def test_traces_verdicts_joined_from_design_and_predictions(design, tmp_path):
    out, frame = design
    _llm_rows(frame["id"]).to_csv(tmp_path / "llm.csv", index=False)
    (tmp_path / "rubric.json").write_text(json.dumps({"steps": [{"name": "amount", "pattern": r"\$\d"}]}))
    texts = ["$5", "$7", "$1", "none", "none", "none", "none", None]
    pd.DataFrame({"id": range(8), "model": "llm", "trace": texts}).to_parquet(tmp_path / "traces.parquet")
    assert main(["coreset", "traces", "--rubric", str(tmp_path / "rubric.json"), "--traces", str(tmp_path / "traces.parquet"),
                 "--design", out, "--predictions", f"llm={tmp_path / 'llm.csv'}", "--out", str(tmp_path / "runs"),
                 "--run-id", "j"]) == 0
    summary, manifest = _load(tmp_path / "runs" / "coreset-traces" / "j")
    # correct: 0, 1, 3, 5 (verdict equals label; the group does not matter); incorrect: 2, 6 and 4, 7 (no verdict)
    assert summary["models"] == {"llm": {"traces": 8, "correct": 4, "incorrect": 4}}
    row = summary["audit"][0]
    assert row["pass_rate_correct"] == 0.5 and row["pass_rate_incorrect"] == 0.25
    assert summary["sample"]["rows"] == 8 and summary["agreement"] is None and "agreement" in summary["skipped"]
    assert set(manifest["inputs"]["predictions"]) == {"llm"}


def test_trace_inputs_fail_naming_file_and_column_or_step(design, tmp_path, capsys):
    rubric, traces = _write_traces(tmp_path)
    base = ["coreset", "traces", "--out", str(tmp_path / "runs")]
    ok = [*base, "--rubric", str(rubric), "--verdict-column", "verdict"]
    (tmp_path / "bad.yaml").write_text("steps:\n  - name: fine\n    pattern: 'x'\n  - name: broken\n    pattern: '(unclosed'\n")
    err = _error([*base, "--rubric", str(tmp_path / "bad.yaml"), "--traces", str(traces), "--verdict-column", "verdict"], capsys)
    assert "bad.yaml: step 'broken': invalid regex '(unclosed'" in err
    (tmp_path / "keys.json").write_text(json.dumps({"steps": [{"name": "s", "pattern": "x", "weight": 2}]}))
    err = _error([*base, "--rubric", str(tmp_path / "keys.json"), "--traces", str(traces), "--verdict-column", "verdict"], capsys)
    assert "keys.json: step 's': unknown key(s) ['weight']" in err
    pd.read_csv(traces).drop(columns="trace").to_csv(tmp_path / "notext.csv", index=False)
    assert "notext.csv: column(s) ['trace'] not found" in _error([*ok, "--traces", str(tmp_path / "notext.csv")], capsys)
    pd.read_csv(traces).assign(verdict="maybe").to_csv(tmp_path / "maybe.csv", index=False)
    assert "maybe.csv: column 'verdict' has verdict(s) ['maybe']" in _error([*ok, "--traces", str(tmp_path / "maybe.csv")], capsys)
    pd.concat([pd.read_csv(traces)] * 2).to_csv(tmp_path / "twice.csv", index=False)
    assert "columns ['id', 'model'] repeat 5 pair(s)" in _error([*ok, "--traces", str(tmp_path / "twice.csv")], capsys)
    pd.DataFrame({"id": [1, 2], "model": "m1", "a": ["y", None], "b": ["y", "n"]}).to_csv(tmp_path / "gap.csv", index=False)
    assert "gap.csv: column 'a' has 1 missing value(s)" in _error([*ok, "--traces", str(traces), "--ratings",
                                                                   str(tmp_path / "gap.csv")], capsys)
    pd.DataFrame({"id": [1, 9], "model": "m1", "a": "y", "b": "n"}).to_csv(tmp_path / "stray.csv", index=False)
    assert "stray.csv: columns ['id', 'model'] have 1 rated trace(s) not in the traces" in _error(
        [*ok, "--traces", str(traces), "--ratings", str(tmp_path / "stray.csv")], capsys)
    out, frame = design
    _llm_rows(frame["id"]).to_csv(tmp_path / "llm.csv", index=False)
    joined = [*base, "--rubric", str(rubric), "--traces", str(traces), "--design", out]
    assert "traces_m1.csv: column 'model' has model(s) ['m1'] without --predictions" in _error(
        [*joined, "--predictions", f"llm={tmp_path / 'llm.csv'}"], capsys)
    assert "not both" in _error([*joined, "--predictions", f"m1={tmp_path / 'llm.csv'}", "--verdict-column", "verdict"], capsys)


def test_traces_help_says_no_ray():
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "coreset", "traces", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "no Ray" in out and "--rubric" in out and "--per-outcome" in out
