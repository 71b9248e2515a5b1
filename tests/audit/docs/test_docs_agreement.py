"""Reviewer agreement: kappa against the published TruthfulQA-multi value; reviewer-sheet errors."""

from pathlib import Path

import pandas as pd
import pytest

from audit.docs.agreement import agreement, pairwise_agreement, parse_reviewer_scores
from audit.docs.criteria import CRITERIA
from audit.stats.agreement import cohen_kappa
from connectors.docs import read_reviewer_scores

FIXTURES = Path(__file__).parents[2] / "fixtures" / "docs"
HEADER = "resource,annotator," + ",".join(CRITERIA)


@pytest.mark.parametrize(
    ("column", "published"), [("truthfulness", 0.7400346620450606), ("informativeness", 0.48453608247422675)]
)
def test_kappa_matches_published_truthfulqa_multi_english(column, published):
    first = pd.read_csv(FIXTURES / "truthfulqa_multi_en" / "evaluated_en.csv")
    second = pd.read_csv(FIXTURES / "truthfulqa_multi_en" / "iaa_en.csv")
    matched = second.merge(first, on="id", suffixes=("_second", "_first"), validate="one_to_one")
    assert len(matched) == 50
    kappa = cohen_kappa(matched[f"{column}_first"].tolist(), matched[f"{column}_second"].tolist())
    assert kappa == pytest.approx(published, abs=1e-12)


@pytest.fixture(scope="module")
def sheet():
    return read_reviewer_scores(FIXTURES / "reviewer_scores.csv")


def test_reviewer_sheet_to_long_table(sheet):
    assert list(sheet.columns) == ["resource", "annotator", "criterion", "score"]
    assert len(sheet) == 3 * 2 * 6
    row = sheet[
        (sheet.resource == "LocaleQuiz") & (sheet.annotator == "B") & (sheet.criterion == "annotator_visibility")
    ]
    assert row["score"].tolist() == [1]


def test_agreement_per_criterion_overall_and_disagreements(sheet):
    report = agreement(sheet, "A", "B")
    table = report.table.set_index("criterion")
    # hand computation in tests/fixtures/docs: three cells differ out of 18
    assert table.loc["overall", "n"] == 18
    assert table.loc["overall", "exact_agreement"] == pytest.approx(15 / 18)
    # pooled labels: A uses 0/1/2 7/6/5 times, B 7/7/4 times; pe = (49 + 42 + 20) / 324
    assert table.loc["overall", "kappa"] == pytest.approx((15 / 18 - 111 / 324) / (1 - 111 / 324))
    # per criterion (3 resources): identical scores give 1; one of three differing gives (2/3 - 4/9) / (5/9) = 0.4
    expected = [1.0, 0.4, 0.4, 1.0, 0.4, 1.0]  # in CRITERIA order
    assert table["kappa"].drop("overall").tolist() == pytest.approx(expected)
    assert report.table["criterion"].tolist() == [*CRITERIA, "overall"]
    assert report.disagreements.to_dict("records") == [
        {"resource": "LocaleQuiz", "criterion": "annotator_visibility", "score_a": 2, "score_b": 1},
        {"resource": "SciQuestions", "criterion": "evaluation_normalization", "score_a": 0, "score_b": 1},
        {"resource": "WorldNewsQA", "criterion": "target_user_context", "score_a": 1, "score_b": 0},
    ]
    assert report.unmatched.empty


def test_unmatched_cells_are_listed_and_pairs_enumerated(sheet):
    extra = parse_reviewer_scores(f"{HEADER}\nNewBench,C,0,0,0,0,0,0\nLocaleQuiz,C,2,1,2,2,1,0\n", "c.csv")
    scores = pd.concat([sheet, extra], ignore_index=True)
    report = agreement(scores, "A", "C")
    assert report.table.set_index("criterion").loc["overall", "n"] == 6
    assert set(report.unmatched["resource"]) == {"NewBench", "SciQuestions", "WorldNewsQA"}
    assert len(report.unmatched) == 18
    pairs = pairwise_agreement(scores)
    assert sorted(set(zip(pairs.annotator_a, pairs.annotator_b, strict=True))) == [("A", "B"), ("A", "C"), ("B", "C")]
    with pytest.raises(ValueError, match="annotator 'Z' has no scores"):
        agreement(scores, "A", "Z")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("X,A,0,1,3,0,0,0", r"sheet\.csv: line 2: field 'annotator_visibility' must be 0, 1 or 2, got '3'"),
        ("X,A,0,1,,0,0,0", r"sheet\.csv: line 2: field 'annotator_visibility' must be 0, 1 or 2, got ''"),
        ("X,A,0,1,1,0,0,0\nX,,0,1,1,0,0,0", r"sheet\.csv: line 3: fields 'resource' and 'annotator' must not be empty"),
        (
            "X,A,0,1,1,0,0,0\nX,A,0,1,1,0,0,0",
            r"sheet\.csv: line 3: duplicate scores for resource 'X' by 'A' \(first on line 2\)",
        ),
    ],
)
def test_bad_rows_name_file_line_and_field(body, message):
    with pytest.raises(ValueError, match=message):
        parse_reviewer_scores(f"{HEADER}\n{body}\n", "sheet.csv")


def test_bad_header_and_empty_sheet(tmp_path):
    path = tmp_path / "sheet.csv"
    path.write_text("resource,annotator,source_user_context\nX,A,1\n")
    with pytest.raises(ValueError, match=r"sheet\.csv: missing column\(s\) \['target_user_context'"):
        read_reviewer_scores(path)
    with pytest.raises(ValueError, match="no reviewer scores"):
        parse_reviewer_scores(HEADER + "\n", "sheet.csv")
