"""Presets: the real layouts of widely used benchmarks, as data.

Each preset lists one ``Layout`` per published layout (the Hugging Face dataset and the original
release where they differ); a file uses the first layout whose columns it has. A preset may
replace the generic reader for a format (HellaSwag's text release, the official DROP JSON).

Choices that shape the audit: gold holds answer texts (the option a letter or index points to);
TruthfulQA's options are its correct then incorrect answers and its gold the best answer followed
by the other correct answers; BoolQ's gold is ``yes``/``no``; GSM8K's gold is the final answer
after ``####``; DROP's gold is the answer's spans, number, or date as ``day month year`` (the
official scorer's order); DROP's validated answers are not carried.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from connectors.benchmarks.formats import (
    RecordReader,
    Records,
    csv_records,
    drop_json_records,
    guess_format,
    hellaswag_text_records,
    hf_records,
    json_records,
    parquet_records,
)
from connectors.benchmarks.schema import BenchmarkError, Layout, RowRef, pick, text, texts

Record = dict[str, Any]


@dataclass(frozen=True)
class Preset:
    """Layouts of one benchmark; ``readers`` replaces the generic reader for some formats."""

    name: str
    layouts: tuple[Layout, ...]
    readers: dict[str, RecordReader] = field(default_factory=dict)
    headerless_csv: tuple[str, ...] = ()
    note: str = ""


def _optional_id(record: Record, column: str) -> str | None:
    value = record.get(column)
    return None if value is None else str(value)


def _letter_options(record: Record, ref: RowRef, key: str, options_col: str) -> dict[str, Any]:
    """``{"label": [...], "text": [...]}`` choices with a letter answer (ARC, CommonsenseQA)."""
    choices = record[options_col]
    if not isinstance(choices, dict):
        raise ref.error(options_col, f"expected {{label, text}}, got {type(choices).__name__}")
    options = texts(choices, "text", ref)
    labels = texts(choices, "label", ref)
    return {"options": options, "gold": [pick(options, record[key], ref, key, labels)]}


def read_records(path: str, fmt: str | None, preset: Preset | None, split: str | None,
                 encoding: str) -> tuple[list[str], Records]:
    """(column names, records) of one file, through the preset's own reader if it has one."""
    fmt = fmt or guess_format(path)
    if preset and fmt in preset.readers:
        return preset.readers[fmt](path, encoding)
    if fmt == "csv":
        return csv_records(path, encoding, preset.headerless_csv if preset else ())
    if fmt in ("jsonl", "json"):
        return json_records(path, encoding)
    if fmt == "parquet":
        return parquet_records(path)
    if fmt == "hf":
        return hf_records(path, split)
    raise BenchmarkError(f"{path}: format {fmt!r} is read only by a preset that knows it (hellaswag)")


def literal_list(record: dict[str, Any], column: str, ref: RowRef) -> list[str]:
    """A list written into a CSV cell as a Python/JSON literal (MMLU-Redux ``choices``)."""
    raw = text(record, column, ref)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError) as exc:
        raise ref.error(column, f"not a list literal ({exc}): {raw!r:.60}") from exc
    return texts({column: value}, column, ref)


# --- MMLU / MMLU-Pro -----------------------------------------------------------------------
def _mmlu_hf(r: Record, ref: RowRef) -> Record:
    """cais/mmlu has a list; MMLU-Redux CSVs hold the same list as a literal string."""
    options = literal_list(r, "choices", ref) if isinstance(r["choices"], str) else texts(r, "choices", ref)
    return {"id": None, "question": text(r, "question", ref), "options": options,
            "gold": [pick(options, r["answer"], ref, "answer")]}


def _mmlu_original(r: Record, ref: RowRef) -> Record:
    options = [text(r, c, ref) for c in "ABCD"]
    return {"id": None, "question": text(r, "question", ref), "options": options,
            "gold": [pick(options, r["answer"], ref, "answer", list("ABCD"))]}


def _mmlu_pro(r: Record, ref: RowRef) -> Record:
    options = texts(r, "options", ref)
    return {"id": _optional_id(r, "question_id"), "question": text(r, "question", ref),
            "options": options, "gold": [pick(options, r["answer_index"], ref, "answer_index")]}


