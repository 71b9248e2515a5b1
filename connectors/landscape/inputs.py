"""Files the landscape audit reads besides benchmarks: a user's prompt template, reviewer labels,
and MMLU-Redux (expert error labels, and the 14 HELM models' answers to its 5,700 questions).

MMLU-Redux (aryopg/mmlu-redux, CC BY 4.0) ships one CSV per subject, 48 comma- and 9
semicolon-delimited, one not UTF-8 (``moral_scenarios``: cp1252), with ``choices`` as a Python
list literal, ``answer`` a 0-based index and ``error_type`` spelt several ways (``ok``/``OK``,
``Wrong Groundtruth``/``wrong_groundtruth``). ``expert_bad`` is ``error_type != ok`` after
normalization (lower case, spaces to ``_``). The HELM file has the same questions, the gold
index, the normalised ``error_type`` and one letter column per model.
"""
from __future__ import annotations

import ast
import csv
import io
from dataclasses import dataclass

import fsspec
import numpy as np
import pandas as pd

from audit.landscape.flags import check_review_labels
from audit.landscape.prompts import McqaTemplate
from audit.landscape.structure import StructurePrompt
from audit.mcqa.items import LETTERS
from connectors.io.markup import csv_uncell

_HELM_BASE = ("question", "choices", "groundtruth_answer", "error_type")
_HELM_DERIVED = ("majority_llm_pred_", "gt_majority_agreement_", "gt_ratio_agreement_", "entropy_", "binary_error_type", "pred_")


def read_template(path: str) -> McqaTemplate:
    """A user's template file (same fields as the shipped ``mcqa_letter.json``)."""
    with fsspec.open(path, "rt", encoding="utf-8") as fh:
        return McqaTemplate.from_json(fh.read(), source=path)


def read_structure_prompt(path: str) -> StructurePrompt:
    """A user's structural-classifier prompt (same fields as the shipped ``structure_v1.json``)."""
    with fsspec.open(path, "rt", encoding="utf-8") as fh:
        return StructurePrompt.from_json(fh.read(), source=path)


def read_review_labels(path: str) -> pd.DataFrame:
    """Reviewer labels CSV: ``source_id, review_label[, review_subtype, review_note]``."""
    with fsspec.open(path, "rt", encoding="utf-8") as fh:
        labels = pd.read_csv(fh, dtype=str, keep_default_na=False).replace({"": None})
    for column in ("benchmark", "source_id"):  # written as text in review_candidates.csv ('=x): read back as themselves
        if column in labels:
            labels[column] = labels[column].map(csv_uncell)
    return check_review_labels(labels, source=path)


def normalize_error_type(value: str) -> str:
    return "_".join(str(value).strip().lower().split())


def _choices(text: str, source: str, row: int) -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"{source}: row {row}, field 'choices': not a list literal ({text!r:.60})") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{source}: row {row}, field 'choices': expected a list of strings")
    return value


def _read_text(path: str) -> str:
    with fsspec.open(path, "rb") as fh:
        raw = fh.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def read_redux_subject(path: str) -> pd.DataFrame:
    """One MMLU-Redux subject CSV as ``question, options, gold, error_type, expert_bad, subject``."""
    text = _read_text(path)
    delimiter = ";" if text.split("\n", 1)[0].count(";") > text.split("\n", 1)[0].count(",") else ","
    frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False)
    missing = [c for c in ("question", "choices", "answer", "error_type") if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; has {list(frame.columns)}")
    subject = path.rsplit("/", 1)[-1].removesuffix(".csv").removeprefix("mmlu_")
    return pd.DataFrame({
        "question": frame["question"], "options": [_choices(c, path, i) for i, c in enumerate(frame["choices"])],
        "gold": pd.to_numeric(frame["answer"], errors="coerce"), "error_type": frame["error_type"].map(normalize_error_type),
        "subject": subject,
    }).assign(expert_bad=lambda f: f["error_type"] != "ok")


def read_redux_subjects(folder: str) -> pd.DataFrame:
    """All ``mmlu_<subject>.csv`` files under ``folder``, concatenated (the matching reference)."""
    fs, base = fsspec.core.url_to_fs(folder)
    files = sorted(p for p in fs.find(base) if p.rsplit("/", 1)[-1].startswith("mmlu_") and p.endswith(".csv"))
    if not files:
        raise FileNotFoundError(f"{folder}: no mmlu_<subject>.csv files")
    return pd.concat([read_redux_subject(p) for p in files], ignore_index=True)


def read_reference(paths: list[str]) -> pd.DataFrame:
    """Expert labels from MMLU-Redux subject files and/or folders of them, concatenated."""
    frames = []
    for path in paths:
        fs, base = fsspec.core.url_to_fs(path)
        if not fs.exists(base):
            raise FileNotFoundError(f"{path}: no such file or folder")
        frames.append(read_redux_subjects(path) if fs.isdir(base) else read_redux_subject(path))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class HelmPredictions:
    """``items``: ``source_id, question, options, gold, error_type, expert_bad``; ``answers``: one row
    per item x model with the model's letter and ``correct`` (NaN when the answer is not a letter
    of the item); ``unanswered``: how many such rows per model."""

    items: pd.DataFrame
    answers: pd.DataFrame
    unanswered: dict[str, int]


def read_helm_predictions(path: str) -> HelmPredictions:
    with fsspec.open(path, "rt", encoding="utf-8") as fh:
        frame = pd.read_csv(fh, dtype=str, keep_default_na=False, quoting=csv.QUOTE_MINIMAL)
    missing = [c for c in _HELM_BASE if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    models = [c for c in frame.columns if c not in _HELM_BASE and not c.startswith(_HELM_DERIVED)]
    if not models:
        raise ValueError(f"{path}: no model answer columns")
    options = [_choices(c, path, i) for i, c in enumerate(frame["choices"])]
    gold = pd.to_numeric(frame["groundtruth_answer"], errors="coerce")
    bad_gold = [i for i, (g, o) in enumerate(zip(gold, options)) if not (pd.notna(g) and 0 <= g < len(o))]
    if bad_gold:
        raise ValueError(f"{path}: row {bad_gold[0]}, field 'groundtruth_answer': not an index of the choices")
    ids = [f"redux:{i}" for i in range(len(frame))]
    error_type = frame["error_type"].map(normalize_error_type)
    items = pd.DataFrame({"source_id": ids, "question": frame["question"], "options": options, "gold": gold.astype(int),
                          "error_type": error_type, "expert_bad": error_type != "ok"})
    long = []
    unanswered: dict[str, int] = {}
    for model in models:
        letters = frame[model].str.strip().str.upper()
        index = letters.map(lambda s: LETTERS.index(s) if len(s) == 1 and s in LETTERS else -1)
        valid = (index >= 0) & (index < items["options"].map(len))
        correct = np.where(valid, (index == items["gold"]).astype(float), np.nan)
        unanswered[model] = int((~valid).sum())
        long.append(pd.DataFrame({"source_id": ids, "model": model, "answer": letters, "correct": correct}))
    return HelmPredictions(items, pd.concat(long, ignore_index=True), unanswered)
