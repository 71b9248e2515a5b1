"""The resolver: outcomes, match types, word boundaries, scripts, dedup and weights."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.geo.reference_resolver import RegexResolver
from audit.geo.resolve import CountryResolver


@pytest.fixture(scope="module")
def paper(paper_lexicon):
    return CountryResolver(paper_lexicon.entries)


@pytest.fixture(scope="module")
def extended(extended_lexicon):
    return CountryResolver(extended_lexicon.entries)


def resolve_one(resolver: CountryResolver, text: str | None) -> dict:
    res = resolver.resolve(pa.array([text], pa.string()), with_matches=True)
    return {
        "country": res.country[0].as_py(),
        "outcome": res.outcome[0].as_py(),
        "score": res.score[0].as_py(),
        "matches": {(m["alias"], m["country"], m["match_type"]) for m in res.matches[0].as_py()},
    }


@pytest.mark.parametrize("text, country, outcome, score", [
    ("A street market in Kenya", "KE", "single_country", 4),
    ("Japanese food in New York", "JP", "weighted_majority", 3),  # demonym 3 beats city 2
    ("Flags of France and Germany", None, "ambiguous", 4),
    ("A cat sleeping on a sofa", None, "unresolved", 0),
])
def test_each_outcome(paper, text, country, outcome, score):
    r = resolve_one(paper, text)
    assert (r["country"], r["outcome"], r["score"]) == (country, outcome, score)


@pytest.mark.parametrize("text, alias, country, mtype", [
    ("Sunset over Portugal", "portugal", "PT", "country"),
    ("A Brazilian beach", "brazilian", "BR", "demonym"),
    ("Rush hour in Nairobi", "nairobi", "KE", "city"),
])
def test_each_match_type(paper, text, alias, country, mtype):
    assert resolve_one(paper, text)["matches"] == {(alias, country, mtype)}


def test_region_match_type_only_in_extended(paper, extended):
    assert resolve_one(paper, "A ranch in Texas")["outcome"] == "unresolved"
    r = resolve_one(extended, "A ranch in Texas")
    assert (r["country"], r["score"], r["matches"]) == ("US", 2, {("texas", "US", "region")})


@pytest.mark.parametrize("text, unwanted", [
    ("A woman with an umbrella", "OM"),  # Oman inside woman
    ("Indiana Jones hat", "IN"),  # India inside Indiana
    ("Romance novels", "RO"),
])
def test_word_boundaries(paper, text, unwanted):
    assert unwanted not in {m[1] for m in resolve_one(paper, text)["matches"]}


def test_niger_is_not_found_inside_nigeria(paper):
    assert resolve_one(paper, "Lagos, Nigeria")["matches"] == {("lagos", "NG", "city"), ("nigeria", "NG", "country")}
    assert resolve_one(paper, "The Niger river")["matches"] == {("niger", "NE", "country")}


@pytest.mark.parametrize("text, country", [
    ("日本の寿司", "JP"),  # no spaces: matched inside the text
    ("美国的城市", "US"),
    ("Urlaub in Deutschland", "DE"),
    ("Vacaciones en España", "ES"),
    ("Vacaciones en Espana", "ES"),  # the diacritic-folded alias
    ("Ταξίδι στην Ελλάδα", "GR"),
    ("भारत की यात्रा", "IN"),
])
def test_non_ascii_aliases(paper, text, country):
    assert resolve_one(paper, text)["country"] == country


def test_repeated_alias_counts_once(paper):
    once = resolve_one(paper, "Kenya")
    thrice = resolve_one(paper, "Kenya, Kenya and again KENYA!")
    assert once["score"] == thrice["score"] == 4


def test_distinct_aliases_add_up_with_their_weights(paper):
    # country 4 + demonym 3 + city 2 for Kenya against country 4 for Uganda
    r = resolve_one(paper, "Kenyan runners in Nairobi, Kenya, near Uganda")
    assert (r["country"], r["outcome"], r["score"]) == ("KE", "weighted_majority", 9)


def test_leftmost_longest_match_wins(paper):
    assert resolve_one(paper, "Papua New Guinea coast")["matches"] == {("papua new guinea", "PG", "country")}


def test_city_region_pairs_in_extended(extended):
    assert resolve_one(extended, "Paris, Texas")["country"] == "US"
    assert resolve_one(extended, "Athens, Georgia")["country"] == "US"
    # a pair-only region alone says nothing; Paris alone is France
    assert resolve_one(extended, "Georgia on my mind")["outcome"] == "unresolved"
    assert resolve_one(extended, "Paris at night")["country"] == "FR"


def test_nulls_and_sliced_arrays(paper):
    arr = pa.array(["Kenya", None, "", "Peru"])
    res = paper.resolve(arr.slice(1))
    assert res.country.to_pylist() == [None, None, "PE"]
    assert res.outcome.cast(pa.string()).to_pylist() == ["unresolved", "unresolved", "single_country"]


def test_match_type_counts(paper):
    res = paper.resolve(pa.array(["Kenyan in Nairobi", "Peru", "nothing"]))
    assert res.match_type_counts == {"country": 1, "demonym": 1, "city": 1, "region": 0}


@pytest.mark.slow  # the per-caption regex oracle over 40,847 captions
@pytest.mark.parametrize("profile", ["paper", "extended"])
def test_agrees_with_plain_regex_resolver_on_real_captions(profile, paper_lexicon, extended_lexicon, real_captions):
    """The Aho–Corasick batch path and an independent per-caption regex resolver agree on every
    one of the shipped real captions (plus the edge cases above)."""
    lex = paper_lexicon if profile == "paper" else extended_lexicon
    fast, slow = CountryResolver(lex.entries), RegexResolver(lex.entries)
    extra = ["Paris, Texas", "Athens, Georgia", "日本の寿司", "Japanese food in New York", "France France Germany", None]
    captions = real_captions[::16] + extra
    res = fast.resolve(pa.array(captions, pa.string()), with_matches=True)
    matches = res.matches.to_pylist()
    for i, caption in enumerate(captions):
        country, outcome, distinct = slow.resolve(caption)
        assert (res.country[i].as_py(), res.outcome[i].as_py()) == (country, outcome), caption
        assert sorted((m["alias"], m["country"], m["match_type"]) for m in matches[i]) == distinct, caption
