"""The conventions job end to end on the session-scoped local Ray: equals one in-process pass."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.conventions.metrics import merge_counts, summarize, summary_table
from audit.conventions.stage import ConventionStage
from audit.stats.bootstrap import BootstrapConfig
from connectors.benchmarks.read import read_benchmark
from jobs.cli import main
from jobs.common.cli.config import RunOptions
from jobs.common.inputs.benchmarks import BenchmarkConfig
from jobs.common.runtime.errors import JobError
from jobs.common.runtime.summaries import finite
from jobs.conventions.config import ConventionsConfig
from jobs.conventions.run import run

pytestmark = pytest.mark.ray
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "benchmarks"
REPLICATES = 2_000


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[BenchmarkConfig]:
    """TruthfulQA (one CSV), ARC split over two JSONL files, and a mapped Parquet file in item ranges."""
    root = tmp_path_factory.mktemp("bench")
    arc = (FIXTURES / "arc_challenge_slice.jsonl").read_text().splitlines()
    (root / "arc").mkdir()
    (root / "arc" / "part-0.jsonl").write_text("\n".join(arc[:13]) + "\n")
    (root / "arc" / "part-1.jsonl").write_text("\n".join(arc[13:]) + "\n")
    rows = [json.loads(line) for line in arc]
    pq.write_table(pa.table({
        "qid": [f"m{i}" for i in range(len(rows))], "q": [r["question"] for r in rows],
        "opts": [[o["text"] for o in r["options"]] for r in rows],
        "ans": [next(o["text"] for o in r["options"] if o["label"] == r["answer"]) for r in rows],
    }), root / "mapped.parquet")
    return [
        BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[str(FIXTURES / "truthfulqa_slice.csv")]),
        BenchmarkConfig(name="arc", preset="arc", paths=[str(root / "arc")]),
        BenchmarkConfig(name="mapped", paths=[str(root / "mapped.parquet")], question="q", id="qid", options="opts", gold="ans"),
    ]


def test_multi_file_multi_benchmark_run_equals_in_process(ray_local, tmp_path, inputs):
    cfg = ConventionsConfig(benchmark=inputs, bootstrap=REPLICATES, shard_rows=7)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), executor="ray"))  # small: auto would keep it in the driver
    summary, manifest = load(out)

    stage, boot = ConventionStage(), BootstrapConfig(REPLICATES, 2026, 0.95)
    results = [stage.process(read_benchmark(b.to_spec())) for b in inputs]
    expected = summary_table(summarize(merge_counts(r.counts for r in results),
                                       pa.concat_tables(r.labels for r in results), boot)).to_pylist()
    assert summary["table"] == [{k: finite(v) for k, v in row.items()} for row in expected]
    assert [r["benchmark"] for r in summary["table"]] == ["arc", "mapped", "truthfulqa"]
    assert manifest["shards"]["total"] == 1 + 2 + 5  # 30 Parquet rows in ranges of 7
    assert manifest["inputs"]["mapped"]["expected_items"] == 30 and manifest["rows"]["in"] == 23 + 30 + 30

    items = pq.read_table(Path(out) / "data" / "items")  # benchmark=<name>/ partitions: the name comes back as a column
    reference = pa.concat_tables(r.labels for r in results)
    assert sorted(items.to_pylist(), key=lambda r: (r["benchmark"], r["item_id"])) == \
        sorted(reference.to_pylist(), key=lambda r: (r["benchmark"], r["item_id"]))
    signals = pq.read_table(Path(out) / "data" / "signals")
    assert signals.num_rows == sum(r.signals.num_rows for r in results) and "row" not in signals.column_names
    arc = summary["benchmarks"]["arc"]
    assert arc["by_category"]["unit"]["other"] > arc["by_category"]["unit"]["american"]  # metric units in ARC
    assert arc["bootstrap"] == {**arc["bootstrap"], "replicates": REPLICATES, "seed": 2026}
    assert (Path(out) / "_SUCCESS").exists() and manifest["inventory"]["sha256"] == summary["detector"]["inventory_sha256"]


def test_report_escapes_text_and_shows_the_stacked_chart(ray_local, tmp_path):
    src = tmp_path / "odd.jsonl"
    src.write_text(json.dumps({"id": "<script>x</script>", "q": "My favourite colour at 7 pm"}) + "\n")
    cfg = ConventionsConfig(benchmark=[BenchmarkConfig(name="<b>odd</b>", paths=[str(src)], question="q", id="id")],
                            bootstrap=100)
    html = (Path(run(cfg, RunOptions(out=str(tmp_path / "runs")))) / "report.html").read_text()
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<b>odd</b>" not in html and "&lt;b&gt;odd&lt;/b&gt;" in html
    assert "American vs other signals per category" in html and "<svg" in html


def test_bad_input_names_file_and_row(ray_local, tmp_path):
    opts = RunOptions(out=str(tmp_path / "runs"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"q": "ok"}) + "\n" + json.dumps({"q": 42}) + "\n")
    with pytest.raises(RuntimeError, match=r"bad\.jsonl: row 1, field 'q': expected a string, got int"):
        run(ConventionsConfig(benchmark=[BenchmarkConfig(name="b", paths=[str(bad)], question="q")]), opts)
    with pytest.raises(ValueError, match=r"bad\.jsonl: mapped field\(s\) not found \(mapping: missing \['question'\]\)"):
        run(ConventionsConfig(benchmark=[BenchmarkConfig(name="m", paths=[str(bad)], question="question")]), opts)
    empty = tmp_path / "empty.csv"
    empty.write_text("Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\n")
    with pytest.raises(ValueError, match=r"empty\.csv: benchmark 'e' has no items"):
        run(ConventionsConfig(benchmark=[BenchmarkConfig(name="e", preset="truthfulqa", paths=[str(empty)])]), opts)
    (tmp_path / "dup").mkdir()
    for name in ("a", "b"):
        (tmp_path / "dup" / f"{name}.jsonl").write_text(json.dumps({"id": "same", "q": "colour"}) + "\n")
    with pytest.raises(ValueError, match=r"b\.jsonl: benchmark 'd': duplicate id 'same' \(also in \S+a\.jsonl\)"):
        run(ConventionsConfig(benchmark=[BenchmarkConfig(name="d", paths=[str(tmp_path / "dup")], question="q", id="id")]), opts)


def test_failed_shard_resumes_to_the_clean_totals(ray_local, tmp_path):
    d = tmp_path / "parts"
    d.mkdir()
    lines = (FIXTURES / "arc_challenge_slice.jsonl").read_text().splitlines()
    for i in range(3):
        (d / f"p{i}.jsonl").write_text("\n".join(lines[i * 10:(i + 1) * 10]) + "\n")
    good = (d / "p2.jsonl").read_text()
    (d / "p2.jsonl").write_text(good.replace('"question": "', '"question": 7, "x": "', 1))
    cfg = ConventionsConfig(benchmark=[BenchmarkConfig(name="arc", preset="arc", paths=[str(d)])], bootstrap=200)
    with pytest.raises(JobError, match=r"p2\.jsonl: row 0, field .question.: expected a string") as failure:
        run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="r1"))
    assert not failure.value.resumable  # bad input: rerunning as is cannot help (the CLI prints no --resume hint)
    done = len(list((tmp_path / "runs" / "conventions" / ".r1.partial" / "shards").glob("*.json")))
    (d / "p2.jsonl").write_text(good)
    resumed, manifest = load(run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="r1", resume=True)))
    clean, _ = load(run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="clean")))
    assert manifest["shards"]["resumed"] == done <= 2 and manifest["shards"]["run"] == 3 - done
    assert resumed["table"] == clean["table"] and resumed["table"][0]["n_items"] == 30


def test_cli_default_runs_on_the_shipped_samples(ray_local, tmp_path, capsys):
    assert main(["conventions", "--out", str(tmp_path / "runs"), "--bootstrap", "200"]) == 0
    out = capsys.readouterr().out.split("report: ")[1].split("/report.html")[0]
    summary, _ = load(out)
    assert {r["benchmark"]: r["n_items"] for r in summary["table"]} == {"truthfulqa": 817, "drop_fixture": 19}
    assert main(["conventions", "--benchmark", "x:nosuchpreset:/tmp", "--out", str(tmp_path)]) == 2
    assert "unknown preset" in capsys.readouterr().err
    listing = tmp_path / "benchmarks.yaml"
    listing.write_text(f"- name: tqa\n  preset: truthfulqa\n  paths: [{FIXTURES / 'truthfulqa_slice.csv'}]\n- name: [broken\n")
    assert main(["conventions", "--benchmarks", str(listing), "--out", str(tmp_path)]) == 2
    assert f"{listing}: malformed YAML at line 5" in capsys.readouterr().err
    mapped = tmp_path / "mapped.jsonl"
    mapped.write_text(json.dumps({"q": "Favourite colour?", "A": "grey", "B": "gray", "key": "grey"}) + "\n")
    listing.write_text(f"- name: tqa\n  preset: truthfulqa\n  paths: [{FIXTURES / 'truthfulqa_slice.csv'}]\n"
                       f"- name: mc\n  paths: [{mapped}]\n  question: q\n  options: [A, B]\n  gold: key\n")
    assert main(["conventions", "--benchmarks", str(listing), "--out", str(tmp_path / "yaml"), "--bootstrap", "100"]) == 0
    summary, _ = load(capsys.readouterr().out.split("report: ")[1].split("/report.html")[0])
    assert summary["benchmarks"]["mc"]["signals"] == {**summary["benchmarks"]["mc"]["signals"], "american": 1, "other": 3}
    assert summary["benchmarks"]["tqa"]["n_items"] == 23
    help_text = subprocess.run([sys.executable, "-m", "jobs.cli", "conventions", "--help"], capture_output=True, text=True,
                               check=True).stdout
    for flag in ("--benchmark", "--benchmarks", "--question-column", "--include-lexical", "--bootstrap", "--seed",
                 "--shard-rows", "--resume", "--address"):
        assert flag in help_text
