"""Real lm-eval outputs (tests/fixtures/lm_eval: written by lm-eval 0.4.13 and 0.4.2 themselves) read into
landscape rows: lm-eval's own per-record ``acc`` and its results file's ``acc,none`` reproduced exactly, Ptop1
equal to the softmax of the logged log-likelihoods, both file-naming schemes, both acc_mutual_info layouts,
Winogrande's multiple-input records, the refusal of generation and perplexity tasks, and every bad line of a
file a named rejection."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from audit.landscape.summary import result_rows
from connectors.landscape.lm_eval import LmEvalError, find_lm_eval_runs, read_lm_eval_samples

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lm_eval"
NEW = FIXTURES / "v0.4.13" / "benchaudit__tiny-llama"
EARLY = FIXTURES / "v0.4.2"
DATE = "2026-12-02T02-27-04.119124"
MC_TASKS = ("winogrande", "arc_challenge", "arc_challenge_mi", "hellaswag", "copa")


def raw_records(path: Path) -> list[dict]:
    """The file's records as lm-eval wrote them (JSON lines, or one JSON array before 0.4.3), read independently."""
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if text.lstrip().startswith("[") else [json.loads(line) for line in text.splitlines()]


def rows_of(path: Path, task: str):
    samples = read_lm_eval_samples(str(path), task)
    frame = samples.table.to_pandas()
    frame["option_logprobs"] = samples.table.column("option_logprobs").to_pylist()
    return samples, frame, result_rows(frame, "benchaudit/tiny-llama")


def results_acc(path: Path, task: str) -> float:
    return json.loads(path.read_text())["results"][task]["acc,none"]


