"""DROP EM/F1 against the official unit-test vectors and the allennlp DROP fixture."""

import json
from pathlib import Path

import pytest

from audit.scorers.drop import (
    DropScore,
    drop_metrics,
    evaluate_drop,
    normalize_answer,
    parse_drop_dataset,
    score_drop,
)

FIXTURE = Path(__file__).parents[2] / "fixtures" / "scorers" / "allennlp_fixture_drop.json"

OFFICIAL_VECTORS = [
    (["78"], ["78.0"], 1.0, 1.0),
    (["td"], ["td", "td"], 0.0, 0.5),
    ("td", ["td", "td"], 0.0, 0.5),
    (["the", "fat", "cat", "the fat", "fat cat", "the fat cat"], ["cat"], 0.0, 0.17),
    (["the", "fat", "cat", "the fat", "fat cat", "the fat cat"], ["cat", "cat dog"], 0.0, 0.25),
    (["td"], ["the td"], 1.0, 1.0),
    (["John Elton"], ["Elton John"], 0.0, 1.0),
    (["78-yard"], ["78 yard"], 1.0, 1.0),
    (["78"], ["78-yard"], 0.0, 0.67),
    (["packers"], ["Green bay packers"], 0.0, 0.5),
    (["yard"], ["36 yard td"], 0.0, 0.0),
    (["23 yards"], ["43 yards"], 0.0, 0.0),
    (["56 yards"], ["56 yd"], 0.0, 0.5),
    (["26"], ["26 yard td"], 0.0, 0.5),
    (["78-yard", "56", "28", "40", "44", "touchdown"], ["78-yard", "56 yard", "1 yard touchdown"], 0.0, 0.28),
    (["23", "23 yard"], ["23-yard", "56 yards"], 0.0, 0.5),
    (["John Karman", "Joe Hardy"], ["Joe Karman", "John Hardy"], 0.0, 0.5),
    (["ottoman", "Kantakouzenous"], ["ottoman", "army of Kantakouzenous"], 0.0, 0.75),
]


@pytest.mark.parametrize(("predicted", "gold", "em", "f1"), OFFICIAL_VECTORS)
def test_official_vectors(predicted, gold, em, f1):
    assert drop_metrics(predicted, gold) == DropScore(em, f1)


def test_normalization():
    assert normalize_answer("S.K. Singh") == "sk singh"
    assert normalize_answer("The 78-yard run") == "78.0 yard run"
    assert normalize_answer("1,000") == "1000.0"  # comma stripped first, then canonicalised
    assert normalize_answer("3.50") == "3.5"  # a float token keeps its point


def _qa(query_id, answer, validated=()):
    return {"question": "q?", "query_id": query_id, "answer": answer, "validated_answers": list(validated)}


def _number(n):
    return {"number": n, "date": {"day": "", "month": "", "year": ""}, "spans": []}


def test_json_number_with_validated_number():
    data = {"p": {"passage": "", "qa_pairs": [_qa("q1", _number("1"), [_number("0")])]}}
    (question,) = parse_drop_dataset(data, "inline")
    assert question.golds == (("1",), ("0",))
    assert score_drop("1", question.golds) == DropScore(1.0, 1.0)


def test_json_date_with_validated_span_and_number():
    gold = {"number": "", "date": {"day": "17", "month": "August", "year": ""}, "spans": []}
    validated = [{"number": "", "date": {}, "spans": ["August"]}, _number("17")]
    (question,) = parse_drop_dataset({"p": {"passage": "", "qa_pairs": [_qa("q1", gold, validated)]}}, "inline")
    assert question.gold_types == ("date", "span", "number")
    assert score_drop("17 August", question.golds) == DropScore(1.0, 1.0)


def test_json_multi_span_gold_with_single_validated_span():
    gold = {"number": "", "date": {}, "spans": ["span1", "span2"]}
    validated = [{"number": "", "date": {}, "spans": ["span2"]}]
    (question,) = parse_drop_dataset({"p": {"passage": "", "qa_pairs": [_qa("q1", gold, validated)]}}, "inline")
    assert question.gold_types == ("spans", "span")
    assert score_drop("span1", question.golds) == DropScore(0.0, 0.5)


