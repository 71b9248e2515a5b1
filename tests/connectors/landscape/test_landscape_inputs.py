"""MMLU-Redux files, reviewer labels and template overrides, read from real-format files."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from audit.landscape.flags import wrong_counts
from audit.landscape.prompts import load_template
from audit.landscape.validate import match_reference, validation_by_threshold
from connectors.landscape.inputs import (
    read_helm_predictions,
    read_redux_subject,
    read_redux_subjects,
    read_review_labels,
    read_template,
)
from tests.conftest import SHARED

REDUX = SHARED / "mmlu_redux"


def test_subject_files_with_either_delimiter_and_cp1252(tmp_path):
    (tmp_path / "mmlu_anatomy.csv").write_text(
        'question,choices,answer,error_type,source,correct_answer,potential_reason\n'
        '"What is 2+2?","[\'3\', \'4\']",1,OK,,,\n'
        '"Bone count?","[\'206\', \'201\']",0,Wrong Groundtruth,,,\n', encoding="utf-8")
    (tmp_path / "mmlu_moral_scenarios.csv").write_bytes(
        'question;choices;answer;error_type;source;correct_answer;potential_reason\n'
        '"Caf\u00e9 scenario";"[\'Wrong\', \'Not wrong\']";1;ok;;;\n'.encode("cp1252"))
    ref = read_redux_subjects(str(tmp_path))
    assert ref.question.tolist() == ["What is 2+2?", "Bone count?", "Café scenario"]
    assert ref.error_type.tolist() == ["ok", "wrong_groundtruth", "ok"] and ref.expert_bad.tolist() == [False, True, False]
    assert ref.options[2] == ["Wrong", "Not wrong"] and ref.subject.tolist()[2] == "moral_scenarios"
    (tmp_path / "mmlu_bad.csv").write_text("question,choices,answer,error_type\nq,not a list,0,ok\n")
    with pytest.raises(ValueError, match="mmlu_bad.csv: row 0, field 'choices'"):
        read_redux_subject(str(tmp_path / "mmlu_bad.csv"))


def test_helm_predictions_become_per_model_correctness(tmp_path):
    path = tmp_path / "helm.csv"
    path.write_text(
        "question,choices,groundtruth_answer,error_type,m1,m2,majority_llm_pred_top_3,binary_error_type\n"
        "\"Q1\",\"['a', 'b', 'c']\",0,ok,A,B,A,0\n"
        "\"Q2\",\"['a', 'b']\",1,no_correct_answer,A,,A,1\n")
    helm = read_helm_predictions(str(path))
    assert helm.items.expert_bad.tolist() == [False, True]
    assert helm.answers.model.unique().tolist() == ["m1", "m2"]
    assert helm.answers.correct.tolist()[:3] == [1.0, 0.0, 0.0] and np.isnan(helm.answers.correct.tolist()[3])
    assert helm.unanswered == {"m1": 0, "m2": 1}


@pytest.mark.skipif(not REDUX.exists(), reason="../shared/data/mmlu_redux not present")
def test_real_mmlu_redux_flags_validate_through_the_shared_path():
    helm = read_helm_predictions(str(REDUX / "helm14_predictions_all_subjects.csv"))
    assert len(helm.items) == 5700 and helm.items.expert_bad.sum() == 370 and helm.answers.model.nunique() == 14
    ref = read_redux_subjects(str(REDUX / "subjects"))
    assert len(ref) == 5700 and ref.expert_bad.sum() == 370
    table = validation_by_threshold(wrong_counts(helm.answers), match_reference(helm.items, ref), [1, 14]).set_index("min_wrong")
    assert table.loc[14, "precision"] > table.loc[1, "precision"] > 370 / 5700  # stricter flags are purer
    assert table.loc[14, "recall"] < table.loc[1, "recall"] and table.loc[14, "p_value"] < 1e-10


def test_review_labels_and_template_files(tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("source_id,review_label,review_subtype,review_note\n"
                      "q1,actionable,wrong_groundtruth,key is B\nq2,perturbation_induced,,\n")
    out = read_review_labels(str(labels))
    assert out.review_subtype.tolist() == ["wrong_groundtruth", None]
    labels.write_text("source_id,review_label\nq1,fine\n")
    with pytest.raises(ValueError, match=f"{labels}: row 0, field 'review_label'"):
        read_review_labels(str(labels))
    shipped = load_template()
    path = Path(tmp_path / "t.json")
    path.write_text(json.dumps({**shipped.__dict__, "name": "mine"}))
    assert read_template(str(path)).name == "mine" and read_template(str(path)).sha256 != shipped.sha256