def conditional_lls(record: dict) -> list[float]:
    """By hand, from lm-eval's process_results: every request's log-likelihood, then without the unconditional
    ("", option) ones of acc_mutual_info (0.4.3 on: the second half; 0.4.0-0.4.2: every other one)."""
    lls = [float(r[0]) for r in record["filtered_resps"]]
    args = record["arguments"]
    contexts = [a["arg_0"] for a in args.values()] if isinstance(args, dict) else [a[0] for a in args]
    if "acc_mutual_info" not in record:
        return lls
    return lls[: len(lls) // 2] if contexts[len(lls) // 2:] == [""] * (len(lls) // 2) else lls[::2]


@pytest.mark.parametrize("folder,task,name", [
    *[(NEW, t, f"samples_{t}_{DATE}.jsonl") for t in MC_TASKS],
    (EARLY, "winogrande", "pretrained__benchaudit__tiny-llama_winogrande.jsonl"),
    (EARLY, "arc_challenge_mi", "pretrained__benchaudit__tiny-llama_arc_challenge_mi.jsonl"),
    (FIXTURES / "main-2024-04", "winogrande", "pretrained=benchaudit__tiny-llama_winogrande.jsonl"),
])
def test_every_record_reproduces_lm_evals_choice_acc_and_ptop1(folder, task, name):
    path = folder / name
    samples, frame, res = rows_of(path, task)
    records = raw_records(path)
    assert samples.rejected == [] and samples.records == len(records) == len(res)
    results = next(folder.glob(f"results_{DATE}.json")) if folder == NEW else folder / "results.json"
    for record, row, lp in zip(records, res.itertuples(), frame["option_logprobs"]):
        lls = conditional_lls(record)
        assert lp == lls  # the logged values, parsed exactly
        assert row.pred == int(np.argmax(lls))  # lm-eval's choice: argmax, first on ties
        assert row.correct == record["acc"]  # lm-eval's own per-record acc
        top = max(lls)
        assert row.ptop1 == pytest.approx(1 / math.fsum(math.exp(x - top) for x in lls), abs=1e-12)
    assert res["correct"].mean() == pytest.approx(results_acc(results, task), abs=1e-12)


def test_winogrande_options_are_the_two_fillers_and_the_gold_is_its_answer():
    samples, frame, _ = rows_of(NEW / f"samples_winogrande_{DATE}.jsonl", "winogrande")
    docs = [r["doc"] for r in raw_records(NEW / f"samples_winogrande_{DATE}.jsonl")]
    assert [list(o) for o in frame["options"]] == [[d["option1"], d["option2"]] for d in docs]
    assert frame["gold"].tolist() == [int(d["answer"]) - 1 for d in docs] == [1, 0, 0, 1, 1, 1]
    assert frame["question"].tolist() == [d["sentence"] for d in docs] and (frame["k"] == 2).all()


def test_both_acc_mutual_info_layouts_pick_the_conditional_requests():
    new = rows_of(NEW / f"samples_arc_challenge_mi_{DATE}.jsonl", "arc_challenge_mi")[1]["option_logprobs"]
    plain = rows_of(NEW / f"samples_arc_challenge_{DATE}.jsonl", "arc_challenge")[1]["option_logprobs"]
    early = rows_of(EARLY / "pretrained__benchaudit__tiny-llama_arc_challenge_mi.jsonl", "arc_challenge_mi")[1]["option_logprobs"]
    assert [len(x) for x in new] == [4, 4, 4, 4, 4, 4, 3]
    # the same model on the same documents: the conditional log-likelihoods of every layout agree (batches differ
    # between the runs, so to float rounding), and differ from the unconditional ones by far more
    for a, b, c in zip(new, plain, early):
        assert np.allclose(a, b, atol=1e-3) and np.allclose(a, c, atol=1e-3)
    record = raw_records(EARLY / "pretrained__benchaudit__tiny-llama_arc_challenge_mi.jsonl")[0]
    unconditional = [float(r[0]) for r in record["filtered_resps"][1::2]]
    assert not np.allclose(early[0], unconditional, atol=1.0)


def test_both_naming_schemes_are_found_with_task_model_and_metrics():
    early = {r.task: r for r in find_lm_eval_runs(str(EARLY))}
    assert set(early) == {"winogrande", "arc_challenge_mi"}
    assert {(r.model, r.date, r.results_path, r.problem) for r in early.values()} == \
        {("benchaudit/tiny-llama", None, str(EARLY / "results.json"), None)}
    assert early["winogrande"].metrics["acc,none"] == pytest.approx(4 / 6)
    (run,) = find_lm_eval_runs(str(FIXTURES / "main-2024-04"))
    assert (run.task, run.model, run.output_type) == ("winogrande", "benchaudit/tiny-llama", "multiple_choice")


def test_an_early_file_without_its_results_json_is_a_named_problem(tmp_path):
    shutil.copy(EARLY / "pretrained__benchaudit__tiny-llama_winogrande.jsonl", tmp_path)
    (run,) = find_lm_eval_runs(str(tmp_path))
    assert run.problem.endswith("not samples_<task>_<date>.jsonl, and no results.json beside it names its task")
    assert str(tmp_path / "pretrained__benchaudit__tiny-llama_winogrande.jsonl") in run.problem


@pytest.mark.parametrize("task,kind,why", [("gsm_local", "generate_until", "generated text"),
                                           ("wikitext_local", "loglikelihood_rolling", "whole texts")])
def test_generation_and_perplexity_tasks_are_refused_naming_task_and_file(task, kind, why, tmp_path):
    runs = {r.task: r for r in find_lm_eval_runs(str(NEW.parent))}
    path = next(NEW.glob(f"samples_{task}_*.jsonl"))
    assert runs[task].problem.startswith(f"{path}: task {task} is a {kind} task (output_type in ")
    assert why in runs[task].problem and all(runs[t].problem is None for t in MC_TASKS)
    alone = tmp_path / path.name  # without its results file, the records' requests say the same
    shutil.copy(path, alone)
    with pytest.raises(LmEvalError, match=f"^{alone}: task {task} is a {kind} task \\(line 1's requests\\): .*{why}"):
        read_lm_eval_samples(str(alone))


def test_each_bad_line_is_a_rejection_naming_its_line(tmp_path):
    good = (NEW / f"samples_winogrande_{DATE}.jsonl").read_bytes().splitlines()  # doc_id 0..5 on lines 1..6
    second = json.loads(good[1])

    def copy(**changes) -> bytes:
        return json.dumps({**second, **changes}).encode()

    lines = good + [b"[1, 2]", b'{"doc_id": 9, "doc": "caf\xe9"}', good[1], copy(doc_id=1.7), copy(doc_id=True),
                    copy(doc_id="4"), b"{not json", b'"a string"']
    path = tmp_path / f"samples_winogrande_{DATE}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    samples = read_lm_eval_samples(str(path))
    repeat = "doc_id 1 appears on lines 2 and 9: every copy dropped (lm-eval writes one record per document and filter)"
    assert [(r["line"], r["id"], r["reason"]) for r in samples.rejected] == [
        (2, "winogrande:1", repeat),
        (7, None, "a JSON array, not an object"),
        (8, None, "not UTF-8 (byte 0xe9 at byte 26 of the line)"),
        (9, "winogrande:1", repeat),
        (10, None, "doc_id 1.7 is not an integer"),
        (11, None, "doc_id true is not an integer"),
        (12, None, 'doc_id "4" is not an integer'),
        (13, None, "not JSON (Expecting property name enclosed in double quotes)"),
        (14, None, "a JSON string, not an object"),
    ]
    assert samples.records == 14 and samples.table.column("doc_id").to_pylist() == [0, 2, 3, 4, 5]


def test_a_file_of_rejected_lines_reads_as_an_empty_table(tmp_path):
    path = tmp_path / f"samples_winogrande_{DATE}.jsonl"
    path.write_bytes(b'[1]\n"x"\n{"doc_id": 0}\n')
    samples = read_lm_eval_samples(str(path))
    assert samples.table.num_rows == 0 and samples.table.schema.field("option_logprobs").type.value_type.bit_width == 64
    assert [(r["line"], r["reason"]) for r in samples.rejected] == [
        (1, "a JSON array, not an object"), (2, "a JSON string, not an object"),
        (3, "arguments is neither the gen_args_<i> object nor a list of requests: None")]


def test_an_early_array_file_broken_inside_is_one_error_naming_file_and_line(tmp_path):
    text = (EARLY / "pretrained__benchaudit__tiny-llama_winogrande.jsonl").read_text()
    end = text.index('"doc_id": 3')
    start = text[:end].count("\n")  # the line of the "{" that opens doc 3's record, just above its doc_id
    last = text[:end].count("\n") + 1
    cut = tmp_path / "pretrained__benchaudit__tiny-llama_winogrande.jsonl"
    cut.write_text(text[:end])  # lm-eval died while writing: the array never closes
    with pytest.raises(LmEvalError, match=f"^{cut}: line {start}: the record starting there is not JSON \\(.* at line "
                                          f"{last}\\); .*nothing of it can be read"):
        read_lm_eval_samples(str(cut), "winogrande")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(text.encode()[:40] + b"\xff" + text.encode()[40:])
    with pytest.raises(LmEvalError, match=f"^{bad}: line {text[:40].count(chr(10)) + 1}: not UTF-8 \\(byte 0xff\\)"):
        read_lm_eval_samples(str(bad), "winogrande")
