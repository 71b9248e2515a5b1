"""``benchaudit landscape --from-lm-eval``: items from the documents (so ``--reference`` matches them), letter tasks
with their label mass (so the label-mass warning fires), ``--lm-eval-normalization``, a doc_id beyond 64 bits as
that record's rejection; on the real trained-model logs (when present) the MMLU-Redux matches and label mass."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from connectors.landscape.inputs import read_redux_subject
from connectors.runs.tables import read_table
from jobs.cli import main

pytestmark = pytest.mark.ray  # a landscape over lm-eval logs reads them with Ray Data

REDUX = Path(__file__).parents[3] / "connectors" / "samples" / "benchmarks" / "mmlu_redux"
DEV = Path(__file__).parents[4] / "shared" / "data" / "lm_eval_trained_dev"
FIXTURES = Path(__file__).parents[2] / "fixtures" / "lm_eval"
DATE = "2026-12-02T02-27-04.119124"


def run(args: list[str], capsys) -> tuple[Path, dict, dict]:
    assert main(["landscape", *args]) == 0, capsys.readouterr().err
    out = capsys.readouterr()
    run_dir = Path(out.out.split("manifest: ")[1].strip()).parent
    return run_dir, json.loads((run_dir / "summary.json").read_text()), json.loads((run_dir / "manifest.json").read_text())


def mmlu_letter_run(root: Path, questions: list[dict], unmatched: int) -> Path:
    """An early-0.4 MMLU subject as lm-eval writes it (one JSON array, results.json beside with its group):
    the prompt holds the preamble and lettered options, the continuations are " A".." D", the model puts
    1% of its next-token probability on the letters, most of it on the gold letter."""
    task = "mmlu_anatomy"
    docs = [{"question": q["question"], "subject": "anatomy", "choices": q["options"], "answer": int(q["gold"])}
            for q in questions]
    docs += [{"question": f"An invented question {i}?", "subject": "anatomy", "choices": ["w", "x", "y", "z"], "answer": 0}
             for i in range(unmatched)]
    records = []
    for i, doc in enumerate(docs):
        prompt = ("The following are multiple choice questions (with answers) about anatomy.\n\n" + doc["question"] + "\n"
                  + "".join(f"{'ABCD'[j]}. {o}\n" for j, o in enumerate(doc["choices"])) + "Answer:")
        ps = [0.007 if j == doc["answer"] else 0.001 for j in range(4)]
        lls = [math.log(p) for p in ps]
        records.append({"doc_id": i, "doc": doc, "target": doc["answer"], "arguments": [[prompt, f" {x}"] for x in "ABCD"],
                        "resps": [[[ll, False]] for ll in lls], "filtered_resps": [[ll, False] for ll in lls], "acc": 1.0})
    folder = root / "model"
    folder.mkdir(parents=True)
    (folder / f"pretrained__org__m_{task}.jsonl").write_text(json.dumps(records, indent=2))
    results = {"results": {"mmlu": {"acc,none": 1.0, "alias": "mmlu"}, task: {"acc,none": 1.0, "alias": "  - anatomy"}},
               "groups": {"mmlu": {"acc,none": 1.0}}, "configs": {task: {"output_type": "multiple_choice"}},
               "config": {"model": "hf", "model_args": "pretrained=org/m"}}
    (folder / "results.json").write_text(json.dumps(results))
    return root


@pytest.fixture
def redux_anatomy() -> list[dict]:
    return read_redux_subject(str(REDUX / "mmlu_anatomy.csv")).head(6).to_dict("records")


def test_letter_task_items_match_the_reference_and_its_label_mass_warns(redux_anatomy, tmp_path, capsys):
    root = mmlu_letter_run(tmp_path / "logs", redux_anatomy, unmatched=0)
    run_dir, summary, manifest = run(["--from-lm-eval", str(root), "--reference", str(REDUX), "--out",
                                      str(tmp_path / "runs")], capsys)
    assert summary["probability"] == "letters" and "label mass" in summary["probability_note"]
    (row,) = [r for r in summary["table"] if r["benchmark"] == "mmlu_anatomy"]  # and its group's pooled row, "mmlu"
    assert row["mean_label_mass"] == pytest.approx(0.01)
    assert [w["kind"] for w in summary["warnings"]] == ["low_label_mass"]
    assert summary["overview"]["reference_matches"] == {"mmlu_anatomy": {"matched": 6, "items": 6}}
    assert summary["overview"]["item_rules"] == {"mmlu_anatomy": {"mmlu": 6}}
    (described,) = manifest["lm_eval"]["runs"]
    assert (described["group"], described["probability"], described["item_rules"]) == ("mmlu", "letters", {"mmlu": 6})
    scores = read_table(str(run_dir), "scores").to_pylist()
    assert [r["label_mass"] for r in scores] == pytest.approx([0.01] * 6)
    report = (run_dir / "report.html").read_text()
    assert "mmlu_anatomy: 6 of 6 items matched" in report and "6 by mmlu" in report


def test_a_reference_matching_under_half_the_items_warns(redux_anatomy, tmp_path, capsys):
    root = mmlu_letter_run(tmp_path / "logs", redux_anatomy[:2], unmatched=3)
    run_dir, summary, _ = run(["--from-lm-eval", str(root), "--reference", str(REDUX), "--out", str(tmp_path / "runs")],
                              capsys)
    assert summary["overview"]["reference_matches"] == {"mmlu_anatomy": {"matched": 2, "items": 5}}
    (warning,) = [w for w in summary["warnings"] if w["kind"] == "low_reference_match"]
    assert warning["message"].startswith("mmlu_anatomy: the reference matches 2 of its 5 items (under half)")
    assert "the reference matches 2 of its 5 items" in (run_dir / "report.html").read_text()


def test_review_sheet_shows_document_option_texts_not_letters(redux_anatomy, tmp_path, capsys):
    root = mmlu_letter_run(tmp_path / "logs", redux_anatomy, unmatched=0)
    # every item wrong for this one model: the model's mass on a wrong letter
    path = next((root / "model").glob("*.jsonl"))
    records = json.loads(path.read_text())
    for r in records:
        wrong = (r["target"] + 1) % 4
        lls = [math.log(0.007 if j == wrong else 0.001) for j in range(4)]
        r["filtered_resps"] = [[ll, False] for ll in lls]
        r["acc"] = 0.0
    path.write_text(json.dumps(records, indent=2))
    run_dir, _, _ = run(["--from-lm-eval", str(root), "--out", str(tmp_path / "runs")], capsys)
    sheet = list(csv.DictReader((run_dir / "review_candidates.csv").open()))
    assert len(sheet) == 6
    for line, q in zip(sorted(sheet, key=lambda r: int(r["source_id"].split(":")[1])), redux_anatomy):
        assert line["question"] == q["question"] and line["options"] == " | ".join(q["options"])


def test_length_normalization_flag_divides_continuation_log_likelihoods(tmp_path, capsys):
    root = tmp_path / "logs"
    (root / "m").mkdir(parents=True)
    for name in (f"samples_hellaswag_{DATE}.jsonl", f"results_{DATE}.json"):
        (root / "m" / name).write_bytes((FIXTURES / "v0.4.13" / "benchaudit__tiny-llama" / name).read_bytes())
    _, raw, _ = run(["--from-lm-eval", str(root), "--out", str(tmp_path / "a")], capsys)
    _, norm, manifest = run(["--from-lm-eval", str(root), "--lm-eval-normalization", "length", "--out", str(tmp_path / "b")],
                            capsys)
    results = json.loads((FIXTURES / "v0.4.13" / "benchaudit__tiny-llama" / f"results_{DATE}.json").read_text())
    assert raw["probability"] == norm["probability"] == "continuations"
    assert raw["table"][0]["accuracy"] == pytest.approx(results["results"]["hellaswag"]["acc,none"])
    assert norm["table"][0]["accuracy"] == pytest.approx(results["results"]["hellaswag"]["acc_norm,none"])
    assert manifest["lm_eval"]["runs"][0]["normalization"] == "length"
    assert main(["landscape", "--model", "hf:/x", "--lm-eval-normalization", "length", "--out", str(tmp_path)]) == 2


def test_a_doc_id_beyond_64_bits_is_that_records_rejection_naming_file_and_line(tmp_path, capsys):
    source = FIXTURES / "v0.4.13" / "benchaudit__tiny-llama"
    root = tmp_path / "logs" / "m"
    root.mkdir(parents=True)
    lines = (source / f"samples_winogrande_{DATE}.jsonl").read_text().splitlines()
    big = json.loads(lines[2])
    big["doc_id"] = 18446744073709551621  # 2**64 + 5
    path = root / f"samples_winogrande_{DATE}.jsonl"
    path.write_text("\n".join([*lines[:2], json.dumps(big), *lines[3:]]) + "\n")
    run_dir, summary, _ = run(["--from-lm-eval", str(tmp_path / "logs"), "--out", str(tmp_path / "runs")], capsys)
    assert summary["table"][0]["n_items"] == len(lines) - 1
    (rejected,) = read_table(str(run_dir), "rejected").to_pylist()
    assert rejected["reason"] == f"{path}: line 3: doc_id is a 65-bit integer, beyond the 64 bits of a document index"


@pytest.mark.skipif(not DEV.is_dir(), reason="development data ../shared/data/lm_eval_trained_dev not present")
def test_real_trained_model_logs_match_mmlu_redux_and_warn_of_their_label_mass(tmp_path, capsys):
    run_dir, summary, manifest = run(["--from-lm-eval", str(DEV), "--reference", str(REDUX), "--out",
                                      str(tmp_path / "runs")], capsys)
    matches = summary["overview"]["reference_matches"]
    assert sum(m["matched"] for m in matches.values()) >= 5000
    assert sum(m["items"] for m in matches.values()) == 12508  # every document read, none rejected
    assert summary["probability"] == "letters" and {r["group"] for r in manifest["lm_eval"]["runs"]} == {"mmlu"}
    masses = [w["mean_label_mass"] for w in summary["warnings"] if w["kind"] == "low_label_mass"]
    assert len(masses) == 56 and 0.003 < sum(masses) / len(masses) < 0.01
    scores = read_table(str(run_dir), "scores").to_pandas()
    assert scores["label_mass"].mean() == pytest.approx(0.006, abs=0.001)
    sheet = list(csv.DictReader((run_dir / "review_candidates.csv").open()))
    assert sheet and not any(line["options"] == "A | B | C | D" for line in sheet)
    assert sum(len(line["options"]) > len("A | B | C | D") for line in sheet) > 0.9 * len(sheet)