# --- GSM8K / SVAMP ---------------------------------------------------------------------------
def _gsm8k(r: Record, ref: RowRef) -> Record:
    solution = text(r, "answer", ref)
    if "####" not in solution:
        raise ref.error("answer", "no '####' before the final answer")
    return {"id": None, "question": text(r, "question", ref),
            "gold": [solution.rsplit("####", 1)[1].strip()]}


def _number(r: Record, column: str, ref: RowRef) -> str:
    value = r.get(column)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ref.error(column, f"expected a number, got {type(value).__name__}")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _svamp(r: Record, ref: RowRef) -> Record:
    return {"id": str(r["ID"]), "passage": text(r, "Body", ref),
            "question": text(r, "Question", ref), "gold": [_number(r, "Answer", ref)]}


# --- HellaSwag --------------------------------------------------------------------------------
def _hellaswag(r: Record, ref: RowRef) -> Record:
    options = texts(r, "endings", ref)
    return {"id": _optional_id(r, "ind"), "question": text(r, "ctx", ref), "options": options,
            "gold": [pick(options, r["label"], ref, "label")]}


# --- DROP --------------------------------------------------------------------------------------
def _drop_answer(answer: Any, ref: RowRef) -> list[str]:
    if not isinstance(answer, dict):
        raise ref.error("answer", f"expected an object, got {type(answer).__name__}")
    if answer.get("spans"):
        return texts(answer, "spans", ref)
    if str(answer.get("number", "")).strip():
        return [str(answer["number"]).strip()]
    date = answer.get("date") or {}
    parts = [str(date.get(k, "")).strip() for k in ("day", "month", "year")]
    if any(parts):
        return [" ".join(p for p in parts if p)]
    raise ref.error("answer", "no spans, number or date")


def _drop_official(r: Record, ref: RowRef) -> Record:
    return {"id": text(r, "query_id", ref), "passage": text(r, "passage", ref),
            "question": text(r, "question", ref), "gold": _drop_answer(r["answer"], ref)}


def _drop_hf(r: Record, ref: RowRef) -> Record:
    answers = r["answers_spans"]
    if not isinstance(answers, dict):
        raise ref.error("answers_spans", f"expected {{spans, types}}, got {type(answers).__name__}")
    return {"id": text(r, "query_id", ref), "passage": text(r, "passage", ref),
            "question": text(r, "question", ref), "gold": texts(answers, "spans", ref)}


# --- WinoGrande / BoolQ / TruthfulQA / MedQA / ARC / CommonsenseQA ------------------------------
def _winogrande(r: Record, ref: RowRef) -> Record:
    options = [text(r, "option1", ref), text(r, "option2", ref)]
    return {"id": _optional_id(r, "qID"), "question": text(r, "sentence", ref), "options": options,
            "gold": [pick(options, r["answer"], ref, "answer", ["1", "2"])]}


def _boolq(r: Record, ref: RowRef) -> Record:
    answer = r["answer"]
    if not isinstance(answer, bool):
        raise ref.error("answer", f"expected true/false, got {answer!r:.30}")
    return {"id": None, "question": text(r, "question", ref), "passage": text(r, "passage", ref),
            "gold": ["yes" if answer else "no"]}


def _truthfulqa(best: str, correct: list[str], incorrect: list[str]) -> Record:
    return {"options": correct + incorrect, "gold": list(dict.fromkeys([best, *correct]))}


def _truthfulqa_csv(r: Record, ref: RowRef) -> Record:
    return {"id": None, "question": text(r, "Question", ref), **_truthfulqa(
        text(r, "Best Answer", ref), texts(r, "Correct Answers", ref, "; "),
        texts(r, "Incorrect Answers", ref, "; "))}


def _truthfulqa_hf(r: Record, ref: RowRef) -> Record:
    return {"id": _optional_id(r, "id"), "question": text(r, "question", ref), **_truthfulqa(
        text(r, "best_answer", ref), texts(r, "correct_answers", ref),
        texts(r, "incorrect_answers", ref))}


def _medqa(r: Record, ref: RowRef) -> Record:
    choices = r["options"]
    if not isinstance(choices, dict):
        raise ref.error("options", f"expected {{letter: text}}, got {type(choices).__name__}")
    labels = sorted(choices)
    options = [text(choices, k, ref) for k in labels]
    return {"id": None, "question": text(r, "question", ref), "options": options,
            "gold": [pick(options, r["answer_idx"], ref, "answer_idx", labels)]}


