"""Every layout lm-eval has written, read into one schema: the real 0.4.13 / 0.4.2 fixtures (tests/fixtures/lm_eval,
written by lm-eval itself), the same records as Parquet rows (the Open LLM Leaderboard "details" tables), the
early-0.4 flat-pair partial evaluation, and v0.3 ``--write_out`` files; items from the document by task family,
and what the probabilities are (letters with their label mass, or continuations raw / per character)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow.json as paj
import pyarrow.parquet as pq
import pytest

from connectors.landscape.lm_eval import LmEvalError, find_lm_eval_runs, group_of, read_lm_eval_samples, task_groups
from connectors.landscape.lm_eval_items import document_item
from connectors.landscape.lm_eval_records import SAMPLE_SCHEMA

FIXTURES = Path(__file__).parents[2] / "fixtures" / "lm_eval"
NEW = FIXTURES / "v0.4.13" / "benchaudit__tiny-llama"
EARLY = FIXTURES / "v0.4.2"
DATE = "2026-12-02T02-27-04.119124"
MC_TASKS = ("winogrande", "arc_challenge", "arc_challenge_mi", "hellaswag", "copa")
COLUMNS = ["id", "question", "options", "continuations", "gold", "option_logprobs", "probability", "item_rule", "k"]


def records(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if text.lstrip().startswith("[") else [json.loads(line) for line in text.splitlines()]


def rows(path: Path, task: str, **kwargs) -> list[dict]:
    samples = read_lm_eval_samples(str(path), task, **kwargs)
    assert samples.rejected == []
    return samples.table.select(COLUMNS).to_pylist()


@pytest.mark.parametrize("task", MC_TASKS)
def test_parquet_details_rows_read_as_the_jsonl_they_were_made_from(task, tmp_path):
    """The leaderboard's details tables are lm-eval's samples JSON lines loaded by the Hub (pyarrow's JSON reader, as
    ``datasets``' json builder) and stored as Parquet: structs for the objects, a request a record lacks as null."""
    source = NEW / f"samples_{task}_{DATE}.jsonl"
    table = paj.read_json(source)
    parquet = tmp_path / f"samples_{task}_{DATE}.parquet"
    pq.write_table(table, parquet, row_group_size=2)  # several row groups: read batch by batch
    if task == "arc_challenge":  # the 3-option document: its gen_args_3 is a null struct in the widest schema
        assert table.column("arguments").to_pylist()[-1]["gen_args_3"] is None
    samples = read_lm_eval_samples(str(parquet))
    assert samples.task == task and samples.unit == "row" and samples.rejected == []
    assert samples.table.select(COLUMNS).to_pylist() == rows(source, task)
    assert task in {r.task for r in find_lm_eval_runs(str(tmp_path))}


def test_a_parquet_file_that_is_not_parquet_is_one_named_error(tmp_path):
    bad = tmp_path / f"samples_arc_challenge_{DATE}.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(LmEvalError, match=f"^{bad}: not a Parquet file"):
        read_lm_eval_samples(str(bad))
    good = tmp_path / "good.parquet"
    pq.write_table(paj.read_json(NEW / f"samples_copa_{DATE}.jsonl"), good, row_group_size=2)
    data = bytearray(good.read_bytes())
    data[200:260] = b"\x00" * 60  # inside the second row group's pages
    bad.write_bytes(bytes(data))
    with pytest.raises(LmEvalError, match=f"^{bad}: row [0-9]+ on: unreadable Parquet"):
        read_lm_eval_samples(str(bad))


def test_early_partial_evaluation_with_one_flat_pair_reads_as_the_list_layout(tmp_path):
    """Early-0.4 Winogrande records as published (issue 31, item 7): ``arguments`` one flat [context, continuation]
    pair, ``resps``/``filtered_resps`` one answer per option. Before, this failed "arguments is neither the
    gen_args_<i> object nor a list of requests". Built from the real 0.4.2 records, only ``arguments`` flattened."""
    source = EARLY / "pretrained__benchaudit__tiny-llama_winogrande.jsonl"
    flat = [{**r, "arguments": r["arguments"][0]} for r in records(source)]
    path = tmp_path / "pretrained__benchaudit__tiny-llama_winogrande.jsonl"
    path.write_text(json.dumps(flat, indent=2))
    got, want = rows(path, "winogrande"), rows(source, "winogrande")
    for g, w, r in zip(got, want, flat):
        assert (g["question"], g["options"], g["gold"], g["option_logprobs"]) == \
            (w["question"], w["options"], w["gold"], w["option_logprobs"])
        assert g["item_rule"] == "winogrande" and g["options"] == [r["doc"]["option1"], r["doc"]["option2"]]
    assert len(got) == len(flat) == 6


def details_row(record: dict) -> dict:
    """A first-leaderboard details row, field by field as lighteval's ``DetailsLogger.log`` wrote it
    (huggingface/lighteval @ 010dc620955ceb369733b9958714969761083eb1, src/lighteval/logging/info_loggers.py:
    ``example`` = doc.query, ``full_prompt`` = doc.ctx, ``predictions`` = per choice (log-likelihood, argmax = gold),
    ``choices``, ``gold_index`` as a list, ``metrics``), with the real 0.4.13 record's values."""
    args = list(record["arguments"].values())
    return {"example": args[0]["arg_0"], "instruction": "", "full_prompt": args[0]["arg_0"], "num_effective_few_shots": 0,
            "num_asked_few_shots": 0, "predictions": [[float(ll), greedy == "True"] for ll, greedy in record["filtered_resps"]],
            "input_tokens": [[1, 2]] * len(args), "cont_tokens": [[3]] * len(args), "truncated": [0] * len(args),
            "padded": [0] * len(args), "gold": [], "choices": [a["arg_1"] for a in args],
            "gold_index": [int(record["target"])], "metrics": {"acc": record["acc"], "acc_norm": record["acc_norm"]}}


def test_first_leaderboard_details_rows_read_as_their_records(tmp_path):
    import pyarrow as pa

    source = records(NEW / f"samples_arc_challenge_{DATE}.jsonl")
    path = tmp_path / "details_harness|arc:challenge|25_2023-10-01T12-00-00.000000.parquet"
    pq.write_table(pa.Table.from_pylist([details_row(r) for r in source]), path)
    (run,) = find_lm_eval_runs(str(tmp_path))
    assert (run.task, run.date, run.problem) == ("harness|arc:challenge|25", "2023-10-01T12-00-00.000000", None)
    samples = read_lm_eval_samples(run.samples_path, run.task)
    assert samples.rejected == [] and samples.unit == "row"
    for row, record in zip(samples.table.to_pylist(), source):
        assert row["option_logprobs"] == [float(r[0]) for r in record["filtered_resps"]]
        assert row["options"] == record["doc"]["choices"]["text"] and row["item_rule"] == "generic"
        assert row["gold"] == int(record["target"]) and row["lm_eval_acc"] == record["acc"]


def write_out_entry(record: dict, with_greedy: bool) -> dict:
    """A v0.3 ``--write_out`` object, field by field as lm-eval's v0.3 evaluator wrote it (master branch,
    lm_eval/evaluator.py @ 0bf683b4e6a9df359b3156ba9ba8d62bdd47e0c0, lines 218-397): ``prompt_<i>`` =
    "".join(req.args) (context + continuation), ``logit_<i>`` = the response (MultipleChoiceTask keeps ``[0]``, the
    log-likelihood; other tasks the (loglikelihood, is_greedy) pair), ``truth`` = doc["gold"] for a
    MultipleChoiceTask, each metric as ``str(value)``. The values are the real 0.4.13 records'."""
    args = [(a["arg_0"], a["arg_1"]) for a in record["arguments"].values()]
    entry = {"doc_id": record["doc_id"]}
    for i, (ctx, cont) in enumerate(args):
        entry[f"prompt_{i}"] = ctx + cont
    for i, (ll, greedy) in enumerate(record["filtered_resps"]):
        entry[f"logit_{i}"] = [float(ll), greedy == "True"] if with_greedy else float(ll)
    entry["truth"] = int(record["target"])
    entry["acc"] = str(record["acc"])
    entry["acc_norm"] = str(record["acc_norm"])
    return entry


@pytest.mark.parametrize("with_greedy", [False, True])
def test_v03_write_out_files_read_with_the_prompts_split_and_lm_evals_acc(with_greedy, tmp_path):
    source = records(NEW / f"samples_arc_challenge_{DATE}.jsonl")
    path = tmp_path / "arc_challenge_write_out_info.json"
    path.write_text(json.dumps([write_out_entry(r, with_greedy) for r in source], indent=4, ensure_ascii=False))
    (run,) = find_lm_eval_runs(str(tmp_path))
    assert (run.task, run.model, run.problem) == ("arc_challenge", tmp_path.name, None)
    samples = read_lm_eval_samples(run.samples_path, run.task)
    assert samples.rejected == [] and samples.table.num_rows == len(source)
    for row, record in zip(samples.table.to_pylist(), source):
        args = list(record["arguments"].values())
        assert row["question"] == args[0]["arg_0"] and row["continuations"] == [a["arg_1"] for a in args]
        assert row["options"] == record["doc"]["choices"]["text"] and row["item_rule"] == "generic"
        assert row["option_logprobs"] == [float(r[0]) for r in record["filtered_resps"]]
        assert row["gold"] == int(record["target"]) and row["lm_eval_acc"] == record["acc"]
        assert row["is_greedy"] == ([r[1] == "True" for r in record["filtered_resps"]] if with_greedy else [None] * row["k"])


def test_a_write_out_object_that_cannot_be_read_is_its_own_rejection(tmp_path):
    good = write_out_entry(records(NEW / f"samples_arc_challenge_{DATE}.jsonl")[0], False)
    no_truth = {k: v for k, v in good.items() if k != "truth"} | {"doc_id": 1}
    same = good | {"doc_id": 2} | {f"prompt_{i}": "Q:" + "x" * i for i in range(4)}  # nothing shared up to a space
    path = tmp_path / "arc_challenge_write_out_info.json"
    path.write_text(json.dumps([good, no_truth, same, [1]], indent=4))
    starts = [i for i, line in enumerate(path.read_text().splitlines(), start=1) if line in ("    {", "    [")]
    samples = read_lm_eval_samples(str(path))
    assert [(r["line"], r["reason"]) for r in samples.rejected] == [
        (starts[1], "no truth"),
        (starts[2], "the prompts share no context ending in a space: cannot tell context from continuation"),
        (starts[3], "a JSON array, not an object")]
    assert samples.table.num_rows == 1 and samples.records == 4


# --- items from the document -------------------------------------------------------------------------------------

DOCS = {
    "mmlu": ({"question": "2+2?", "subject": "math", "choices": ["3", "4", "5", "6"], "answer": 1}, "mmlu_math",
             ("2+2?", ["3", "4", "5", "6"], 1)),
    "arc": ({"question": "Q?", "choices": {"text": ["a", "b", "c"], "label": ["A", "B", "C"]}, "answerKey": "C"},
            "arc_easy", ("Q?", ["a", "b", "c"], 2)),
    "commonsense_qa": ({"question": "Q?", "choices": {"text": list("abcde"), "label": list("ABCDE")}, "answerKey": "B"},
                       "commonsense_qa", ("Q?", list("abcde"), 1)),
    "hellaswag": ({"ctx": "A man sits.", "endings": ["x [title]", "y"], "label": "1", "query": "Roof: A man sits.",
                   "choices": ["x", "y"], "gold": 1}, "hellaswag", ("A man sits.", ["x", "y"], 1)),
    "winogrande": ({"sentence": "A _ b.", "option1": "X", "option2": "Y", "answer": "2"}, "winogrande",
                   ("A _ b.", ["X", "Y"], 1)),
    "piqa": ({"goal": "Open a jar", "sol1": "twist", "sol2": "push", "label": 0}, "piqa", ("Open a jar", ["twist", "push"], 0)),
    "openbookqa": ({"id": "7", "question_stem": "Sun is a", "choices": {"text": ["star", "moon"], "label": ["A", "B"]},
                    "answerKey": "A"}, "openbookqa", ("Sun is a", ["star", "moon"], 0)),
    "copa": ({"premise": "The man fell.", "choice1": "He slipped.", "choice2": "He sang.", "question": "cause", "label": 0},
             "copa", ("The man fell. (cause?)", ["He slipped.", "He sang."], 0)),
}


@pytest.mark.parametrize("rule", sorted(DOCS))
def test_each_task_family_reads_question_options_and_gold_from_its_document(rule):
    doc, task, want = DOCS[rule]
    assert document_item(doc, task, len(want[1])) == (*want, rule)
    assert document_item(doc, task, len(want[1]) + 1) is None  # other than the scored continuations: not this item


def test_letter_task_rows_carry_document_options_letter_probabilities_and_label_mass(tmp_path):
    """MMLU's default prompt scores " A".." D": the document's options become the item, the log-likelihoods
    the letter distribution, and the label mass Σ exp(loglik) is kept; the prompt is not the question."""
    doc = DOCS["mmlu"][0]
    prompt = "The following are multiple choice questions (with answers) about math.\n\n2+2?\nA. 3\nB. 4\nC. 5\nD. 6\nAnswer:"
    lls = [math.log(0.001), math.log(0.004), math.log(0.0005), math.log(0.0005)]
    record = {"doc_id": 0, "doc": doc, "target": 1, "arguments": [[prompt, f" {x}"] for x in "ABCD"],
              "resps": [[[ll, False]] for ll in lls], "filtered_resps": [[ll, i == 1] for i, ll in enumerate(lls)], "acc": 1.0}
    path = tmp_path / "pretrained__m_mmlu_math.jsonl"
    path.write_text(json.dumps([record], indent=2))
    for normalization in ("raw", "length"):  # letters are never length-normalised
        (row,) = read_lm_eval_samples(str(path), "mmlu_math", normalization, "m", "mmlu").table.to_pylist()
        assert (row["question"], row["options"], row["gold"], row["item_rule"]) == ("2+2?", ["3", "4", "5", "6"], 1, "mmlu")
        assert row["continuations"] == [" A", " B", " C", " D"] and row["probability"] == "letters"
        assert row["label_mass"] == pytest.approx(0.006) and row["option_logprobs"] == lls
        assert (row["task"], row["group"], row["model"]) == ("mmlu_math", "mmlu", "m")


@pytest.mark.parametrize("task", ["hellaswag", "arc_challenge"])
def test_length_normalization_reproduces_lm_evals_acc_norm_per_record(task):
    path = NEW / f"samples_{task}_{DATE}.jsonl"
    samples = read_lm_eval_samples(str(path), task, "length")
    for row, record in zip(samples.table.to_pylist(), records(path)):
        lengths = [len(c) - 1 for c in row["continuations"]]  # lm-eval: len(choice), the delimiter " " not counted
        raw = [float(r[0]) for r in record["filtered_resps"]]
        assert row["option_logprobs"] == pytest.approx([x / n for x, n in zip(raw, lengths)], abs=0)
        assert float(int(np.argmax(row["option_logprobs"])) == row["gold"]) == record["acc_norm"]
        assert row["probability"] == "continuations" and math.isnan(row["label_mass"])


def test_doc_id_beyond_64_bits_is_that_records_rejection(tmp_path):
    """Issue 33 item 12: before, the whole file stopped with "Python int too large to convert to C long"."""
    lines = (NEW / f"samples_winogrande_{DATE}.jsonl").read_text().splitlines()
    big = json.loads(lines[1])
    big["doc_id"] = 2**64 + 5
    path = tmp_path / f"samples_winogrande_{DATE}.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(big), *lines[2:]]) + "\n")
    samples = read_lm_eval_samples(str(path))
    assert samples.rejected == [{"line": 2, "id": None,
                                 "reason": "doc_id is a 65-bit integer, beyond the 64 bits of a document index"}]
    assert samples.table.column("doc_id").to_pylist() == [0, 2, 3, 4, 5]


def test_groups_come_from_group_subtasks_the_early_groups_listing_or_the_mmlu_family():
    nested = {"results": {}, "group_subtasks": {"mmlu": ["mmlu_stem", "mmlu_other"], "mmlu_stem": ["mmlu_algebra"],
                                                "mmlu_other": ["mmlu_nutrition"], "mmlu_algebra": [], "arc_easy": []}}
    assert task_groups(nested) == {"mmlu_algebra": "mmlu", "mmlu_nutrition": "mmlu"}
    early = {"results": {"mmlu": {"alias": "mmlu"}, "mmlu_stem": {"alias": " - stem"}, "mmlu_algebra": {"alias": "  - algebra"},
                         "arc_easy": {"alias": "arc_easy"}},
             "groups": {"mmlu": {}, "mmlu_stem": {}}}
    assert task_groups(early) == {"mmlu_stem": "mmlu", "mmlu_algebra": "mmlu"}
    assert group_of("mmlu_anatomy", {}) == "mmlu" and group_of("arc_easy", {"groups": task_groups(early)}) is None
    runs = {r.task: r for r in find_lm_eval_runs(str(NEW.parent))}
    assert all(runs[t].group is None for t in MC_TASKS)  # no group in these results, and not an MMLU subject


def test_schema_keeps_every_column_and_adds_the_contract():
    names = SAMPLE_SCHEMA.names
    assert names[:16] == ["id", "source_id", "benchmark", "perturbation", "variant", "doc_id", "question", "options", "k",
                          "gold", "option_logprobs", "is_greedy", "filter", "lm_eval_acc", "probability", "error"]
    assert names[16:] == ["continuations", "label_mass", "item_rule", "task", "group", "model"]


SMOLLM2 = FIXTURES / "smollm2-v0.4.13" / "smollm2-135m"
SMOLLM2_TASKS = {"ba_mmlu_anatomy": ("letters", "mmlu", "ba_mmlu"), "ba_mmlu_astronomy": ("letters", "mmlu", "ba_mmlu"),
                 "ba_piqa": ("continuations", "piqa", None), "ba_winogrande": ("continuations", "winogrande", None)}


@pytest.mark.parametrize("task", sorted(SMOLLM2_TASKS))
def test_real_smollm2_run_a_letter_group_an_option_text_task_and_a_partial_evaluation(task):
    """lm-eval 0.4.13 itself on the smollm2 fixture (tests/fixtures/lm_eval/README.md): the letter subtasks are
    pooled into their group from group_subtasks, read as letters with their label mass; lm-eval's acc (and acc_norm
    with length normalization) reproduced per record and as results_<date>.json reports it."""
    kind, rule, group = SMOLLM2_TASKS[task]
    runs = {r.task: r for r in find_lm_eval_runs(str(SMOLLM2.parent))}
    run = runs[task]
    assert (run.group, run.model, run.problem) == (group, "smollm2-135m", None)
    path = next(SMOLLM2.glob(f"samples_{task}_*.jsonl"))
    raw = records(path)
    for normalization in ("raw", "length"):
        samples = read_lm_eval_samples(run.samples_path, task, normalization, run.model, run.group)
        assert samples.rejected == [] and samples.probability == kind
        table = samples.table.to_pylist()
        assert {r["item_rule"] for r in table} == {rule} and {r["group"] for r in table} == {group}
        for row, record in zip(table, raw):
            lls = [float(r[0]) for r in record["filtered_resps"]]
            metric = "acc_norm" if normalization == "length" and kind == "continuations" and "acc_norm" in record else "acc"
            assert float(int(np.argmax(row["option_logprobs"])) == row["gold"]) == record[metric]
            if kind == "letters":
                assert row["option_logprobs"] == lls and row["continuations"] == [" A", " B", " C", " D"]
                assert row["label_mass"] == pytest.approx(math.fsum(math.exp(x) for x in lls), rel=1e-12)
                assert row["question"] == record["doc"]["question"] and row["options"] == record["doc"]["choices"]
            else:
                assert math.isnan(row["label_mass"])
    results = json.loads(next(SMOLLM2.glob("results_*.json")).read_text())["results"]
    accs = [float(int(np.argmax(r["option_logprobs"])) == r["gold"]) for r in read_lm_eval_samples(str(path), task).table.to_pylist()]
    assert sum(accs) / len(accs) == pytest.approx(results[task]["acc,none"], abs=1e-12)