def test_global_score_is_mean_over_questions():
    span = lambda s: {"number": "", "date": {}, "spans": [s]}  # noqa: E731
    data = {"p": {"passage": "", "qa_pairs": [_qa("q1", span("answer")), _qa("q2", span("answer"))]}}
    questions = parse_drop_dataset(data, "inline")
    assert evaluate_drop(questions, {"q1": "answer", "q2": "answer2"}) == DropScore(0.5, 0.5)
    assert evaluate_drop(questions, {"q1": "answer"}) == DropScore(0.5, 0.5)  # missing prediction scores 0


def test_blank_gold_is_skipped_and_missing_prediction_scores_zero():
    assert score_drop("", [("  ",)]) == DropScore(0.0, 0.0)
    assert score_drop(None, [("5",)]) == DropScore(0.0, 0.0)


def test_fixture_layout_and_self_scores():
    questions = parse_drop_dataset(json.loads(FIXTURE.read_text()), FIXTURE.name)
    assert len(questions) == 19
    by_id = {q.query_id: q for q in questions}
    assert by_id["db3c7682-0ae2-4705-a2be-4e6867352dc6"].golds == (("sixth terminal",),)
    assert by_id["215fb32f-542e-49cd-a7a9-7e965ce8814e"].gold_types == ("number",)  # "date": {} is tolerated
    assert sum(q.gold_types[0] == "number" for q in questions) == 13
    assert sum(q.gold_types[0] == "span" for q in questions) == 6
    for q in questions:
        assert score_drop(q.golds[0], q.golds) == DropScore(1.0, 1.0), q.query_id
    assert evaluate_drop(questions, {q.query_id: list(q.golds[0]) for q in questions}) == DropScore(1.0, 1.0)


@pytest.mark.parametrize(
    ("query_id", "prediction", "expected"),
    [
        ("77cec168-33a6-43aa-869c-74c934d40d18", "38 yards", DropScore(0.0, 0.5)),  # "yard" vs "yards"
        ("77cec168-33a6-43aa-869c-74c934d40d18", "35 m", DropScore(0.0, 0.0)),  # metric variant fails the number gate
        ("22d9ef78-9022-48d2-b1a0-d425cd9bba51", "two", DropScore(0.0, 0.0)),  # a number word is no number
        ("22d9ef78-9022-48d2-b1a0-d425cd9bba51", "2.0", DropScore(1.0, 1.0)),
        ("817d736d-3bf7-4bd1-9867-4232ef7a9294", "Rivers", DropScore(0.0, 0.67)),  # P 1, R 1/2
        ("7f253de4-739d-423f-8270-08a9ae7e4c33", "Tomlinson, LaDainian", DropScore(0.0, 1.0)),
        ("25150fa1-ce8b-4899-a08e-b3c0bc2311b8", "the Kansas City", DropScore(1.0, 1.0)),
    ],
)
def test_fixture_cross_cases(query_id, prediction, expected):
    questions = {q.query_id: q for q in parse_drop_dataset(json.loads(FIXTURE.read_text()), FIXTURE.name)}
    assert score_drop(prediction, questions[query_id].golds) == expected


def test_bad_layouts_name_the_source_and_question():
    with pytest.raises(
        ValueError, match=r"dev\.json: passage 'p', qa_pairs\[0\] \(query_id 'q9'\), answer 0: answer has none"
    ):
        parse_drop_dataset({"p": {"passage": "", "qa_pairs": [_qa("q9", {})]}}, "dev.json")
    with pytest.raises(ValueError, match=r"dev\.json: passage 'p', qa_pairs\[0\]: missing field 'answer'"):
        parse_drop_dataset({"p": {"passage": "", "qa_pairs": [{"query_id": "q1", "question": "?"}]}}, "dev.json")
    with pytest.raises(ValueError, match="spans"):
        parse_drop_dataset({"p": {"passage": "", "qa_pairs": [_qa("q1", {"spans": [3]})]}}, "dev.json")
    questions = parse_drop_dataset({"p": {"passage": "", "qa_pairs": [_qa("q1", _number("3"))]}}, "dev.json")
    with pytest.raises(ValueError, match="unknown query ids"):
        evaluate_drop(questions, {"q2": "3"})
