"""Six-criterion summary table and the nine-field documentation template."""

from pathlib import Path

import pandas as pd
import pytest

from audit.docs.criteria import CRITERIA, assess_document, proposals_table
from audit.docs.summary import criteria_summary, summary_markdown
from audit.docs.template import FIELDS, render_template
from connectors.docs import read_document, read_reviewer_scores

FIXTURES = Path(__file__).parents[2] / "fixtures" / "docs"


@pytest.fixture(scope="module")
def annotator_a():
    sheet = read_reviewer_scores(FIXTURES / "reviewer_scores.csv")
    return sheet[sheet.annotator == "A"].drop(columns="annotator")


def test_summary_by_hand(annotator_a):
    summary = criteria_summary(annotator_a).set_index("criterion")
    assert summary.index.tolist() == [*CRITERIA, "all"]
    # annotator A, three resources: source 2,1,0; annotators 2,1,2; geography 0,0,2
    shares = ["mean_score", "share_mentioned", "share_operationalized"]
    assert summary.loc["source_user_context", shares].tolist() == pytest.approx([1.0, 2 / 3, 1 / 3])
    assert summary.loc["annotator_visibility", shares].tolist() == pytest.approx([5 / 3, 1.0, 2 / 3])
    assert summary.loc["source_geographic_metadata", shares].tolist() == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    # all 18 cells: 7 zeros, 6 ones, 5 twos
    assert summary.loc["all", shares].tolist() == pytest.approx([16 / 18, 11 / 18, 5 / 18])
    assert summary.loc["all", "n_resources"] == 3
    assert summary.loc["target_user_context", "title"] == "Target-user or evaluation context"


def test_summary_markdown_prints_percentages(annotator_a):
    text = summary_markdown(criteria_summary(annotator_a))
    assert "| Source-user context | 3 | 1.00 | 66.7% | 33.3% |" in text
    assert text.count("\n") == 2 + len(CRITERIA) + 1


def test_summary_refuses_duplicates_and_bad_scores():
    with pytest.raises(ValueError, match="resource 'X' has 2 scores for 'locale_assumptions'"):
        criteria_summary(
            pd.DataFrame({"resource": ["X", "X"], "criterion": ["locale_assumptions"] * 2, "score": [1, 2]})
        )
    with pytest.raises(ValueError, match="score must be 0, 1 or 2"):
        criteria_summary(pd.DataFrame({"resource": ["X"], "criterion": ["locale_assumptions"], "score": [5]}))


def test_template_has_nine_fields_prefilled_with_measurements():
    measured = {
        "n_items": 817,
        "convention_coverage": 0.0759,
        "american_share": 0.944,
        "american_share_ci": (0.90, 0.97),
        "american_share_excluding_spelling": 0.905,
        "american_share_by_category": {"spelling": 0.96, "measurement": 1.0},
        "scorer_sensitivity": {"DROP EM, spelling variants": -0.667},
    }
    text = render_template("TruthfulQA", measured)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert len(FIELDS) == 9 and headings == [f"## {i}. {f.title}" for i, f in enumerate(FIELDS, start=1)]
    assert "- Items with a convention signal (coverage): 7.6% of 817 items" in text
    assert "- American share of matched signals: 94.4% (95% CI 90.0%-97.0%)" in text
    assert "- American share excluding spelling: 90.5%" in text
    assert "- American share, measurement: 100.0%" in text
    assert "- DROP EM, spelling variants: mean change on valid variants -66.7 points" in text
    assert text.count("TODO (maintainer):") == 9
    assert "Items naming a country" not in text  # no caption audit ran: nothing invented


def test_template_geography_and_validation():
    text = render_template("CC3M", {"geographic_coverage": 0.0013, "countries": {"India": 0.2, "France": 0.3}})
    assert "- Items naming a country: 0.1%" in text
    assert "- Most represented: France 30.0%, India 20.0%" in text
    with pytest.raises(ValueError, match=r"unknown measured key\(s\) \['american_shar'\]"):
        render_template("X", {"american_shar": 0.9})
    with pytest.raises(ValueError, match="'american_share' must be a fraction"):
        render_template("X", {"american_share": 94.4})


def test_proposals_feed_the_summary():
    docs = [read_document(FIXTURES / "cards" / name) for name in
            ("hf_card_detailed.md", "hf_card_sparse.md", "croissant_rai.json", "datasheet_newsqa.md")]  # fmt: skip
    proposals = proposals_table(a for doc in docs for a in assess_document(doc))
    summary = criteria_summary(proposals).set_index("criterion")
    # target users: detailed card 2, the other three 1 (see test_docs_criteria)
    assert summary.loc["target_user_context", ["mean_score", "share_mentioned", "share_operationalized"]].tolist() == (
        pytest.approx([5 / 4, 1.0, 1 / 4])
    )
    assert summary.loc["all", "n_resources"] == 4
