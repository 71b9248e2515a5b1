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
