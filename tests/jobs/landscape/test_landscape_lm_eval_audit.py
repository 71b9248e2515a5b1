"""``--from-lm-eval`` over several models: lm-eval groups pooled as one benchmark, the cross-model item audit
(data/candidates/, the review sheet, validation against expert labels) and the flags that cannot apply to logs."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from connectors.runs.tables import read_table
from jobs.cli import main
from jobs.landscape.item_audit import validate_audit
from jobs.landscape.summary import reference_warnings
from tests.builders import DATE, lm_eval_sample

LN = math.log
SUBTASKS = {"mmlu_alpha": 6, "mmlu_beta": 4}


def _lls(right: bool, gold: int, other: int, confident: float = 0.9) -> list[float]:
    """Four single-letter log-likelihoods with most of the mass on ``gold`` (right) or on ``other``."""
    top = gold if right else other
    return [LN(confident if i == top else (1 - confident) / 3) - 5 for i in range(4)]


def write_group(root: Path, models: dict[str, float]) -> dict[str, float]:
    """Models (name -> share of items answered right) on two MMLU subtasks of an ``mmlu`` group, 0.4.3-on layout,
    results.json with lm-eval's group figure (the micro average); item mmlu_alpha:0 is answered B by every model
    although its gold is A. Returns each model's group accuracy."""
    group_acc = {}
    for m, (model, share) in enumerate(models.items()):
        folder = root / model.replace("/", "__")
        folder.mkdir(parents=True)
        results = {"results": {}, "configs": {}, "model_name": model}
        right_total = total = 0
        for task, n in SUBTASKS.items():
            records = []
            for i in range(n):
                defective = task == "mmlu_alpha" and i == 0
                right = not defective and (i + m) % 10 < share * 10
                lls = _lls(right, 0, 1 if defective else 1 + (i + m) % 3, 0.9 if defective else 0.5 + 0.04 * i + 0.01 * m)
                records.append(lm_eval_sample(i, lls, 0, [" A", " B", " C", " D"]))
                right_total += right
                total += 1
            (folder / f"samples_{task}_{DATE}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
            results["results"][task] = {"acc,none": sum(r["acc"] for r in records) / n, "alias": task}
            results["configs"][task] = {"task": task, "output_type": "multiple_choice"}
        group_acc[model] = right_total / total
        results["results"]["mmlu"] = {"acc,none": group_acc[model], "alias": "mmlu"}
        (folder / f"results_{DATE}.json").write_text(json.dumps(results))
    return group_acc


def run(args: list[str], capsys) -> tuple[Path, dict, dict]:
    assert main(["landscape", *args]) == 0, capsys.readouterr().err
    run_dir = Path(capsys.readouterr().out.split("manifest: ")[1].strip()).parent
    return run_dir, json.loads((run_dir / "summary.json").read_text()), json.loads((run_dir / "manifest.json").read_text())


@pytest.mark.ray  # the run reads its logs with Ray Data
def test_groups_pool_their_subtasks_and_every_item_is_scored_with_the_agreed_defect_first(tmp_path, capsys):
    # one run (Ray starts once) for both: the group's rows, and the item audit over the group's items
    accs = write_group(tmp_path / "logs", {"org/a": 0.9, "org/b": 0.9, "org/c": 0.7, "org/d": 0.5})
    run_dir, summary, manifest = run(["--from-lm-eval", str(tmp_path / "logs"), "--out", str(tmp_path / "runs")], capsys)
    table = {(r["benchmark"], r["model"]): r for r in summary["table"]}
    for model, acc in accs.items():
        pooled = table[("mmlu", model)]
        subs = [table[(t, model)] for t in SUBTASKS]
        micro = sum(s["accuracy"] * s["n_items"] for s in subs) / sum(s["n_items"] for s in subs)
        assert pooled["n_items"] == sum(SUBTASKS.values()) == 10
        assert pooled["accuracy"] == pytest.approx(micro, abs=1e-12) == pytest.approx(acc, abs=1e-12)
        assert pooled["lm_eval_group_acc"] == pytest.approx(acc, abs=1e-12)
        assert pooled["accuracy_ci_low"] < pooled["accuracy"] <= pooled["accuracy_ci_high"]
        assert pooled["mpd_ci_low"] < pooled["mpd"] < pooled["mpd_ci_high"]  # an exact MPD with a real interval
    assert {g["group"] for g in summary["groups"]} == {"mmlu"} and all(g["subtasks"] == 2 for g in summary["groups"])
    assert manifest["lm_eval"]["groups"] == ["mmlu"] and manifest["ray"] is not None
    report = (run_dir / "report.html").read_text()
    assert "lm-eval groups" in report and "Cross-model item audit" in report

    items = read_table(str(run_dir), "candidates").to_pandas()
    assert len(items) == 10 and set(items["benchmark"]) == {"mmlu"}  # the audit runs over the group's items
    top = items.sort_values("score", ascending=False).iloc[0]
    assert top["source_id"] == "mmlu_alpha:0" and top["n_wrong"] == top["n_models"] == 4 and top["flagged"]
    assert top["agreed_option"] == 1 and top["agreed_mass"] == pytest.approx(0.9, abs=1e-6)
    assert top["mean_gold_prob"] == pytest.approx(0.1 / 3, abs=1e-6)
    assert items.loc[items["source_id"] != "mmlu_alpha:0", "score"].max() < top["score"]
    sheet = list(csv.DictReader(io.StringIO((run_dir / "review_candidates.csv").read_text())))
    assert sheet[0]["source_id"] == "mmlu_alpha:0" and sheet[0]["gold"] == "A" and sheet[0]["agreed_option"] == "B"
    assert sheet[0]["options"] == " | ".join(top["options"]) and {"review_label", "review_subtype"} <= set(sheet[0])
    assert summary["flags"]["from"] == manifest["review"]["flags_from"] == "lm_eval_logs"
    audit = summary["item_audit"]["benchmarks"]["mmlu"]
    assert audit["items"] == 10 and audit["models"] == 4 and 0 < audit["gold_accuracy"] < 1


def test_perturbations_with_logs_is_an_error_that_says_why(tmp_path, capsys):
    write_group(tmp_path / "logs", {"org/a": 0.9})
    code = main(["landscape", "--from-lm-eval", str(tmp_path / "logs"), "--perturbations", "none,noise",
                 "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and "--perturbations cannot apply with --from-lm-eval" in err and "needs the model" in err


def test_validation_ranks_the_score_beside_the_count_and_warns_on_few_matches():
    # ten items; the expert marks q0 and q1; the score puts q0 first, the count ties q0 with four others
    table = pd.DataFrame({"source_id": [f"q{i}" for i in range(10)], "question": [f"Question {i}?" for i in range(10)],
                          "options": [["a", "b"]] * 10, "n_models": 3,
                          "n_wrong": [3, 1, 3, 3, 3, 3, 0, 0, 0, 0],
                          "score": [0.99, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01]})
    reference = pd.DataFrame({"question": [f"question {i}?" for i in range(10)], "options": [["a", "b"]] * 10,
                              "expert_bad": [True, True] + [False] * 8})
    rows, rankings, matched = validate_audit({"mmlu": table}, reference)
    (entry,) = rankings
    assert entry["matched"] == 10 and matched == {"mmlu": {"matched": 10, "items": 10}} and reference_warnings(matched) == []
    assert entry["score"]["average_precision"] == pytest.approx(1.0)
    # the count: q0 among five tied at 3 (precision 1/5 at recall 1/2), q1 next (2/6 at recall 1)
    assert entry["n_wrong"]["average_precision"] == pytest.approx(0.5 * 1 / 5 + 0.5 * 2 / 6)
    assert [r["min_wrong"] for r in rows] == [1, 2, 3] and rows[-1]["chosen"]
    assert entry["score"]["curve"][0] == [0.5, 1.0]
    _, _, few = validate_audit({"mmlu": table}, reference.iloc[:4])
    (warning,) = reference_warnings(few)
    assert warning["kind"] == "low_reference_match" and "matches 4 of its 10 items" in warning["message"]


TRAINED = Path(__file__).parents[4] / "shared" / "data" / "lm_eval_trained_dev"


@pytest.mark.skipif(not TRAINED.exists(), reason="development data ../shared/data/lm_eval_trained_dev not present")
@pytest.mark.ray  # the run reads its logs with Ray Data
def test_a_real_34b_models_mmlu_logs_pool_into_one_group_row_against_lm_evals_figure(tmp_path, capsys):
    run_dir, summary, _ = run(["--from-lm-eval", str(TRAINED), "--out", str(tmp_path / "runs")], capsys)
    rows = {r["benchmark"]: r for r in summary["table"]}
    mmlu = rows["mmlu"]
    assert mmlu["n_items"] == 12_508 and len(rows) == 57  # 56 subjects and their group
    assert mmlu["mpd_ci_low"] < mmlu["mpd"] < mmlu["mpd_ci_high"]
    (group,) = summary["groups"]
    # results.json's mmlu figure also counts professional_law, whose samples are not in the logs: lm-eval's
    # figure is the micro average over the 57 subjects, the pooled row the one over the 56 read
    assert group["not_read"] == ["mmlu_professional_law"] and group["subtasks"] == 56 and group["lm_eval_subtasks"] == 57
    results = json.loads((TRAINED / "codellama-34b-instruct_mmlu" / "results.json").read_text())["results"]
    law = results["mmlu_professional_law"]["acc,none"]
    assert (mmlu["accuracy"] * 12_508 + law * 1_534) / 14_042 == pytest.approx(group["lm_eval_acc"], abs=1e-9)
    sheet = list(csv.DictReader(io.StringIO((run_dir / "review_candidates.csv").read_text())))
    assert len(sheet) >= 100 and sheet[0]["options"].count(" | ") == 3 and sheet[0]["options"] != "A | B | C | D"
    if summary["probability"] == "letters":  # the reader's letter semantics: the label mass and its warning
        assert mmlu["mean_label_mass"] < 0.05
        assert any(w["kind"] == "low_label_mass" for w in summary["warnings"])
