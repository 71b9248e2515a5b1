"""Every name a user or an input file gives is refused at the edge, naming its flag or field, or encoded.

Run ids, submission ids and audit ids are path names (``connectors.runs.paths.safe_name``);
corpus, benchmark, model and answer names are input names, which reach a path only as a
percent-encoded partition value. Each refusal happens before any run directory exists.
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pytest

from jobs.cli import main
from jobs.common.cli.config import ConfigError, validated
from jobs.common.models.pool import ModelConfig

HOSTILE_IDS = ["../", "../../escaped", "/some/dir/victim", "%2F", "%2e%2e", "a\x00b", "a\nb", "x" * 300, "..\\x", "C:\\x"]
SAMPLES = Path(__file__).resolve().parents[4] / "connectors" / "samples"


def error_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.mark.parametrize("run_id", HOSTILE_IDS)
def test_a_hostile_run_id_is_refused_naming_the_flag_before_anything_is_written(tmp_path, capsys, run_id):
    (tmp_path / "victim.json").write_text("keep me")
    assert main(["geo", "--out", str(tmp_path / "root"), "--run-id", run_id, "--bootstrap", "0"]) == 2
    (line,) = error_lines(capsys)
    assert line.startswith("benchaudit geo: error: --run-id: ") and "letters, digits, '.', '_' and '-'" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.json"] and (tmp_path / "victim.json").read_text() == "keep me"


def test_runs_commands_take_the_same_run_ids(tmp_path, capsys):
    assert main(["runs", "show", "--out", str(tmp_path), "--run-id", "../../x"]) == 2
    assert "--run-id: '../../x'" in error_lines(capsys)[0]


@pytest.mark.parametrize("template", ["../{week}", "/abs/{date}", "{job}\n{hash}", "a%2F{week}"])
def test_a_submission_id_template_that_makes_no_path_name_is_refused_before_anything_is_sent(tmp_path, capsys, template):
    assert main(["submit", "geo", "--address", "http://127.0.0.1:1", "--submission-id", template, "--out", str(tmp_path)]) == 2
    (line,) = error_lines(capsys)
    assert line.startswith("benchaudit submit geo: error: --submission-id: ") and "a name uses letters" in line


@pytest.mark.parametrize("name,why", [("a\x00b", "control character"), ("a\nb", "control character"),
                                      ("x" * 300, "300 characters long")])
def test_a_hostile_corpus_name_in_a_yaml_list_is_refused_naming_file_and_entry(tmp_path, capsys, name, why):
    listing = tmp_path / "corpora.yaml"
    listing.write_text(json.dumps([{"name": name, "preset": "coco", "paths": [str(SAMPLES / "coco2017_val_captions.csv")]}]))
    assert main(["geo", "--corpora", str(listing), "--out", str(tmp_path / "root")]) == 2
    (line,) = error_lines(capsys)
    assert str(listing) in line and "entry 1" in line and why in line
    assert not (tmp_path / "root").exists()


def test_a_hostile_benchmark_name_is_refused_naming_the_field(tmp_path, capsys):
    tqa = Path(__file__).resolve().parents[3] / "fixtures" / "benchmarks" / "truthfulqa_slice.csv"
    assert main(["conventions", "--benchmark", f"a\tb:truthfulqa:{tqa}", "--out", str(tmp_path / "root")]) == 2
    (line,) = error_lines(capsys)
    assert "--benchmark: item 0.name: " in line and "control character" in line and not (tmp_path / "root").exists()


def test_a_model_name_given_or_derived_is_an_input_name():
    with pytest.raises(ConfigError, match=r"model name 'a\\nb': it holds the control character"):
        validated(ModelConfig, {"spec": "hf:gpt2", "name": "a\nb"}, "models.yaml: entry 1")
    assert validated(ModelConfig, {"spec": "openai:http://h:1/v1#org/model"}, "model").name == "org/model"


def test_a_hostile_audit_id_in_a_plan_is_refused_before_anything_runs(tmp_path, capsys):
    plan = tmp_path / "plan.yaml"
    plan.write_text(json.dumps({"name": "p", "audits": [{"job": "geo", "id": "../../escaped"}]}))
    assert main(["reaudit", "--plan", str(plan), "--out", str(tmp_path / "root")]) == 2
    (line,) = error_lines(capsys)
    assert str(plan) in line and "audit id '../../escaped'" in line and not (tmp_path / "root").exists()
    plan.write_text(json.dumps({"name": "p", "audits": [{"job": "geo"}],
                                "corpora": [{"name": "a\x00b", "preset": "coco", "paths": ["x.csv"]}]}))
    assert main(["reaudit", "--plan", str(plan), "--out", str(tmp_path / "root")]) == 2
    (line,) = error_lines(capsys)
    assert str(plan) in line and "audit geo" in line and "control character" in line and not (tmp_path / "root").exists()


def test_an_input_name_with_slashes_and_dots_is_encoded_and_the_run_stays_in_its_root(tmp_path):
    listing = tmp_path / "corpora.yaml"
    listing.write_text(json.dumps([{"name": "../../escaped", "preset": "coco", "paths": [str(SAMPLES / "coco2017_val_captions.csv")]}]))
    root = tmp_path / "a" / "b" / "root"
    assert main(["geo", "--corpora", str(listing), "--out", str(root), "--run-id", "r1", "--limit", "50", "--bootstrap", "0",
                 "--write-records", "--executor", "local", "--log-level", "error"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "corpora.yaml"] and [p.name for p in (tmp_path / "a").iterdir()] == ["b"]
    assert [p.name for p in (root / "geo" / "r1" / "data" / "records").iterdir()] == ["corpus=..%2F..%2Fescaped"]
    hive = pads.partitioning(pa.schema([("corpus", pa.string())]), flavor="hive")
    table = pads.dataset(root / "geo" / "r1" / "data" / "records", partitioning=hive).to_table()
    assert set(table["corpus"].to_pylist()) == {"../../escaped"} and table.num_rows == 50