def _arc_hf(r: Record, ref: RowRef) -> Record:
    return {"id": text(r, "id", ref), "question": text(r, "question", ref),
            **_letter_options(r, ref, "answerKey", "choices")}


def _arc_reformatted(r: Record, ref: RowRef) -> Record:
    entries = r["options"]
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ref.error("options", "expected a list of {label, text}")
    choices = {"label": [e.get("label") for e in entries], "text": [e.get("text") for e in entries]}
    return {"id": text(r, "id", ref), "question": text(r, "question", ref),
            **_letter_options({"answer": r["answer"], "options": choices}, ref, "answer", "options")}


def _ai2_original(r: Record, ref: RowRef) -> Record:
    """The AI2 release of ARC and CommonsenseQA: ``question: {stem, choices: [{label, text}]}``."""
    question = r["question"]
    if not isinstance(question, dict):
        raise ref.error("question", f"expected {{stem, choices}}, got {type(question).__name__}")
    flat = {"id": r["id"], "question": text(question, "stem", ref),
            "options": question.get("choices"), "answer": r["answerKey"]}
    return _arc_reformatted(flat, ref)


def _csqa(r: Record, ref: RowRef) -> Record:
    return {"id": text(r, "id", ref), "question": text(r, "question", ref),
            **_letter_options(r, ref, "answerKey", "choices")}


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("mmlu", (Layout("hf", ("question", "choices", "answer"), _mmlu_hf),
                    Layout("original", ("question", "A", "B", "C", "D", "answer"), _mmlu_original)),
           headerless_csv=("question", "A", "B", "C", "D", "answer"),
           note="cais/mmlu (choices list, answer index), MMLU-Redux CSV (choices literal), "
                "original headerless CSV"),
    Preset("mmlu_pro", (Layout("hf", ("question", "options", "answer_index"), _mmlu_pro),),
           note="TIGER-Lab/MMLU-Pro"),
    Preset("gsm8k", (Layout("hf", ("question", "answer"), _gsm8k),), note="openai/gsm8k"),
    Preset("hellaswag", (Layout("hf", ("ctx", "endings", "label"), _hellaswag),),
           readers={"text": hellaswag_text_records},
           note="Rowan/hellaswag or official jsonl; 6-line text release (.txt/.txt.bz2)"),
    Preset("drop", (Layout("official", ("query_id", "passage", "question", "answer"), _drop_official),
                    Layout("hf", ("query_id", "passage", "question", "answers_spans"), _drop_hf)),
           readers={"json": drop_json_records}, note="official DROP JSON or ucinlp/drop"),
    Preset("winogrande", (Layout("hf", ("sentence", "option1", "option2", "answer"), _winogrande),),
           note="allenai/winogrande or the original jsonl (qID)"),
    Preset("arc", (Layout("hf", ("id", "question", "choices", "answerKey"), _arc_hf),
                   Layout("reformatted", ("id", "question", "options", "answer"), _arc_reformatted),
                   Layout("ai2", ("id", "question", "answerKey"), _ai2_original)),
           note="allenai/ai2_arc, jsonl with options [{label, text}] and answer, or the AI2 jsonl"),
    Preset("boolq", (Layout("hf", ("question", "passage", "answer"), _boolq),), note="google/boolq"),
    Preset("truthfulqa", (
        Layout("csv", ("Question", "Best Answer", "Correct Answers", "Incorrect Answers"), _truthfulqa_csv),
        Layout("hf", ("question", "best_answer", "correct_answers", "incorrect_answers"), _truthfulqa_hf)),
        note="TruthfulQA.csv ('; '-separated answers) or the generation-split layout"),
    Preset("medqa", (Layout("jsonl", ("question", "options", "answer_idx"), _medqa),),
           note="MedQA (USMLE) jsonl: options {letter: text}, answer_idx"),
    Preset("svamp", (Layout("original", ("ID", "Body", "Question", "Answer"), _svamp),),
           note="SVAMP.json or ChilleD/SVAMP"),
    Preset("commonsenseqa", (Layout("hf", ("id", "question", "choices", "answerKey"), _csqa),
                             Layout("ai2", ("id", "question", "answerKey"), _ai2_original)),
           note="tau/commonsense_qa, or the original jsonl (question: {stem, choices})"),
)}
