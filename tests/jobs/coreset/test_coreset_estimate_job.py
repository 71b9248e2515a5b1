"""Coreset diagnostics through the CLI, without Ray: group recall and macro-F1, the failure taxonomy,
the trace audit and rater agreement, on small files written here; expected values worked out by hand."""
from __future__ import annotations

import pandas as pd
import pytest

from jobs.cli import main
from tests.jobs.coreset_design import GROUPS, TAU, cli_error, llm_rows, load_run, write_design


def test_estimate_group_f1_and_failure_taxonomy_by_hand(design, tmp_path):
    out, frame = design
    assert len(frame) == 18 and set(range(8)) <= set(frame["id"])
    llm = llm_rows(frame["id"])
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
    summary, _ = load_run(run_dir)
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
    assert pd.read_parquet(run_dir / "data" / "failure_taxonomy").set_index("model").loc["llm", "no_response"] == 1
    html = (run_dir / "report.html").read_text()
    assert "Failure taxonomy" in html and "Macro-F1 0.333" in html and "Skipped: group_f1" in html


def test_estimate_diagnostic_inputs_fail_naming_file_and_column(design, tmp_path, capsys):
    out, frame = design
    base = ["coreset", "estimate", "--out", str(tmp_path / "runs"), "--missing", "negative"]
    llm = llm_rows(frame["id"])
    llm.to_csv(tmp_path / "llm.csv", index=False)
    no_group, _ = write_design(tmp_path / "nogroup", with_group=False)
    err = cli_error([*base, "--design", no_group, "--predictions", f"m={tmp_path / 'llm.csv'}", "--group-column", "named_group"], capsys)
    assert "nogroup/data/design: column 'group_value' not found" in err
    err = cli_error([*base, "--design", out, "--predictions", f"m={tmp_path / 'llm.csv'}", "--group-column", "typo"], capsys)
    assert "llm.csv: column 'typo' (--group-column) not found in any prediction file" in err
    llm.iloc[:9].to_csv(tmp_path / "part1.csv", index=False)
    llm.iloc[9:].drop(columns="raw").to_csv(tmp_path / "part2.csv", index=False)
    err = cli_error([*base, "--design", out, "--predictions", f"m={tmp_path / 'part1.csv'}", "--predictions",
                  f"m={tmp_path / 'part2.csv'}", "--response-column", "raw"], capsys)
    assert "part2.csv: column 'raw' not found, but other files of predictor 'm' have it" in err
