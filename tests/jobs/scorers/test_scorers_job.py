"""The scorers job end to end on the session-scoped local Ray: shards equal one in-process pass."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from audit.conventions.inventory import american_to_other
from audit.scorers.sensitivity import (
    SensitivityConfig,
    gold_answers_table,
    run_sensitivity,
)
from audit.stats.bootstrap import BootstrapConfig
from connectors.scorers import read_gold_references
from jobs.cli import main
from jobs.common.cli.config import RunOptions
from jobs.common.inputs.benchmarks import BenchmarkConfig
from jobs.common.runtime.summaries import records
from jobs.scorers.config import AnswersConfig, ScorersConfig
from jobs.scorers.run import run

pytestmark = pytest.mark.ray
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
TRUTHFULQA = BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[str(FIXTURES / "benchmarks" / "truthfulqa_slice.csv")])
DROP = BenchmarkConfig(name="drop", preset="drop", paths=[str(FIXTURES / "scorers" / "allennlp_fixture_drop.json")])
YARDS, TOMLINSON = "77cec168-33a6-43aa-869c-74c934d40d18", "7f253de4-739d-423f-8270-08a9ae7e4c33"  # DROP fixture ids
REPLICATES = 2_000


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


def test_gold_answers_in_shards_equal_in_process(ray_local, tmp_path):
    cfg = ScorersConfig(benchmark=[TRUTHFULQA], bootstrap=REPLICATES, shard_rows=4)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), executor="ray"))  # small: auto would keep it in the driver
    summary, manifest = load(out)

    golds = read_gold_references(TRUTHFULQA.to_spec())
    config = SensitivityConfig(("drop", "squad", "exact", "truthfulqa"), bootstrap=BootstrapConfig(REPLICATES, 2026, 0.95))
    expected = run_sensitivity(gold_answers_table(golds).table, golds, american_to_other(), config)
    gold = summary["systems"]["gold"]
    assert summary["scorers"] == ["drop", "squad", "exact", "truthfulqa"]  # every question has incorrect references
    # the job leaves out intervals the bootstrap cannot resolve: fewer than 5 questions at level 0.95
    few = expected.summary["n_questions"] < 5
    assert few.any() and not few.all()
    expected.summary.loc[few, ["ci_low", "ci_high"]] = None
    assert gold["sensitivity"] == records(expected.summary)
    assert manifest["shards"]["total"] == 6 and gold["n_answers"] == 23  # 23 questions in shards of 4

    variants = pq.read_table(Path(out) / "data" / "variants").to_pandas().drop(columns="system")
    key = ["question_id", "transformation"]
    assert variants.sort_values(key).reset_index(drop=True).equals(expected.variants.sort_values(key).reset_index(drop=True))
    assert pq.read_table(Path(out) / "data" / "pairs").num_rows == len(expected.pairs) > 0
    drop_em = next(r for r in summary["table"] if (r["scorer"], r["metric"]) == ("drop", "em"))
    assert (drop_em["mean_original"], drop_em["mean_variant"]) == (1.0, 0.0)  # every valid variant loses DROP's EM
    assert summary["bootstrap"] == {"replicates": REPLICATES, "seed": 2026, "level": 0.95, "clusters": "question_id"}

    # a run's own variants folder, reviewed, scores again: exactly its accepted rows
    again = run(ScorersConfig(benchmark=[TRUTHFULQA], variants=str(Path(out) / "data" / "variants"), scorers=["exact"],
                              bootstrap=100), RunOptions(out=str(tmp_path / "runs")))
    rescored = pq.read_table(Path(again) / "data" / "pairs").to_pandas()
    assert len(rescored) == (expected.variants["status"] == "accepted").sum() and set(rescored["scorer"]) == {"exact"}


def test_model_outputs_and_reviewed_variants(ray_local, tmp_path):
    outputs = tmp_path / "model.csv"
    answers = {"question_id": [YARDS, TOMLINSON], "answer": ["38 yards", "<script>x</script> on April 21, 2025"]}
    pd.DataFrame(answers).to_csv(outputs, index=False)
    reviewed = tmp_path / "reviewed.csv"
    pd.DataFrame({"question_id": [YARDS, YARDS], "original": ["38-yard", "38-yard"], "variant": ["35 m", "38 yd"],
                  "transformation": ["unit:to_metric", "unit:abbreviation"], "status": ["accepted", "rejected"],
                  "reason": ["", "reviewer: not the same register"]}).to_csv(reviewed, index=False)
    cfg = ScorersConfig(benchmark=[DROP], answers=[AnswersConfig(name="<b>m</b>", path=str(outputs))], variants=str(reviewed),
                        bootstrap=200)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs")))
    summary, _ = load(out)
    assert summary["scorers"] == ["drop", "squad", "exact"]  # DROP has no incorrect references: no TruthfulQA ranking
    pairs = pq.read_table(Path(out) / "data" / "pairs").to_pandas()
    yard = pairs[(pairs.system == "<b>m</b>") & (pairs.question_id == YARDS) & (pairs.scorer == "drop") & (pairs.metric == "f1")]
    # "38 yards" vs gold "38-yard": bags {38.0, yards} and {38.0, yard} -> F1 0.5; "35 m" fails the number gate -> 0
    assert yard[["transformation", "original_score", "variant_score"]].values.tolist() == [["unit:to_metric", 0.5, 0.0]]
    review = summary["systems"]["variants"]
    assert review["variants"] == {"unit:abbreviation": {"accepted": 0, "rejected": 1}, "unit:to_metric": {"accepted": 1, "rejected": 0}}
    assert review["rejection_reasons"] == {"reviewer: not the same register": 1}
    assert set(pairs[pairs.system == "variants"]["variant"]) == {"35 m"}  # rejected rows are not scored
    html = (Path(out) / "report.html").read_text()
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt; on 21 April 2025" in html
    assert "<b>m</b>" not in html and "&lt;b&gt;m&lt;/b&gt;" in html


def test_bad_input_names_file_and_row_before_any_work(ray_local, tmp_path):
    opts = RunOptions(out=str(tmp_path / "runs"))
    unknown = tmp_path / "answers.csv"
    unknown.write_text(f"question_id,answer\n{YARDS},38 yards\nnope,7\n")
    with pytest.raises(ValueError, match=r"answers\.csv: data row 2: unknown question_id 'nope'"):
        run(ScorersConfig(benchmark=[DROP], answers=[AnswersConfig(name="m", path=str(unknown))]), opts)
    numbers = tmp_path / "answers.jsonl"
    numbers.write_text(json.dumps({"question_id": YARDS, "answer": 38}) + "\n")
    with pytest.raises(ValueError, match=r"answers\.jsonl: data row 1: field 'answer' must be a string, got int 38"):
        run(ScorersConfig(benchmark=[DROP], answers=[AnswersConfig(name="m", path=str(numbers))]), opts)
    variants = tmp_path / "variants.csv"
    variants.write_text("question_id,original,variant,transformation\nnope,a,b,spelling:to_other\n")
    with pytest.raises(ValueError, match=r"variants\.csv: data row 1: unknown question_id 'nope'"):
        run(ScorersConfig(benchmark=[DROP], variants=str(variants)), opts)
    with pytest.raises(ValueError, match=r"question '\S+': TruthfulQA ranking needs at least one non-blank incorrect reference"):
        run(ScorersConfig(benchmark=[DROP], scorers=["truthfulqa"]), opts)
    assert not (tmp_path / "runs").exists()  # every check ran before a run directory was made


def test_an_unknown_answer_id_shows_the_id_form_and_real_ids(tmp_path, capsys):
    """Answer ids of the shipped TruthfulQA are derived from its file name (TruthfulQA:N), not from the
    benchmark's name: the error says so, with real ids and the one meant when only its case differs."""
    answers = tmp_path / "answers.csv"
    answers.write_text("question_id,answer\nTruthfulQA:0,Nothing happens\ntruthfulqa:1,Nothing\n")
    assert main(["scorers", "--answers", str(answers), "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert "answers.csv: data row 2: unknown question_id 'truthfulqa:1' (not among 817 questions); did you mean " \
           "'TruthfulQA:1'? question ids of benchmark truthfulqa are each item's own id where the benchmark has one " \
           "(DROP's query_id, ARC's id), else <file name up to its first dot>:<data row, from 0>, e.g. 'TruthfulQA:0', " \
           "'TruthfulQA:1'" in err
    assert not (tmp_path / "runs").exists()
    answers.write_text("question_id,answer\nTruthfulQA:0,Nothing happens\nTruthfulQA:1,Nothing\n")  # the documented form
    assert main(["scorers", "--answers", str(answers), "--bootstrap", "100", "--out", str(tmp_path / "runs"),
                 "--run-id", "ok"]) == 0
    summary, _ = load(str(tmp_path / "runs" / "scorers" / "ok"))
    assert summary["systems"]["answers"]["n_questions"] == 2


def test_cli_runs_and_explains_its_options(ray_local, tmp_path, capsys):
    outputs = tmp_path / "m.csv"
    outputs.write_text(f"question_id,answer\n{YARDS},38 yards\n")
    args = ["scorers", "--benchmark", f"drop:drop:{DROP.paths[0]}", "--answers", str(outputs), "--scorers", "drop,squad",
            "--bootstrap", "100", "--out", str(tmp_path / "runs")]
    assert main(args) == 0
    summary, manifest = load(capsys.readouterr().out.split("report: ")[1].split("/report.html")[0])
    assert list(summary["systems"]) == ["m"] and summary["scorers"] == ["drop", "squad"]
    assert manifest["rows"]["in"] == 1 and manifest["seed"] == 2026
    help_text = subprocess.run([sys.executable, "-m", "jobs.cli", "scorers", "--help"], capture_output=True, text=True,
                               check=True).stdout
    for flag in ("--benchmark", "--answers", "--variants", "--scorers", "--transformations", "--protected-names",
                 "--bootstrap", "--seed", "--resume"):
        assert flag in help_text
