"""Proposed 0/1/2 scores and their evidence on realistic example documentation."""

from pathlib import Path

import pytest

from audit.docs.cards import Document, MetadataField, Passage
from audit.docs.criteria import (
    CRITERIA,
    assess_document,
    evidence_table,
    proposals_table,
)
from connectors.docs import read_document

CARDS = Path(__file__).parents[2] / "fixtures" / "docs" / "cards"


def assess(name):
    return {a.criterion: a for a in assess_document(read_document(CARDS / name))}


def scores(name):
    return [assess(name)[c].proposed_score for c in CRITERIA]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("hf_card_detailed.md", [2, 2, 2, 2, 2, 2]),
        ("hf_card_sparse.md", [0, 1, 0, 0, 0, 0]),
        ("croissant_rai.json", [1, 1, 2, 2, 0, 2]),
        ("datasheet_newsqa.md", [1, 1, 0, 2, 1, 2]),
    ],
)
def test_proposed_scores(name, expected):
    assert scores(name) == expected


def test_detailed_card_evidence_points_at_the_right_passages_and_fields():
    result = assess("hf_card_detailed.md")
    annotators = result["annotator_visibility"].evidence[0]
    assert (annotators.level, annotators.kind, annotators.rule) == (2, "passage", "operational term '3 annotators'")
    assert annotators.location == "Dataset Creation > Annotations > Who are the annotators? @ line 77"
    locale_fields = [e for e in result["locale_assumptions"].evidence if e.kind == "field"]
    assert [(e.location, e.text, e.rule) for e in locale_fields] == [
        ("language_details", "en-US", "region-tagged language code")
    ]
    geo = result["source_geographic_metadata"].evidence[0]
    assert (geo.location, geo.text, geo.rule) == (
        "dataset_info.features[2].name",
        "country",
        "per-item geographic column",
    )
    normalization = result["evaluation_normalization"].evidence[0]
    assert normalization.rule == "operational term 'lowercased'"
    # the citation section says "authors ... based in Canada": not evidence of source users
    assert all("Canada" not in e.text for a in result.values() for e in a.evidence)


def test_croissant_rai_fields_are_evidence():
    result = assess("croissant_rai.json")
    annotator = result["annotator_visibility"].evidence[0]
    assert (annotator.kind, annotator.location, annotator.rule) == (
        "field",
        "rai:annotatorDemographics",
        "operational field",
    )
    # annotator demographics are not source-user demographics
    assert all(e.location != "rai:annotatorDemographics" for e in result["source_user_context"].evidence)
    assert {e.location for e in result["target_user_context"].evidence} == {"rai:dataUseCases"}


def test_datasheet_collection_crowdworkers_are_source_users_not_annotators():
    result = assess("datasheet_newsqa.md")
    assert result["annotator_visibility"].evidence == ()
    (source,) = result["source_user_context"].evidence
    assert source.location.startswith("Collection Process > Who was involved")


def _doc(text, fields=()):
    return Document(
        "inline.md", "markdown", "t", tuple(MetadataField(k, v) for k, v in fields), (Passage("About", text, 3),)
    )


@pytest.mark.parametrize(
    ("text", "criterion", "score"),
    [
        ("Answers may reflect cultural assumptions.", "locale_assumptions", 1),
        ("All questions use en-GB conventions.", "locale_assumptions", 2),
        ("Spelling follows the co-op style guide.", "locale_assumptions", 1),  # "co-op" is no locale code
        ("Date formats vary across items.", "locale_assumptions", 1),
        ("Dates are written DD/MM in every item.", "locale_assumptions", 2),  # a named convention alone suffices
        ("Dates vary.", "locale_assumptions", 0),
        ("Dates follow the day-month date format.", "locale_assumptions", 2),
        ("Intended for users in Nigeria and Ghana.", "target_user_context", 2),
        ("Intended for researchers.", "target_user_context", 1),
        ("Scored with exact match.", "evaluation_normalization", 1),
        ("Scored with exact match after stripping punctuation.", "evaluation_normalization", 2),
        ("Exact match over news articles.", "evaluation_normalization", 1),  # "articles" alone is no step
        ("Metrics ignore the articles a, an and the.", "evaluation_normalization", 2),
        ("Labels were produced by annotators.", "annotator_visibility", 1),
        ("Labels were produced by annotators in Kenya.", "annotator_visibility", 2),
        ("Images come from many countries.", "source_geographic_metadata", 1),
        ("The weather was pleasant.", "source_geographic_metadata", 0),
    ],
)
def test_rules_on_single_passages(text, criterion, score):
    (result,) = assess_document(_doc(text), [criterion])
    assert result.proposed_score == score
    if score:
        assert result.evidence[0].location == "About @ line 3"


def test_plain_language_code_is_not_a_locale_assumption():
    doc = Document("x", "hf_card", "t", (MetadataField("language", "en"),), ())
    assert assess_document(doc, ["locale_assumptions"])[0].proposed_score == 0


def test_tables_and_unknown_criterion():
    assessments = assess_document(read_document(CARDS / "hf_card_sparse.md"))
    table = proposals_table(assessments)
    assert list(table.columns) == ["resource", "criterion", "score", "n_evidence"]
    assert table["criterion"].tolist() == list(CRITERIA)
    assert len(evidence_table(assessments)) == table["n_evidence"].sum() == 1
    with pytest.raises(ValueError, match="unknown criteria"):
        assess_document(read_document(CARDS / "hf_card_sparse.md"), ["vibes"])
