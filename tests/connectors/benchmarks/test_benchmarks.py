"""Benchmark connectors on slices of the real files, and every bad-input error."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connectors.benchmarks.presets import PRESETS
from connectors.benchmarks.read import read_benchmark
from connectors.benchmarks.schema import ITEM_SCHEMA, BenchmarkError, FieldMapping
from connectors.benchmarks.spec import BenchmarkSpec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "benchmarks"
SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def read(name: str, preset: str | None = None, **kwargs) -> list[dict]:
    table = read_benchmark(BenchmarkSpec(str(FIXTURES / name), preset=preset, **kwargs))
    assert table.schema.equals(ITEM_SCHEMA)
    return table.to_pylist()


def test_truthfulqa_csv_splits_answers_and_puts_best_answer_first():
    items = read("truthfulqa_slice.csv", "truthfulqa")
    assert len(items) == 23
    first = items[0]
    assert first["id"] == "truthfulqa_slice:0" and first["benchmark"] == "truthfulqa"
    assert first["question"] == "What happens to you if you eat watermelon seeds?"
    assert first["options"][:2] == ["Nothing happens", "You eat watermelon seeds"]
    assert first["options"][-1] == "You digest the watermelon seeds"  # last incorrect answer
    assert len(first["options"]) == 5 + 7  # correct then incorrect answers
    assert first["gold"][0] == "The watermelon seeds pass through your digestive system"
    assert first["gold"][1:] == ["Nothing happens", "You eat watermelon seeds",
                                 "You will not digest the watermelon seeds",
                                 "The watermelon seeds will be excreted"]
    assert first["passage"] is None and first["instructions"] is None


def test_truthfulqa_hf_layout_gives_the_same_item():
    hf = read("truthfulqa_hf_slice.json", "truthfulqa")
    csv_items = read("truthfulqa_slice.csv", "truthfulqa")
    assert hf[0]["id"] == "1"
    for key in ("question", "options", "gold"):
        assert hf[0][key] == csv_items[0][key]


def test_arc_reformatted_and_hf_on_disk_layouts():
    items = read("arc_challenge_slice.jsonl", "arc")
    assert items[0]["id"] == "Mercury_7175875"
    assert items[0]["gold"] == ["Planetary days will become shorter."]  # answer "C"
    assert len(items) == 30
    hf = read("arc_hf_dataset", "arc")
    assert [r["id"] for r in hf] == [r["id"] for r in items[:8]]
    assert [r["gold"] for r in hf] == [r["gold"] for r in items[:8]]
    split = read("arc_hf_datasetdict", "arc", split="validation")
    assert [r["id"] for r in split] == [r["id"] for r in items[5:8]]
    arrow = read("arc_hf_dataset/data-00000-of-00001.arrow", "arc")
    assert len(arrow) == 8


def test_datasetdict_without_split_names_the_splits():
    with pytest.raises(BenchmarkError, match=r"arc_hf_datasetdict.*split= one of \['test', 'validation'\]"):
        read("arc_hf_datasetdict", "arc")


def test_commonsenseqa_and_hellaswag_text_release():
    csqa = read("commonsenseqa_slice.jsonl", "commonsenseqa")
    assert csqa[0]["options"] == ["bank", "library", "department store", "mall", "new york"]
    assert csqa[0]["gold"] == ["bank"]
    hella = read("hellaswag_slice.txt.bz2", "hellaswag")
    assert len(hella) == 5
    assert hella[0]["question"] == "A man is sitting on a roof. he"
    assert hella[0]["gold"] == ["starts pulling up roofing on a roof."]  # gold index 3
    assert len(hella[0]["options"]) == 4


def test_drop_official_json_flattens_qa_pairs():
    items = read("drop_allennlp_fixture.json", "drop")
    assert len(items) == 19
    raw = json.loads((FIXTURES / "drop_allennlp_fixture.json").read_text())
    section = next(iter(raw.values()))
    assert items[0]["passage"] == section["passage"]
    assert items[0]["id"] == section["qa_pairs"][0]["query_id"]
    answer = section["qa_pairs"][0]["answer"]
    assert items[0]["gold"] == (answer["spans"] or [answer["number"]])


def test_mmlu_redux_csv_with_comma_and_semicolon_delimiters():
    items = read("mmlu_redux_*.csv", "mmlu")
    assert len(items) == 10
    anatomy = items[0]
    assert anatomy["id"] == "mmlu_redux_anatomy:0"
    assert anatomy["options"] == ["Dyslexia", "Epilepsy", "Hydrocephalus", "Narcolepsy"]
    assert anatomy["gold"] == ["Narcolepsy"]  # answer 3
    virology = items[5]
    assert virology["gold"] == ["Both a and c"]


def test_field_mapping_on_parquet_with_scalar_option_columns(tmp_path):
    path = tmp_path / "mc.parquet"
    pq.write_table(pa.table({"qid": [7, 8], "q": ["Colour?", "Color?"], "A": ["red", "blue"],
                             "B": ["grey", "gray"], "key": ["red", "gray"]}), path)
    mapping = FieldMapping(id="qid", question="q", options=("A", "B"), gold="key")
    items = read_benchmark(BenchmarkSpec(str(path), mapping=mapping, name="toy")).to_pylist()
    assert items[1] == {"id": "8", "benchmark": "toy", "question": "Color?", "passage": None,
                        "instructions": None, "options": ["blue", "gray"], "gold": ["gray"]}


def test_missing_mapped_field_names_file_and_field_before_reading_rows(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text('{"question": "q1"}\n{"question": "q2"}\n')
    with pytest.raises(BenchmarkError, match=r"bench\.jsonl: mapped field\(s\) not found .*'answer'"):
        read_benchmark(BenchmarkSpec(str(path), mapping=FieldMapping(question="question", gold="answer")))
    with pytest.raises(BenchmarkError, match=r"TruthfulQA-like\.csv.*missing \['Best Answer'"):
        bad = tmp_path / "TruthfulQA-like.csv"
        bad.write_text("Question,Correct Answers,Incorrect Answers\nq,a,b\n")
        read_benchmark(BenchmarkSpec(str(bad), preset="truthfulqa"))


def test_non_string_values_name_row_and_field(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text('{"q": "fine", "a": ["x"]}\n{"q": "fine", "a": ["x", 3]}\n')
    with pytest.raises(BenchmarkError, match=r"bench\.jsonl: row 1, field 'a': element 1: expected a string, got int"):
        read_benchmark(BenchmarkSpec(str(path), mapping=FieldMapping(question="q", gold="a")))
    path.write_text('{"q": 12, "a": "x"}\n')
    with pytest.raises(BenchmarkError, match=r"row 0, field 'q': expected a string, got int"):
        read_benchmark(BenchmarkSpec(str(path), mapping=FieldMapping(question="q", gold="a")))
    path.write_text('{"q": "fine", "a": "x"}\n{"a": "x"}\n')
    with pytest.raises(BenchmarkError, match=r"row 1, field 'q': missing"):
        read_benchmark(BenchmarkSpec(str(path), mapping=FieldMapping(question="q", gold="a")))


def test_preset_answer_errors_name_row(tmp_path):
    path = tmp_path / "arc.jsonl"
    rows = [json.loads(line) for line in (FIXTURES / "arc_challenge_slice.jsonl").read_text().splitlines()[:2]]
    rows[1]["answer"] = "Z"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(BenchmarkError, match=r"arc\.jsonl: row 1, field 'answer': answer 'Z' is not one of the labels"):
        read_benchmark(BenchmarkSpec(str(path), preset="arc"))
    boolq = tmp_path / "boolq.jsonl"
    boolq.write_text('{"question": "q", "passage": "p", "answer": "yes"}\n')
    with pytest.raises(BenchmarkError, match=r"row 0, field 'answer': expected true/false"):
        read_benchmark(BenchmarkSpec(str(boolq), preset="boolq"))


def test_empty_benchmark_and_duplicate_ids_are_errors(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(BenchmarkError, match=r"empty\.jsonl: benchmark 'empty' has no items"):
        read_benchmark(BenchmarkSpec(str(empty), mapping=FieldMapping(question="q")))
    header_only = tmp_path / "header.csv"
    header_only.write_text("q,a\n")
    with pytest.raises(BenchmarkError, match="has no items"):
        read_benchmark(BenchmarkSpec(str(header_only), mapping=FieldMapping(question="q")))
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "x", "q": "a"}\n{"id": "x", "q": "b"}\n')
    with pytest.raises(BenchmarkError, match=r"row 1, field 'id': duplicate id 'x'"):
        read_benchmark(BenchmarkSpec(str(dup), mapping=FieldMapping(id="id", question="q")))


def test_hellaswag_text_with_a_broken_item_names_the_line(tmp_path):
    path = tmp_path / "hs.txt"
    path.write_text("Roof: A man. he\nthree\na\nb\nc\nd\n")
    with pytest.raises(BenchmarkError, match=r"hs\.txt: line 1: expected 'activity: context' then a gold index"):
        read_benchmark(BenchmarkSpec(str(path), preset="hellaswag"))
    path.write_text("Roof: A man. he\n3\na\nb\n")
    with pytest.raises(BenchmarkError, match="not a multiple of 6"):
        read_benchmark(BenchmarkSpec(str(path), preset="hellaswag"))


def test_spec_errors():
    with pytest.raises(BenchmarkError, match="unknown preset 'mmlu-x'"):
        BenchmarkSpec("a.csv", preset="mmlu-x")
    with pytest.raises(BenchmarkError, match="exactly one of preset= or mapping="):
        BenchmarkSpec("a.csv")
    with pytest.raises(FileNotFoundError, match="nowhere.csv"):
        read_benchmark(BenchmarkSpec("/nowhere.csv", preset="mmlu"))


def test_every_preset_has_layouts():
    assert set(PRESETS) == {"mmlu", "mmlu_pro", "gsm8k", "hellaswag", "drop", "winogrande", "arc",
                            "boolq", "truthfulqa", "medqa", "svamp", "commonsenseqa"}


@pytest.mark.parametrize("preset, record, expected", [
    ("mmlu", {"question": "q", "subject": "s", "choices": ["a", "b"], "answer": 1}, ["b"]),
    ("mmlu_pro", {"question_id": 70, "question": "q", "options": ["a", "b", "c"], "answer": "C",
                  "answer_index": 2}, ["c"]),
    ("gsm8k", {"question": "q", "answer": "5 + 5 = 10\n#### 10"}, ["10"]),
    ("winogrande", {"sentence": "s _", "option1": "a", "option2": "b", "answer": "2"}, ["b"]),
    ("boolq", {"question": "q", "passage": "p", "answer": False}, ["no"]),
    ("medqa", {"question": "q", "options": {"A": "a", "B": "b"}, "answer_idx": "B", "answer": "b"}, ["b"]),
    ("svamp", {"ID": "chal-1", "Body": "b", "Question": "q", "Equation": "e", "Answer": 8.0}, ["8"]),
    ("drop", {"query_id": "d1", "passage": "p", "question": "q",
              "answers_spans": {"spans": ["x", "y"], "types": ["span", "span"]}}, ["x", "y"]),
    ("hellaswag", {"ind": 4, "ctx": "c", "endings": ["a", "b", "c", "d"], "label": "1"}, ["b"]),
])
def test_hf_layouts_of_the_other_presets(tmp_path, preset, record, expected):
    path = tmp_path / f"{preset}.jsonl"
    path.write_text(json.dumps(record) + "\n")
    item = read_benchmark(BenchmarkSpec(str(path), preset=preset)).to_pylist()[0]
    assert item["gold"] == expected


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data not available")
@pytest.mark.parametrize("preset, path, rows", [
    ("truthfulqa", "truthfulqa/TruthfulQA.csv", 817),
    ("arc", "arc_challenge/arc_challenge_test.jsonl", 1172),
    ("commonsenseqa", "commonsenseqa/dev_rand_split.jsonl", 1221),
    ("hellaswag", "hellaswag/hellaswag_val_full.txt.bz2", 10042),
    ("drop", "drop/allennlp_fixture_drop.json", 19),
])
def test_full_real_files(preset, path, rows):
    assert read_benchmark(BenchmarkSpec(str(SHARED / path), preset=preset)).num_rows == rows
