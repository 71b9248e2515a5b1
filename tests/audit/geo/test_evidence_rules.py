"""The named evidence rules of ``audit.geo.evidence`` on the shipped gazetteer, each with the example that motivated it."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.geo.resolve import CountryResolver


@pytest.fixture(scope="module")
def gazetteer():
    from connectors.geo.lexicon import load_lexicon

    return CountryResolver(load_lexicon("gazetteer").entries)


def countries(resolver: CountryResolver, texts: list[str]) -> list[str | None]:
    return resolver.resolve(pa.array(texts)).country.to_pylist()


def test_name_in_prose_counts_a_country_written_as_a_place(gazetteer):
    # NAME_IN_PROSE: "Jordan" and "Chad" need support (a player, a given name) but count after a locative
    assert countries(gazetteer, ["crates of dates shipped from Jordan last spring",
                                 "aid workers in Chad, where the rains failed"]) == ["JO", "TD"]


def test_name_in_prose_leaves_the_word_the_person_and_the_longer_name_alone(gazetteer):
    assert countries(gazetteer, [
        "a cabinet full of fine china",  # the porcelain: not capitalised
        "Jordan dunks over the defender",  # the person: no locative
        "signed shoes from Jordan Brand",  # a longer capitalised name follows
        "dinner with Chad and friends",  # "with" is no locative
    ]) == [None, None, None, None]


def test_name_in_prose_keeps_a_country_that_is_also_a_region_context_only(gazetteer):
    # "Georgia" is also a US state: after "in" either may be meant, so it still needs support
    assert countries(gazetteer, ["a peach orchard in Georgia"]) != ["GE"]


def test_named_country_breaks_a_tie_with_namesake_regions(gazetteer):
    # NAMED_COUNTRY_BREAKS_TIE: "Valle" (a Honduran department) and "Nevada" (a US state) tie Chile at 4;
    # the one country written as a country wins. Two named countries still tie.
    res = gazetteer.resolve(pa.array(["Valle Nevada ski slopes, Chile", "Mongolia and Russia border"]))
    assert res.country.to_pylist() == ["CL", None]
    assert res.outcome.to_pylist() == ["weighted_majority", "ambiguous"]


def test_named_country_breaks_tie_only_for_exactly_one_named_leader():
    from audit.geo.evidence import named_country_breaks_tie

    assert named_country_breaks_tie([3, 7, 9], {7, 40}) == [7]
    assert named_country_breaks_tie([3, 7], {3, 7}) == [3, 7]
    assert named_country_breaks_tie([3, 7], set()) == [3, 7]


def test_state_code_picks_the_namesake_in_that_country(gazetteer):
    # STATE_CODE_PICKS_NAMESAKE: GeoNames has US towns named Peru and Cuba, not in Vermont or New York;
    # the postal code after the name still says which Peru is meant
    assert countries(gazetteer, ["sunset over Peru VT", "hay bales outside Cuba NY"]) == ["US", "US"]


def test_state_code_picks_namesake_needs_a_code_written_as_one():
    from audit.geo.evidence import state_code_picks_namesake

    town = ("peru", 1, 5, False, True, 1, frozenset({"US-IN"}), 3000)
    code = ("vt", 1, 7, True, False, 2, frozenset({"US-VT"}), 0)
    assert state_code_picks_namesake([town], [code], 7, 5, "VT") == ({town}, {code})
    assert state_code_picks_namesake([town], [code], 7, 5, "Minn") == ({town}, {code})
    assert state_code_picks_namesake([town], [code], 7, 5, "La") == (set(), set())  # title-case "La": a word
    other = ("vt", 2, 7, True, False, 2, frozenset({"CA-ON"}), 0)
    assert state_code_picks_namesake([town], [other], 7, 5, "VT") == (set(), set())  # no namesake in that country


def test_records_name_the_rules_that_changed_them(gazetteer):
    res = gazetteer.resolve(pa.array(["sunset over Peru VT", "crates shipped from Jordan", "a dog"]), with_matches=True)
    assert res.rules.to_pylist() == [["state_code_picks_namesake"], ["name_in_prose"], []]
