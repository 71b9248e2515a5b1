"""``benchaudit contamination --outcomes``: the reference study's table re-analysed with zero model calls, its
report, a table with a missing model x r cell, and the options of each mode."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from audit.contamination.analysis import analyse
from audit.stats.bootstrap import BootstrapConfig
from audit.stats.choices import DEFAULT_SEED
from jobs.common.cli.config import RunOptions
from jobs.contamination.config import ContaminationConfig
from jobs.contamination.run import run
from tests.builders import cell_text
from tests.fixtures.contamination import reference_study as ref

REPLICATES = 1_000


def load(run_dir: str) -> tuple[dict, dict, str]:
    d = Path(run_dir)
    return (json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text()),
            cell_text((d / "report.html").read_text()))


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_outcomes_reanalysis_reproduces_the_in_process_statistics(tmp_path, suffix):
    path = ref.write_reference_outcomes(str(tmp_path / f"reference.{suffix}"))
    out = run(ContaminationConfig(outcomes=[path], bootstrap=REPLICATES), RunOptions(out=str(tmp_path / "runs")))
    summary, manifest, report = load(out)
    expected = analyse(ref.reference_outcomes(), bootstrap=BootstrapConfig(REPLICATES, DEFAULT_SEED, 0.95)).to_dict()
    for key in ("per_r", "per_model", "cells", "trend", "reversal", "categories", "missing", "status_totals", "m", "models"):
        assert summary[key] == expected[key], key
    assert summary["table"] == expected["level_vs_credibility"]
    head = summary["overview"]
    assert head["models_above_baseline_per_r"] == list(ref.VIOLATORS) == [5, 4, 6, 7, 7, 7, 8, 10, 8]
    assert head["improve_per_r"] == list(ref.IMPROVE) and head["degrade_per_r"] == list(ref.DEGRADE)
    assert head["mean_positive_excess_over_violators_per_r"][7] == pytest.approx(0.066)
    assert head["reversal"] == {"first_r": 5, "sustained_from_r": 8} and head["missing_cells"] == 0
    assert manifest["mode"] == "outcomes" and manifest["calls"]["total"]["calls"] == 0 and manifest["ray"] is None
    assert manifest["outcomes"]["rows"] == 12 * 100 * 10

    # the report's per-r table, in order: "5 of 12", "4 of 12", ...
    per_r_table = report.split("Models above baseline and mean positive excess, per r")[1].split("</table>")[0]
    assert re.findall(r"<td>(\d+) of 12</td>", per_r_table) == [str(v) for v in ref.VIOLATORS]
    assert "first exceeds correct→wrong (summed over models) at r = 5, after r = 1–4 where it does not" in report
    assert "stays ahead from r = 8 through r = 9" in report
    assert "Every model × r cell has paired questions." in report
    for model in ref.MODELS:
        assert f"<td>{model}</td>" in report


def test_a_missing_model_r_cell_is_listed_and_left_out(tmp_path):
    table = ref.reference_outcomes()
    gone = (table.model == "model_03") & (table.condition == "noisy_rewrite") & (table.r == 4)
    failed = (table.model == "model_05") & (table.condition == "noisy_rewrite") & (table.r == 2)
    table.loc[failed, "status"] = "timeout"
    table.loc[failed, "correct"] = None
    path = tmp_path / "outcomes.parquet"
    from connectors.contamination.outcomes import write_outcomes

    write_outcomes(table[~gone], str(path))
    summary, _, report = load(run(ContaminationConfig(outcomes=[str(path)], bootstrap=200), RunOptions(out=str(tmp_path / "r"))))
    missing = {(c["model"], c["r"]): c["reason"] for c in summary["missing"]}
    assert missing == {("model_03", 4): "no rows",
                       ("model_05", 2): "no scored rows (every row failed, timed out or had an empty router output)"}
    per_r = {row["r"]: row for row in summary["per_r"]}
    assert per_r[4]["n_models"] == 11 and per_r[2]["n_models"] == 11 and per_r[1]["n_models"] == 12
    assert summary["overview"]["missing_cells"] == 2 and summary["status_totals"]["timeout"] == 100
    assert summary["overview"]["unscored_cells"] == 100
    models = {row["model"]: row for row in summary["per_model"]}
    assert models["model_03"]["missing_settings"] == [4] and models["model_03"]["settings"] == 8
    assert "2 model × r cell(s) have no paired question" in report
    assert "<td>model_03</td><td>4</td><td>no rows</td>" in report
    assert "<td>model_03</td><td>noisy_rewrite</td><td>4</td><td>0</td>" not in report  # absent rows: no cell at all
    assert re.search(r"<td>model_05</td><td>noisy_rewrite</td><td>2</td><td>0</td><td>0</td><td>0</td><td>0</td><td>100</td>", report)


def test_the_cli_runs_outcomes_with_an_explicit_m_and_renamed_columns(tmp_path, capsys):
    from jobs.cli import main

    table = ref.reference_outcomes().rename(columns={"question_id": "qid", "correct": "is_correct"})
    path = tmp_path / "renamed.csv"
    table.drop(columns=["answer"]).to_csv(path, index=False)
    code = main(["contamination", "--outcomes", str(path), "--question-id-column", "qid", "--correct-column", "is_correct",
                 "--max-routers", "9", "--bootstrap", "200", "--out", str(tmp_path / "runs")])
    assert code == 0, capsys.readouterr().err
    run_dir = capsys.readouterr().out.split("summary: ")[1].split("\n")[0].rsplit("/", 1)[0]
    summary = json.loads(Path(run_dir, "summary.json").read_text())
    assert summary["overview"]["models_above_baseline_per_r"] == list(ref.VIOLATORS)
    assert main(["contamination", "--outcomes", str(path), "--question-id-column", "qid", "--correct-column", "is_correct",
                 "--max-routers", "8", "--out", str(tmp_path / "runs")]) == 2
    assert "noisy rows reach r = 9, beyond the expected M = 8" in capsys.readouterr().err


def test_options_of_the_other_mode_are_refused():
    with pytest.raises(ValueError, match="--worker-model cannot apply"):
        ContaminationConfig(outcomes=["x.parquet"], worker_model=["hf:x"])
    with pytest.raises(ValueError, match="give --worker-model SPEC"):
        ContaminationConfig(benchmark=["arc:arc:x.jsonl"])
    with pytest.raises(ValueError, match="one benchmark; got 2"):
        ContaminationConfig(benchmark=["a:arc:x.jsonl", "b:arc:y.jsonl"], worker_model=["hf:x"])
    with pytest.raises(ValueError, match="one for every worker or one per --worker-model"):
        ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a", "hf:b", "hf:c"], router_model=["hf:r", "hf:s"])
    with pytest.raises(ValueError, match="model spec 'nope'"):
        ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["nope"])
    with pytest.raises(ValueError, match="--question-id-column applies only together with --outcomes"):
        ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a"], question_id_column="qid")


def test_roles_settings_and_prompt_overrides(tmp_path):
    cfg = ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a", "openai:http://h:1/v1#b"], router_model=["hf:r"],
                              model_settings='{"openai": {"timeout_s": 5}, "openai:http://h:1/v1#b": {"concurrency": 2}}')
    assert [(r.worker, r.router_model) for r in cfg.roles()] == [("hf:a", "hf:r"), ("openai:http://h:1/v1#b", "hf:r")]
    assert cfg.settings_for("openai:http://h:1/v1#b") == {"timeout_s": 5, "concurrency": 2} and cfg.settings_for("hf:a") == {}
    assert ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a"]).roles()[0].router_model == "hf:a"
    plan = ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a"], independent=True, max_routers=4).plan_config()
    assert (plan.design, plan.m, plan.seed, plan.noisy_router.temperature, plan.worker.max_new_tokens) == \
        ("independent", 4, DEFAULT_SEED, 0.8, 16)

    shipped = ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a"]).prompt_set()
    folder = tmp_path / "prompts"
    folder.mkdir()
    noisy = shipped.noisy_rewrite
    (folder / "noisy_rewrite.txt").write_text("name: mine\nversion: 2\nrole: router\n---\nShorten and rewrite: {problem}\n")
    worker = tmp_path / "worker.txt"
    worker.write_text("name: w\nversion: 1\nrole: worker\n---\n{input}\nLetter ({letters}):\n")
    mine = ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a"], prompts=str(folder),
                               worker_prompt=str(worker)).prompt_set()
    assert mine.noisy_rewrite.version == "2" and mine.noisy_rewrite.sha256 != noisy.sha256
    assert mine.worker.source == str(worker) and mine.forward_full == shipped.forward_full
    (folder / "noisy_rewrite.txt").unlink()
    with pytest.raises(ValueError, match="none of .*found"):
        ContaminationConfig(benchmark=["a:arc:x.jsonl"], worker_model=["hf:a"], prompts=str(folder)).prompt_set()


def test_models_are_declared_as_landscape_declares_them(tmp_path):
    """A --models YAML list (the landscape's) gives a model its own settings and pool; --worker-model and
    --router-model name its entries; a model given by spec takes --model-settings, --batch-size and --actors."""
    models = tmp_path / "models.yaml"
    models.write_text("- spec: openai:http://h:1/v1#big\n  name: big\n  settings: {concurrency: 8}\n  batch_size: 4\n"
                      "  actors: 3\n")
    cfg = ContaminationConfig(benchmark=["a:arc:x.jsonl"], models=str(models), worker_model=["big", "hf:a"],
                              router_model=["big"], model_settings='{"hf": {"dtype": "float32"}}', batch_size=5)
    assert [(r.worker, r.router_model) for r in cfg.roles()] == [("big", "big"), ("hf:a", "big")]
    big, small = cfg.model_stage("big"), cfg.model_stage("hf:a")
    assert (big.spec, big.settings, big.batch_size, big.max_actors) == ("openai:http://h:1/v1#big", {"concurrency": 8}, 4, 3)
    assert (small.spec, small.settings, small.batch_size, small.max_actors) == ("hf:a", {"dtype": "float32"}, 5, None)
    with pytest.raises(ValueError, match="nobody"):  # neither an entry's name nor a spec
        ContaminationConfig(benchmark=["a:arc:x.jsonl"], models=str(models), worker_model=["nobody"])
    with pytest.raises(ValueError, match="--models applies only|cannot apply"):
        ContaminationConfig(outcomes=["x.parquet"], models=str(models))
