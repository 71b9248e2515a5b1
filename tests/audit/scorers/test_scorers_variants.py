"""Answer-variant generators, unit conversion at stated precision, and name screening."""

import pandas as pd
import pytest

from audit.scorers.screening import find_protected_spans
from audit.scorers.units import convert_units, significant_digits
from audit.scorers.variants import (
    VARIANT_COLUMNS,
    SpellingSwap,
    VariantConfig,
    generate_variants,
    transformation_type,
)

INVENTORY = {"color": "colour", "gray": "grey", "organization": "organisation", "harbor": "harbour",
             "flavor": "flavour", "theater": "theatre", "labor": "labour", "favorite": "favourite"}  # fmt: skip


def variants(*answers, inventory=INVENTORY, **config):
    table = pd.DataFrame({"question_id": [f"q{i}" for i in range(len(answers))], "answer": list(answers)})
    return generate_variants(table, inventory, VariantConfig(**config) if config else VariantConfig())


def one(answer, transformation):
    rows = variants(answer)
    rows = rows[rows["transformation"] == transformation]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_rows_have_the_documented_columns_and_order():
    rows = variants("My favorite color is gray.", "Nothing to change here")
    assert tuple(rows.columns) == VARIANT_COLUMNS
    assert rows["question_id"].tolist() == ["q0"]  # no row where no transformation applies
    assert rows.iloc[0]["variant"] == "My favourite colour is grey."
    assert (rows["status"] == "accepted").all() and (rows["reason"] == "").all()


def test_spelling_swaps_both_ways_keeping_case():
    assert one("COLOR and Color", "spelling:to_other")["variant"] == "COLOUR and Colour"
    assert one("The theatre was grey.", "spelling:to_american")["variant"] == "The theater was gray."
    # whole words only: "colorful" is not "color" + "ful"
    assert variants("A colorful coloration").empty


def test_ambiguous_inventory_words_are_not_swapped():
    swap = SpellingSwap.from_inventory({"program": "programme", "check": "cheque", "cheque": "check"})
    assert "program" in swap.to_other and swap.to_american["programme"] == "program"
    # "check" and "cheque" are each both an American and an other form: no safe swap either way
    assert set(swap.to_other) == {"program"} and set(swap.to_american) == {"programme"}
    # one other form for two American forms: swapping back would have to guess
    several = SpellingSwap.from_inventory({"catalog": "catalogue", "catalogs": "catalogue"})
    assert several.to_american == {} and several.to_other["catalog"] == "catalogue"
    with pytest.raises(ValueError, match="not a pair of non-empty strings"):
        SpellingSwap.from_inventory({"color": None})


def test_phrase_and_hyphenated_entries_win_over_their_words():
    inventory = {"license plate": "number plate", "license": "licence", "co-operate": "cooperate"}
    rows = variants("Check the License  plate and the license. We co-operate.", inventory=inventory)
    assert rows.iloc[0]["variant"] == "Check the Number plate and the licence. We cooperate."
    assert variants("A cooperative co-operation", inventory=inventory).empty  # whole forms only


@pytest.mark.parametrize(
    ("answer", "transformation", "expected"),
    [
        ("It happened on April 21, 2025.", "date:to_day_month", "It happened on 21 April 2025."),
        ("April 21", "date:to_day_month", "21 April"),
        ("Sept. 3", "date:to_day_month", "3 September"),
        ("On 21 April 2025 it rained.", "date:to_month_day", "On April 21, 2025 it rained."),
        ("the 21st of April", "date:to_month_day", "April 21"),
        ("Meet at 7 pm.", "time:to_24h", "Meet at 19:00."),
        ("Meet at 7:30 a.m. Then go.", "time:to_24h", "Meet at 07:30. Then go."),
        ("12 am", "time:to_24h", "00:00"),
        ("12:15 PM", "time:to_24h", "12:15"),
        ("The train leaves at 19:00.", "time:to_12h", "The train leaves at 7 pm."),
        ("At 00:15 h", "time:to_12h", "At 12:15 am"),
        ("19.00 h", "time:to_12h", "7 pm"),
        ("He ran 5 miles.", "unit:to_metric", "He ran 8 km."),
        ("It is 8 km away.", "unit:to_us", "It is 5 miles away."),
    ],
)
def test_convention_rewrites(answer, transformation, expected):
    assert one(answer, transformation)["variant"] == expected


