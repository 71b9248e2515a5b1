"""lm-eval --log_samples output, written here in lm-eval's own format, read into landscape points."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.landscape.mpd import mpd_exact
from audit.landscape.summary import result_rows
from connectors.landscape.lm_eval import LmEvalError, find_lm_eval_runs, read_lm_eval_results, read_lm_eval_samples
from tests.builders import CONTEXT, lm_eval_sample

DATE = "2026-05-13T10-21-33.123456"
def _write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records)
    return path


@pytest.fixture
def run_dir(tmp_path):
    model_dir = tmp_path / "out" / "EleutherAI__pythia-14m"
    records = [
        lm_eval_sample(0, [math.log(0.05), math.log(0.025), math.log(0.0125), math.log(0.0125)], 0),  # p = .5 .25 .125 .125
        lm_eval_sample(1, [-3.0, -3.0, -3.0, -3.0], 2),  # uniform
        lm_eval_sample(2, [math.log(0.08), math.log(0.02)], " option 1", options=[" option 0", " option 1"]),  # target as text
        lm_eval_sample(3, [-1.0, -2.0, -3.0, -4.0], 7),  # gold index out of range
        "{not json",
        lm_eval_sample(5, [-1.0, float("nan"), -2.0, -3.0], 1),
    ]
    _write(model_dir / f"samples_arc_easy_{DATE}.jsonl", records)
    results = {"results": {"arc_easy": {"alias": "arc_easy", "acc,none": 0.6, "acc_stderr,none": 0.2}},
               "config": {"model": "hf", "model_args": "pretrained=EleutherAI/pythia-14m,dtype=float32"},
               "model_name": "EleutherAI/pythia-14m", "n-samples": {"arc_easy": {"original": 6, "effective": 6}}}
    (model_dir / f"results_{DATE}.json").write_text(json.dumps(results))
    return tmp_path / "out"


def test_samples_give_the_landscape_points_computed_by_hand(run_dir):
    samples = read_lm_eval_samples(str(run_dir / "EleutherAI__pythia-14m" / f"samples_arc_easy_{DATE}.jsonl"))
    assert samples.task == "arc_easy" and samples.date == DATE and samples.probability == "continuations"
    frame = samples.table.to_pandas()
    assert frame.id.tolist() == ["arc_easy:0", "arc_easy:1", "arc_easy:2", "arc_easy:5"]
    assert frame.gold.tolist() == [0, 2, 1, 1] and frame.options[0].tolist()[0] == "option 0"
    assert (frame.probability == "continuations").all() and frame.label_mass.isna().all()
    assert frame.continuations[0].tolist() == [" option 0", " option 1", " option 2", " option 3"]
    res = result_rows(frame, "EleutherAI/pythia-14m")
    q = np.array([0.25, 0.125, 0.125]) / 0.5
    expected = [(0.5, -(q * np.log(q)).sum() / math.log(3)), (0.25, 1.0), (0.8, 0.0)]
    for (p, h), row in zip(expected, res.itertuples()):
        assert row.ptop1 == pytest.approx(p) and row.hnorm == pytest.approx(h)
    assert res.correct.tolist()[:3] == [1.0, 0.0, 0.0] and res.error.tolist()[3] == "NaN log-probs"
    pts = np.array(expected)
    hand = (math.dist(pts[0], pts[1]) + math.dist(pts[0], pts[2]) + math.dist(pts[1], pts[2])) / 3
    assert mpd_exact(res[res.error.isna()][["ptop1", "hnorm"]].to_numpy()) == pytest.approx(hand)
    assert [(r["line"], r["reason"]) for r in samples.rejected] == [
        (4, "gold_index_out_of_range: answer index 7 outside the 4 options"),
        (5, "not JSON (Expecting property name enclosed in double quotes)")]


def test_runs_are_found_with_their_model_and_metrics(run_dir):
    runs = find_lm_eval_runs(str(run_dir))
    assert len(runs) == 1
    run = runs[0]
    assert (run.task, run.model, run.date) == ("arc_easy", "EleutherAI/pythia-14m", DATE)
    assert run.metrics == {"acc,none": 0.6, "acc_stderr,none": 0.2}
    info = read_lm_eval_results(run.results_path)
    assert info["model_args"].startswith("pretrained=") and info["n_samples"]["arc_easy"]["effective"] == 6


def test_older_list_layout_numeric_values_and_mutual_info_requests(tmp_path):
    old = lm_eval_sample(0, [-1.0, -2.0], 0)
    old["arguments"] = [[CONTEXT, " option 0"], [CONTEXT, " option 1"]]
    old["filtered_resps"] = [[-1.0, True], [-2.0, False]]
    mi = lm_eval_sample(1, [-1.0, -2.0], 1)
    mi["arguments"].update({"gen_args_2": {"arg_0": "", "arg_1": " option 0"}, "gen_args_3": {"arg_0": "", "arg_1": " option 1"}})
    mi["filtered_resps"] += [["-5.0", "False"], ["-6.0", "False"]]
    path = _write(tmp_path / f"samples_copa_{DATE}.jsonl", [old, mi])
    frame = read_lm_eval_samples(str(path)).table.to_pandas()
    assert [list(x) for x in frame.option_logprobs] == [[-1.0, -2.0], [-1.0, -2.0]]
    assert frame.is_greedy[0].tolist() == [True, False]


def test_generation_task_and_empty_folder_are_clear_errors(tmp_path):
    gen = {"doc_id": 0, "doc": {}, "target": "42", "arguments": {"gen_args_0": {"arg_0": "Q:", "arg_1": {"until": ["\n"]}}},
           "resps": [["The answer is 42"]], "filtered_resps": ["The answer is 42"], "filter": "strict-match"}
    path = _write(tmp_path / f"samples_gsm8k_{DATE}.jsonl", [gen])
    with pytest.raises(LmEvalError, match=f"{path}: task gsm8k is a generate_until task .*generated text, not per-option "
                                          "log-likelihoods"):
        read_lm_eval_samples(str(path))
    (tmp_path / "empty").mkdir()
    with pytest.raises(LmEvalError, match=r"no samples_<task>_<date>.jsonl \(or .parquet\) files, nor early-0.4 .* "
                                          "nor v0.3 <task>_write_out_info.json"):
        find_lm_eval_runs(str(tmp_path / "empty"))
