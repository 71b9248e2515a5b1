"""``benchaudit landscape --from-lm-eval`` on real lm-eval output folders (tests/fixtures/lm_eval): every task
read in full and scored as lm-eval scored it, a task that cannot be read counted and named while the others are
read, ``--sample`` only when given, and long text clipped in summary, report and review sheet but whole in data/."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from connectors.runs.tables import read_table
from jobs.cli import main
from tests.builders import lm_eval_sample

pytestmark = pytest.mark.ray  # a landscape over lm-eval logs reads them with Ray Data

FIXTURES = Path(__file__).parents[2] / "fixtures" / "lm_eval"
NEW = FIXTURES / "v0.4.13" / "benchaudit__tiny-llama"
DATE = "2026-12-02T02-27-04.119124"
MODEL = "benchaudit/tiny-llama"
DOCS = {"winogrande": 6, "arc_challenge": 7, "arc_challenge_mi": 7, "hellaswag": 5, "copa": 6}


def run(args: list[str], capsys) -> tuple[Path, dict, dict]:
    assert main(["landscape", *args]) == 0, capsys.readouterr().err
    run_dir = Path(capsys.readouterr().out.split("manifest: ")[1].strip()).parent
    return run_dir, json.loads((run_dir / "summary.json").read_text()), json.loads((run_dir / "manifest.json").read_text())


def test_a_real_output_folder_is_read_whole_and_unreadable_tasks_cost_only_themselves(tmp_path, capsys):
    root = tmp_path / "lm-eval"
    shutil.copytree(NEW, root / NEW.name)
    shutil.copytree(FIXTURES / "v0.4.2", root / "early")  # the same model and tasks, older: superseded
    broken = root / NEW.name / f"samples_broken_{DATE}.jsonl"
    broken.write_text('[1]\n{"doc_id": true}\n')
    run_dir, summary, manifest = run(["--from-lm-eval", str(root), "--out", str(tmp_path / "runs")], capsys)

    results = json.loads((NEW / f"results_{DATE}.json").read_text())["results"]
    table = {r["benchmark"]: r for r in summary["table"] if r["perturbation"] == "none"}
    assert set(table) == set(DOCS)
    for task, docs in DOCS.items():  # every document, none sampled away, scored exactly as lm-eval scored it
        assert table[task]["n_items"] == docs and table[task]["model"] == MODEL
        assert table[task]["accuracy"] == pytest.approx(results[task]["acc,none"], abs=1e-12)
    runs = {r["task"]: r for r in manifest["lm_eval"]["runs"]}
    assert {t: (r["records"], r["rows"], r["sampled"], r["rejected"]) for t, r in runs.items()} == \
        {t: (n, n, n, 0) for t, n in DOCS.items()}
    assert all(r["acc"]["recomputed"] == pytest.approx(r["acc"]["lm_eval"], abs=1e-12) for r in runs.values())
    assert manifest["lm_eval"]["superseded"] == sorted(str(p) for p in (root / "early").glob("*.jsonl"))
    assert manifest["sample"] == {"items_per_benchmark": None, "given": False}

    unreadable = {u["task"]: u["reason"] for u in manifest["lm_eval"]["unreadable"]}
    assert manifest["lm_eval"]["tasks"] == {"read": 5, "unreadable": 3}
    gsm, wiki = (next((root / NEW.name).glob(f"samples_{t}_*.jsonl")) for t in ("gsm_local", "wikitext_local"))
    assert unreadable["gsm_local"].startswith(f"{gsm}: task gsm_local is a generate_until task")
    assert unreadable["wikitext_local"].startswith(f"{wiki}: task wikitext_local is a loglikelihood_rolling task")
    assert unreadable["broken"] == (f"{broken}: no readable record: all 2 rejected (first, line 1: a JSON array, "
                                    "not an object)")
    assert summary["unreadable_tasks"] == manifest["lm_eval"]["unreadable"]
    rejected = read_table(str(run_dir), "rejected").to_pylist()
    assert [r["reason"] for r in rejected] == [f"{broken}: line 1: a JSON array, not an object",
                                              f"{broken}: line 2: doc_id true is not an integer"]
    report = (run_dir / "report.html").read_text()
    assert "Tasks that could not be read (3; each in manifest.json)" in report
    assert "task wikitext_local is a loglikelihood_rolling task" in report and "no readable record" in report


def test_early_0_4_outputs_are_read_by_their_results_json(tmp_path, capsys):
    _, summary, manifest = run(["--from-lm-eval", str(FIXTURES / "v0.4.2"), "--out", str(tmp_path / "runs")], capsys)
    results = json.loads((FIXTURES / "v0.4.2" / "results.json").read_text())["results"]
    table = {r["benchmark"]: r for r in summary["table"]}
    assert set(table) == {"winogrande", "arc_challenge_mi"} and manifest["lm_eval"]["unreadable"] == []
    for task, row in table.items():
        assert row["accuracy"] == pytest.approx(results[task]["acc,none"], abs=1e-12) and row["model"] == MODEL


def write_task(root: Path, n: int, seed: int = 5) -> Path:
    rng = random.Random(seed)
    folder = root / "org__model"
    folder.mkdir(parents=True)
    records = [lm_eval_sample(i, [rng.uniform(-9, -1) for _ in range(4)], rng.randrange(4)) for i in range(n)]
    (folder / f"samples_arc_challenge_{DATE}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


def test_a_reanalysis_reads_every_item_unless_sample_is_given(tmp_path, capsys):
    root = write_task(tmp_path / "lm-eval", 1172)
    _, summary, manifest = run(["--from-lm-eval", str(root), "--out", str(tmp_path / "runs")], capsys)
    assert summary["table"][0]["n_items"] == 1172 and manifest["lm_eval"]["runs"][0]["sampled"] == 1172
    _, summary, manifest = run(["--from-lm-eval", str(root), "--sample", "1000", "--out", str(tmp_path / "runs")], capsys)
    assert summary["table"][0]["n_items"] == 1000 and manifest["sample"] == {"items_per_benchmark": 1000, "given": True}
    with pytest.raises(SystemExit):
        main(["landscape", "--help"])
    expected = "(default: 1000 in a model run; every item with --from-lm-eval)"
    assert "".join(expected.split()) in "".join(capsys.readouterr().out.split())  # argparse wraps at any hyphen


def test_long_text_is_clipped_in_summary_report_and_review_sheet_and_whole_in_data(tmp_path, capsys):
    root = tmp_path / "lm-eval"
    folder = root / "org__model"
    folder.mkdir(parents=True)
    long = "Q" * 600_000 + " which gas do plants absorb?" + "E" * 400_000
    record = lm_eval_sample(0, [-3.0, -1.0], 0, options=[" carbon dioxide", " oxygen"])  # the model is wrong: flagged
    for args in record["arguments"].values():
        args["arg_0"] = long
    (folder / f"samples_arc_challenge_{DATE}.jsonl").write_text(json.dumps(record) + "\n")
    # one model and one item carry no evidence against a gold label: flag what the model misses (--min-wrong 1)
    run_dir, summary, _ = run(["--from-lm-eval", str(root), "--min-wrong", "1", "--out", str(tmp_path / "runs")], capsys)

    marker = f" … ({len(long):,} characters, truncated) … "
    (candidate,) = summary["flags"]["candidates"]
    assert candidate["question"] == long[:1000] + marker + long[-1000:]
    summary_text = (run_dir / "summary.json").read_text()
    report = (run_dir / "report.html").read_text()
    sheet = (run_dir / "review_candidates.csv").read_text()
    assert len(summary_text) < 20_000 and len(report) < 100_000 and len(sheet) < 5_000
    assert marker in report and marker in sheet
    assert read_table(str(run_dir), "candidates").to_pylist()[0]["question"] == long  # the full text stays in data/