@pytest.mark.parametrize(
    "answer",
    ["Breakfast is at 7:30.", "They will march 5 km", "The score was 19.00", "It costs $5 m", "May 2025",
     "2:13:45 marathon", "We walked 3 to 5 miles"],
)  # fmt: skip
def test_neutral_or_ambiguous_forms_are_left_alone(answer):
    rows = variants(answer)
    assert rows[rows["transformation"].str.startswith(("time", "date"))].empty
    if "miles" in answer or "$" in answer:
        assert rows.empty


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5 miles", "8 km"),
        ("26.2 miles", "42.2 km"),
        ("10 miles", "16 km"),  # integer digits all count
        ("1,000 miles", "1,609 km"),
        ("a 38-yard field goal", "35 m"),
        ("6.2 miles", "10 km"),  # 9.98 rounds to 2 digits with the carry handled
        ("98.6 °F", "37.0 °C"),  # temperatures keep decimal places
        ("32 °F", "0 °C"),
        ("-40 degrees Fahrenheit", "-40 °C"),
        ("100 °C", "212 °F"),
        ("100 m", "328 feet"),
        ("1.6 km", "0.99 miles"),
        ("2 km", "1 mile"),  # singular for exactly 1
        ("0.50 kg", "1.1 pounds"),
        ("60 mph", "97 km/h"),
        ("5 in. wide", "13 cm"),
    ],
)
def test_unit_conversion_at_stated_precision(text, expected):
    (conversion,) = convert_units(text)
    assert conversion.replacement == expected


@pytest.mark.parametrize("text", ["5 in the box", "5 l", "He ran 5 M", "$5 m", "3-5 miles", "2 x 4 ft", "-5 miles"])
def test_units_not_converted(text):
    assert convert_units(text) == []


def test_significant_digits():
    assert [significant_digits(*a) for a in [("5", None), ("26", "2"), ("0", "50"), ("1,000", None), ("0", "05")]] == [
        1, 3, 2, 4, 1,
    ]  # fmt: skip


def test_screening_rejects_names_with_reason():
    rows = variants(
        "The World Health Organization says so.",
        "Jonestown drank Flavor-Aid.",
        'They watched "The Color Purple" at the theater.',
        "Pearl Harbor was attacked.",
        "the Labor Party and the labor movement",
    )
    assert (rows["status"] == "rejected").all()
    assert rows["variant"].iloc[1] == "Jonestown drank Flavour-Aid."  # the rejected variant is kept for review
    assert "protected name 'World Health Organization'" in rows["reason"].iloc[0]
    assert rows["reason"].iloc[1] == "alters protected name 'Flavor-Aid'"
    assert "quoted text '\"The Color Purple\"'" in rows["reason"].iloc[2]
    assert "Title Case name 'Labor Party'" in rows["reason"].iloc[4]


def test_screening_leaves_dates_units_and_sentence_starts_alone():
    assert find_protected_spans("On April 21, 2025 the color changed.") == []
    assert find_protected_spans("The Fahrenheit scale") == []
    spans = find_protected_spans("He met the Center for Disease Control staff. Then he left.")
    assert [s.text for s in spans] == ["Center for Disease Control"]
    assert one("Labor is hard work.", "spelling:to_other")["status"] == "accepted"  # one capitalised word
    custom = variants("We drank Flavor Cola.", protected_names=())
    assert custom.iloc[0]["reason"] == "alters Title Case name 'Flavor Cola'"


def test_bad_input_names_source_and_row():
    table = pd.DataFrame({"question_id": ["a", "b"], "answer": ["fine", 3.5]})
    with pytest.raises(
        ValueError, match=r"outputs\.csv: data row 2 \(question_id 'b'\): field 'answer' must be a string"
    ):
        generate_variants(table, INVENTORY, source="outputs.csv")
    with pytest.raises(ValueError, match=r"outputs\.csv: missing column\(s\) \['answer'\]"):
        generate_variants(pd.DataFrame({"question_id": ["a"]}), INVENTORY, source="outputs.csv")
    with pytest.raises(ValueError, match="unknown transformations"):
        VariantConfig(transformations=("spelling:sideways",))


def test_transformation_type():
    assert transformation_type("unit:to_metric") == "unit"
