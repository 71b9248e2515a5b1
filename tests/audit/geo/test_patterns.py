"""The lexicon compile: which literal each entry is searched as, and what a hit on it carries."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.geo.lexicon import FULL_SCHEMA
from audit.geo.patterns import compile_patterns
from audit.geo.resolve import ALL_MATCH_TYPES
from tests.geo_compiled import resolver as compiled_resolver

T = {t: i for i, t in enumerate(ALL_MATCH_TYPES)}


def lexicon(*rows: tuple) -> pa.Table:
    """(alias, alias_norm, country, match_type, case_rule[, context_only, admin1, population]) rows."""
    cols = {f.name: [] for f in FULL_SCHEMA}
    for alias, norm, code, mtype, case, *rest in rows:
        ctx, admin1, pop = [*rest, *[False, None, None][len(rest):]]
        for name, value in [("country_alpha2", code), ("country_alpha3", None), ("canonical_name", alias), ("alias", alias),
                            ("alias_norm", norm), ("source", "test"), ("match_type", mtype), ("confidence_tier", "test"),
                            ("requires_city_before", mtype == "code"), ("population", pop), ("context_only", ctx),
                            ("case_rule", case), ("admin1", admin1), ("restriction", None)]:
            cols[name].append(value)
    return pa.table(cols, schema=FULL_SCHEMA)


def by_literal(p) -> dict[bytes, list[tuple]]:
    return {lit: p.entries[i] for i, lit in enumerate(p.lower + p.cased)}


def test_any_case_names_are_searched_lower_and_capitalised_ones_as_written():
    p = compile_patterns(lexicon(("Texas", "texas", "US", "region", "any"),
                                 ("Kerrville", "kerrville", "US", "town", "initial"),
                                 ("TX", "tx", "US", "code", "upper", False, "US-TX")), ALL_MATCH_TYPES)
    assert p.lower == [b" texas "]
    # a town: as written (= title-cased) and in capitals; a code: in capitals only ("Tx" is no form of TX)
    assert sorted(p.cased) == [b" KERRVILLE ", b" Kerrville ", b" TX "]
    found = by_literal(p)
    assert found[b" TX "] == [("tx", 0, T["code"], True, False, 2, frozenset({"US-TX"}), 0, False)]
    assert [e[2] for e in found[b" Kerrville "]] == [T["town"]] == [e[2] for e in found[b" KERRVILLE "]]
    anchor = dict(zip(p.lower + p.cased, p.anchor.tolist()))
    assert anchor == {b" texas ": True, b" KERRVILLE ": True, b" Kerrville ": True, b" TX ": False}  # a lone code decides nothing
    assert not p.case_checked.any()


def test_an_all_capitals_form_carries_every_entry_the_others_only_initial_ones():
    # one name, a town asking for an initial capital and a code asking for capitals
    p = compile_patterns(lexicon(("Ga", "ga", "GH", "town", "initial"), ("GA", "ga", "US", "code", "upper")), ALL_MATCH_TYPES)
    found = by_literal(p)
    assert {e[1] for e in found[b" GA "]} == {p.countries.index("GH"), p.countries.index("US")}
    assert [e[1] for e in found[b" Ga "]] == [p.countries.index("GH")]


def test_two_spellings_of_one_place_are_one_entry():
    p = compile_patterns(lexicon(("Saint-Denis", "saint denis", "FR", "town", "initial", False, None, 100_000),
                                 ("Saint Denis", "saint denis", "FR", "town", "initial", False, None, 100_000)), ALL_MATCH_TYPES)
    assert len(by_literal(p)[b" Saint  Denis "]) == 1


def test_a_name_with_any_case_and_capitalised_entries_is_checked_when_matched():
    p = compile_patterns(lexicon(("Reading", "reading", "GB", "town", "initial", True), ("reading", "reading", "GB", "city", "any")),
                         ALL_MATCH_TYPES)
    assert p.lower == [b" reading "] and p.cased == [] and p.case_checked.tolist() == [True]
    assert sorted(e[2] for e in p.entries[0]) == [T["city"], T["town"]]


def test_blockers_are_marked():
    p = compile_patterns(lexicon(("french fries", "french fries", "FR", "collocation", "any"),
                                 ("French", "french", "FR", "demonym", "any")), ALL_MATCH_TYPES)
    assert dict(zip(p.lower, p.blocked.tolist())) == {b" french  fries ": True, b" french ": False}


def test_an_unknown_match_type_is_named():
    with pytest.raises(ValueError, match="unknown match_type 'hamlet'"):
        compile_patterns(lexicon(("Gimli", "gimli", "CA", "hamlet", "any")), ALL_MATCH_TYPES)


@pytest.mark.slow  # every entry of the three shipped lexicons
def test_every_shipped_entry_is_searched(paper_lexicon):
    """Each row of a shipped lexicon lands in exactly the patterns its case rule asks for."""
    from connectors.geo.lexicon import load_lexicon

    for entries in (paper_lexicon.entries, load_lexicon("gazetteer").entries):
        p = compile_patterns(entries, ALL_MATCH_TYPES)
        seen = {(e[0], e[1], e[2]) for i in range(len(p.entries)) for e in p.entries[i]}
        codes = {c: i for i, c in enumerate(p.countries)}
        rows = zip(entries.column("alias_norm").to_pylist(), entries.column("country_alpha2").to_pylist(),
                   entries.column("match_type").to_pylist())
        assert seen == {(n, codes.get(c, -1), T[t]) for n, c, t in rows}


@pytest.mark.slow  # compiles the gazetteer
def test_a_street_check_stays_within_its_record():
    """The token after a place at the very end of a caption is nobody's: not the next caption's first word."""

    resolver = compiled_resolver()
    texts = pa.array(["Charges were filed in Kaufman County.", "Court records show it.", "The fire at 6016 Dublin Road"])
    assert resolver.resolve(texts).country.to_pylist() == ["US", None, None]


def test_a_folded_spelling_is_searched_as_a_spelling_of_its_own_name():
    """"Ålesund" is also written "Alesund": the folded entry is searched as "Alesund", and each
    spelling counts once (not once per entry naming the same place)."""
    p = compile_patterns(lexicon(("Ålesund", "ålesund", "NO", "town", "initial", False, None, 52_626),
                                 ("Ålesund", "alesund", "NO", "town", "initial", False, None, 52_626)), ALL_MATCH_TYPES)
    found = by_literal(p)
    assert [e[0] for e in found[" Ålesund ".encode()]] == ["ålesund"]
    assert [e[0] for e in found[b" Alesund "]] == ["alesund"]
    assert [e[0] for e in found[b" ALESUND "]] == ["alesund"]
