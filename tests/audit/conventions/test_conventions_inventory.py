"""The shipped inventory: size, exclusion rules, and the build from the shared lists."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from audit.conventions.build_inventory import build_inventory
from audit.conventions.inventory import INVENTORY_FILE, load_inventory, word_varieties
from scripts.derive.spelling_sources import DATA_DIR, build_from_shared

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"


def test_shipped_inventory_size_and_columns():
    pairs = load_inventory()
    spelling = [p for p in pairs if p.category == "spelling"]
    assert len(spelling) >= 1500
    assert {p.category for p in pairs} == {"spelling", "lexical"}
    words = {(p.american, p.other) for p in spelling}
    for pair in [("color", "colour"), ("colors", "colours"), ("colored", "coloured"),
                 ("organize", "organise"), ("organized", "organised"), ("center", "centre"),
                 ("kilometer", "kilometre"), ("gray", "grey"), ("watercolor", "watercolour")]:
        assert pair in words  # base forms and inflections


def test_words_valid_in_both_varieties_and_names_are_excluded():
    table = word_varieties(include_lexical=True)
    for word in ["check", "meter", "program", "practice", "license", "draft", "tire", "disk",
                 "catalog", "canceled", "judgment", "ankle", "filter", "for", "four", "ve", "et"]:
        assert word not in table, word
    assert table["color"][:2] == ("american", "spelling")
    assert table["colour"][:2] == ("other", "spelling")


def test_lexical_pairs_are_a_separate_optional_category():
    assert "gasoline" not in word_varieties()
    assert word_varieties(include_lexical=True)["petrol"] == ("other", "lexical", "gasoline/petrol")
    assert word_varieties(include_lexical=True)["apartment"][:2] == ("american", "lexical")


def test_varcon_rules_on_hand_made_lines():
    lines = [
        "# organize <verified> (level 10)",
        "A Z: organize / B: organise",  # Oxford -ize is not British-only: still a pair
        "# color <verified> (level 10)",
        "A Cv: color / B C: colour",  # a Canadian variant mark does not matter
        "# abettor (level 50)",
        "A Bv C: abettor / Av B: abetter",  # variant marks on A/B: not a pair
        "# check (level 10)",
        "A CV: check / B C: cheque | bank",
        "A B: check | verify",  # check is valid in both: the pair above goes
        "# obscure (level 95)",
        "A: zzcolor / B: zzcolour",  # too rare without another list backing it
        "# Name (level 50)",
        "A: Sulla / B: Soulla",  # a capitalised name
    ]
    breame = {("ankle", "ancle"), ("color", "colour")}  # ankle is no VarCon variant: dropped
    rows = build_inventory(lines, breame, set(), {("gasoline", "petrol")})
    got = {(r.american, r.other, r.source, r.category) for r in rows}
    assert got == {
        ("organize", "organise", "varcon", "spelling"),
        ("color", "colour", "breame;varcon", "spelling"),
        ("gasoline", "petrol", "curated;hyperreality-gloss", "lexical"),
    } | {(a, o, "curated", "lexical") for a, o in _curated_without_gasoline()}


def _curated_without_gasoline():
    from audit.conventions.build_inventory import CURATED_LEXICAL

    return [pair for pair in CURATED_LEXICAL if pair != ("gasoline", "petrol")]


def test_words_on_both_sides_are_dropped():
    lines = ["# a (level 10)", "A: aaaaa / B: bbbbb", "# b (level 10)", "A: bbbbb / B: ccccc"]
    rows = [r for r in build_inventory(lines, set(), set(), set()) if r.category == "spelling"]
    assert rows == []


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data not available")
def test_build_from_shared_reproduces_the_shipped_csv():
    rows = build_from_shared(SHARED)
    with open(DATA_DIR / INVENTORY_FILE, newline="", encoding="utf-8") as handle:
        shipped = [tuple(r.values()) for r in csv.DictReader(handle)]
    assert [(r.american, r.other, r.source, r.category) for r in rows] == shipped
