"""Parsing Hugging Face cards, Croissant JSON-LD and Markdown datasheets into passages and fields."""

from pathlib import Path

import pytest

from audit.docs.cards import DocumentError, parse_croissant, parse_document, parse_hf_card
from connectors.docs import read_document

CARDS = Path(__file__).parents[2] / "fixtures" / "docs" / "cards"


def fields(doc):
    return {f.name: f.value for f in doc.fields}


def test_hf_card_front_matter_and_sections():
    doc = read_document(CARDS / "hf_card_detailed.md")
    assert (doc.kind, doc.title) == ("hf_card", "LocaleQuiz")
    meta = fields(doc)
    assert meta["language"] == "en" and meta["language_details"] == "en-US"
    assert meta["dataset_info.features[2].name"] == "country"
    assert meta["dataset_info.splits[0].num_examples"] == "2400"
    annotators = [p for p in doc.passages if p.section.endswith("Who are the annotators?")]
    assert len(annotators) == 1 and annotators[0].line == 77
    assert annotators[0].text.startswith("Answers were validated by 3 annotators")
    assert annotators[0].section == "Dataset Creation > Annotations > Who are the annotators?"
    texts = " ".join(p.text for p in doc.passages)
    assert "More Information Needed" not in texts  # placeholders are not passages
    assert "@inproceedings" not in texts  # code blocks are not prose


def test_template_card_keeps_only_real_text():
    doc = read_document(CARDS / "hf_card_sparse.md")
    assert doc.title == "Dataset Card for SciQuestions"
    assert [p.section for p in doc.passages] == [
        "Dataset Description > Dataset Summary",
        "Additional Information > Contributions",
    ]
    assert all("Kenya" not in p.text for p in doc.passages)  # HTML comments are template guidance


def test_malformed_yaml_names_file_and_line():
    """Each error names the file (and line) and carries a reason code the docs job counts it by."""
    cases = [(lambda: read_document(CARDS.parent / "malformed" / "malformed_card.md"),
              r"malformed_card\.md: malformed YAML front matter at line 5: mapping values", "malformed_front_matter"),
             (lambda: parse_hf_card("---\nlicense: mit\n# Title\n", "README.md"),
              r"README\.md: YAML front matter opened on line 1 is never closed", "malformed_front_matter"),
             (lambda: parse_hf_card("---\n- a\n- b\n---\nbody\n", "README.md"),
              r"README\.md: YAML front matter must be a mapping", "malformed_front_matter"),
             (lambda: parse_croissant("{,}", "c.json"), r"c\.json: malformed JSON at line 1, column 2", "invalid_json"),
             (lambda: parse_croissant("[1]", "c.json"), r"c\.json: Croissant metadata must be a JSON object, got list",
              "not_an_object"),
             (lambda: parse_croissant("[" * 100_000 + "]" * 100_000, "c.json"), r"c\.json: malformed JSON: nested too deep",
              "invalid_json"),
             (lambda: parse_croissant('{"n": ' + "7" * 5_000 + "}", "c.json"), r"c\.json: malformed JSON: Exceeds the limit",
              "invalid_json")]
    for parse, message, reason in cases:
        with pytest.raises(DocumentError, match=message) as e:
            parse()
        assert e.value.reason == reason


def test_a_document_that_is_not_utf8_is_a_document_error(tmp_path):
    (tmp_path / "card.md").write_bytes(b"# Card\n\nAnnotated by caf\xe9 staff.\n")  # Latin-1
    with pytest.raises(DocumentError, match=r"card\.md: not UTF-8 \(byte 24: invalid continuation byte\)") as e:
        read_document(tmp_path / "card.md")
    assert e.value.reason == "invalid_utf8"


def test_croissant_rai_fields_and_iri_keys():
    doc = read_document(CARDS / "croissant_rai.json")
    assert (doc.kind, doc.title) == ("croissant", "PubQuizQA")
    meta = fields(doc)
    assert meta["rai:dataBiases"].startswith("Answers may reflect")  # written as a full IRI in the file
    assert meta["rai:annotationsPerItem"] == "2"
    assert meta["recordSet[0].field[2].name"] == "country"
    sections = {p.section for p in doc.passages}
    assert {"rai:dataCollection", "rai:annotatorDemographics", "rai:dataUseCases", "description"} <= sections
    assert "name" not in sections  # short values are metadata, not prose
    with pytest.raises(ValueError, match=r"meta\.json: malformed JSON at line 2, column 1"):
        parse_croissant('{"name": "x",\n}', "meta.json")


def test_datasheet_bold_questions_are_sections():
    doc = read_document(CARDS / "datasheet_newsqa.md")
    assert (doc.kind, doc.title) == ("markdown", "Datasheet for WorldNewsQA")
    by_section = {p.section: p for p in doc.passages}
    where = by_section["Composition > Where do the articles come from?"]
    assert where.line == 17 and "45% of the articles" in where.text
    assert not any(s.startswith("Maintenance") for s in by_section)  # "TBD" is a placeholder


def test_dispatch_on_file_name_and_content():
    assert parse_document("# T\n\nText here.\n", "DATASHEET.md").kind == "markdown"
    assert parse_document("\ufeff---\nlicense: mit\n---\n# T\n", "README.md").kind == "hf_card"
    assert parse_document('{"name": "x"}', "croissant.jsonld").kind == "croissant"
