"""The evidence rule on the shipped gazetteer lexicon, one invented caption per rule."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from audit.geo.evidence import TIERS, is_locative, tier_of
from audit.geo.resolve import CountryResolver
from tests.geo_compiled import resolver


@pytest.fixture(scope="module")
def gazetteer():

    return resolver()


@pytest.fixture(scope="module")
def extended(extended_lexicon):
    return CountryResolver(extended_lexicon.entries)


def one(resolver: CountryResolver, text: str) -> dict:
    res = resolver.resolve(pa.array([text], pa.string()), with_matches=True)
    return {
        "country": res.country[0].as_py(), "outcome": res.outcome[0].as_py(), "tier": res.tier[0].as_py(),
        "matches": {(m["alias"], m["country"], m["match_type"]) for m in res.matches[0].as_py()},
    }


def test_policy_follows_the_lexicon(gazetteer, extended):
    assert gazetteer.policy == "evidence" and extended.policy == "weighted"


@pytest.mark.parametrize("text, country, address", [
    ("1402 Oak Ridge Dr, Kerrville, TX 78028", "US", "TX 78028"),  # USPS ZIP after a state code
    ("Box 12, Ridge Rd, TX 78028-1234", "US", "TX 78028"),  # ZIP+4
    ("Lakeside cabin, MB R0C 1B0", "CA", "MB R0C 1B0"),  # Canada Post, R = Manitoba
    ("Unit 4/12 Station St, Vic 3134", "AU", "Vic 3134"),  # Australia Post, 3xxx = Victoria
    ("Harbour views, WA 6000", "AU", "WA 6000"),  # 6xxx: Western Australia
    ("Lake views, WA 98101", "US", "WA 98101"),  # a 9 ZIP: Washington state
    ("Thatched roof, DT1 1XJ", "GB", "DT1 1XJ"),  # Royal Mail postcode
])
def test_each_address_pattern(gazetteer, text, country, address):
    r = one(gazetteer, text)
    assert r["country"] == country and (address, country, "address") in r["matches"]


@pytest.mark.parametrize("text", ["Call TX 98101 now", "Sale ends MB K1A 0B1", "Code NSW 6000"])
def test_a_code_and_a_postcode_must_agree(gazetteer, text):
    assert not {m for m in one(gazetteer, text)["matches"] if m[2] == "address"}


@pytest.mark.parametrize("text, country, code", [
    ("Ranch house, Kerrville, TX", "US", "tx"),  # City, ST
    ("Ranch house, Kerrville TX", "US", "tx"),  # City ST
    ("Cabin for rent in Gimli, MB", "CA", "mb"),
    ("Flood waters in Paducah, Ky.", "US", "ky"),  # AP abbreviation
    ("Orchards near Kelowna, B.C.", "CA", "b c"),  # Canadian Press abbreviation
    ("Cafe in Ringwood VIC", "AU", "vic"),
])
def test_city_and_state_code_confirm_each_other(gazetteer, text, country, code):
    r = one(gazetteer, text)
    assert (r["country"], r["tier"]) == (country, "corroborated") and (code, country, "code") in r["matches"]


def test_a_code_the_gazetteer_does_not_confirm_says_nothing(gazetteer):
    r = one(gazetteer, "Cabin for rent in Gimli, TX")  # no Gimli in Texas
    assert r["country"] == "CA" and not {m for m in r["matches"] if m[2] == "code"}
    assert one(gazetteer, "Shipping to TX")["outcome"] == "unresolved"


def test_namesake_share_and_ambiguity(gazetteer):
    assert one(gazetteer, "Riverside walk in Perth at dusk")["country"] == "AU"  # AU holds ≥ 90% of the Perths
    assert one(gazetteer, "Sunset over Valencia")["outcome"] == "unresolved"  # no country holds 90%, no city dominates
    assert one(gazetteer, "Sunset over Athens")["country"] == "GR"  # no namesake abroad within half its size
    assert one(gazetteer, "Sunset over Athens, Greece")["country"] == "GR"
    assert one(gazetteer, "Football in Athens, Georgia")["country"] == "US"


def test_context_agreement_picks_the_namesake(gazetteer):
    r = one(gazetteer, "Perth, Scotland")
    assert (r["country"], r["tier"]) == ("GB", "corroborated") and ("perth", "GB", "town") in r["matches"]
    assert one(gazetteer, "Old bridge in Tbilisi, Georgia")["country"] == "GE"
    assert one(gazetteer, "A walk in Reading, England")["country"] == "GB"  # a common word, with context


def test_capitalisation_is_required_for_towns_and_codes(gazetteer):
    assert one(gazetteer, "Sunset in Kerrville")["country"] == "US"
    assert one(gazetteer, "sunset in kerrville")["outcome"] == "unresolved"
    assert one(gazetteer, "Made in the US")["country"] == "US"
    assert one(gazetteer, "tell us about it")["outcome"] == "unresolved"
    assert one(gazetteer, "wine from texas")["country"] == "US"  # first-level regions match in any case


@pytest.mark.parametrize("before", ["İstanbul'da bir gün", "Straße ẞ GROSS", "Ä°t is just like Great Khaan's"],
                         ids=["dotted capital I", "capital sharp s", "double-encoded dotted I"])
def test_a_record_is_read_the_same_whatever_record_comes_before_it(gazetteer, before):
    """Lower-casing changes the UTF-8 length of a few letters ("İ" 2 bytes → "i" 1; "ẞ" 3 → "ß" 2; the last
    text is "İ" double-encoded, repaired first). Before, every record after such a record in the batch was read
    at shifted positions of the cased text, so it lost its case evidence: a silver caption resolved alone went
    unresolved after one in its batch, and a shard boundary changed a country."""
    after = ["Sunset in Kerrville", "View of the Phobjikha Valley in Central Bhutan",
             "Wedding dress hanging in the window of a family home in Delta, British Columbia"]
    alone = [one(gazetteer, t)["country"] for t in after]
    assert alone == ["US", "BT", "CA"]
    res = gazetteer.resolve(pa.array([before, *after], pa.string()))
    assert res.country.to_pylist()[1:] == alone

def test_a_small_place_is_found_with_or_without_its_diacritics(gazetteer):
    for text in ("Boats in Ålesund", "Boats in Alesund", "BOATS IN ALESUND"):
        r = one(gazetteer, text)
        assert (r["country"], r["outcome"]) == ("NO", "single_country"), text
        assert len(r["matches"]) == 1, text  # one place, one match, whichever spelling


def test_places_outrank_demonyms(gazetteer):
    r = one(gazetteer, "Under British rule the port of Mukalla grew")
    assert r["country"] == "YE" and ("british", "GB", "demonym") in r["matches"]
    assert one(gazetteer, "Japanese food in New York")["country"] == "US"


@pytest.mark.parametrize("text, tier", [
    ("Kenyan runners in Nairobi", "corroborated"),
    ("A ranch in Texas", "country_region_address"),
    ("A ranch near Kerrville", "town_after_locative"),
    ("The town of Kerrville at dawn", "town_after_locative"),
    ("Skyline of Houston", "large_city"),
    ("Kerrville sunset", "bare_town"),
    ("Danish style sideboard", "demonym"),
])
def test_each_evidence_tier(gazetteer, text, tier):
    assert one(gazetteer, text)["tier"] == tier


def test_min_evidence_is_the_high_precision_operating_point(gazetteer):
    texts = pa.array(["Kerrville, TX", "A ranch in Texas", "Kerrville sunset", "Danish style sideboard", "nothing here"])
    full = gazetteer.resolve(texts)
    strict = gazetteer.at_min_evidence("country_region_address").resolve(texts)
    assert full.country.to_pylist() == ["US", "US", "US", "DK", None]
    assert strict.country.to_pylist() == ["US", "US", None, None, None]
    assert strict.outcome.cast(pa.string()).to_pylist()[2:] == ["unresolved"] * 3
    assert strict.tier.cast(pa.string()).to_pylist() == full.tier.cast(pa.string()).to_pylist()  # tiers stay recorded
    assert (full.below_min_evidence, strict.below_min_evidence) == (0, 2)
    assert strict.tier_counts == full.tier_counts == {"corroborated": 1, "country_region_address": 1, "town_after_locative": 0,
                                                      "large_city": 0, "bare_town": 1, "village": 0, "alternate_name": 0,
                                                          "demonym": 1}
    with pytest.raises(ValueError, match="min_evidence"):
        gazetteer.at_min_evidence("strong")


def test_collocations_are_blocked_and_emblems_kept(gazetteer):
    for text in ["french fries with ketchup", "German shepherd puppy", "Jack London novels", "Canada goose on a pond"]:
        assert one(gazetteer, text)["outcome"] == "unresolved", text
    assert one(gazetteer, "a pile of Swiss franc coins")["country"] == "CH"  # a currency stays geographic
    assert one(gazetteer, "Mandarin Chinese lessons")["country"] == "CN"  # a language too


def test_street_names_are_not_the_place(gazetteer):
    assert one(gazetteer, "The fire at 6016 Dublin Road")["outcome"] == "unresolved"
    assert one(gazetteer, "Pubs of Dublin at night")["country"] == "IE"
    assert one(gazetteer, "Driver hurt after car overturns on Bukit Timah Road")["outcome"] == "unresolved"  # a town's


def test_a_country_before_a_road_in_lower_case_is_the_country(gazetteer):
    """A street's name is written with its type capitalised ("Korea Way" in Manhattan's Koreatown); a country's name
    before a street type in lower case is a road in that country ("Old Laos road"), where before it counted for
    nothing."""
    for text, code in (("Old Laos road", "LA"), ("Detailed info for Croatia road trip.", "HR"),
                       ("A Laos highway road is the only flat surface", "LA")):
        r = one(gazetteer, text)
        assert (r["country"], r["tier"]) == (code, "country_region_address"), text
    for text in ("A West 32nd sign under a Korea Way road sign.", "Croatia Road Trip Itinerary", "old dublin road"):
        assert one(gazetteer, text)["outcome"] == "unresolved", text


def test_mojibake_is_repaired_and_counted(gazetteer):
    res = gazetteer.resolve(pa.array(["CafÃ© in SÃ£o Paulo", "Café in São Paulo", "plain"]))
    assert res.country.to_pylist() == ["BR", "BR", None] and res.mojibake_repaired == 1


def test_the_three_fixes_in_the_extended_profile(extended):
    assert one(extended, "Made in the US")["country"] == "US"
    assert one(extended, "tell us more")["outcome"] == "unresolved"
    assert one(extended, "Beach day in Florida")["country"] == "US"
    assert one(extended, "Lahore, Punjab")["country"] == "PK"  # a shared region: the city's country
    assert one(extended, "Amritsar, Punjab")["country"] == "IN"
    assert one(extended, "Fields of Punjab")["outcome"] == "unresolved"


def test_tier_and_locative_rules_by_hand():
    assert tier_of(["town", "code"], False) == "corroborated"
    singles = [("address", False, False, False), ("town", True, False, False), ("city", False, False, False),
               ("town", False, False, False), ("town", True, True, False), ("town", True, False, True), ("demonym", False, False, False)]
    assert [tier_of([t], loc, village, alternate) for t, loc, village, alternate in singles] == list(TIERS[1:])
    assert is_locative(["a", "cabin", "in"]) and is_locative(["the", "town", "of"]) and not is_locative(["mayor", "of"])
    assert not is_locative([])


def test_hits_dropped_before_the_rule_are_exactly_those_it_would_drop(gazetteer, real_captions):
    """The vectorised drop of names that cannot count (context-only with nothing naming their
    country, no neighbour, no address) is a shortcut: without it every decision is the same."""
    texts = ["Baker talked about his hometown of Norman, Okla.",  # a pair names the country: "Baker" has support
             "Reading club in Norman, Okla.", "A walk in Reading, England", "Reading a book", "Perth, Scotland",
             "Lahore, Punjab", "Made in Gimli, MB R0C 1B0", "Reading in Perth", "French Reading list", *real_captions]
    shortcut = gazetteer.resolve(pa.array(texts), with_matches=True)
    plain = gazetteer.at_min_evidence(None)
    plain._can_count = lambda hits, recs, overlap, n, addresses: np.ones(len(hits), dtype=bool)
    full = plain.resolve(pa.array(texts), with_matches=True)
    for field in ("country", "outcome", "score", "tier", "matches"):
        assert getattr(shortcut, field).to_pylist() == getattr(full, field).to_pylist(), field
    assert ("baker", "US", "town") in {(m["alias"], m["country"], m["match_type"]) for m in shortcut.matches[0].as_py()}


def test_a_village_decides_at_its_own_tier(gazetteer):
    # GeoNames' cities500 places (500-999 people) are in the gazetteer at the "village" tier, which
    # --min-evidence bare_town leaves out; Plougras (Brittany, ~500 people) is one
    res = gazetteer.resolve(pa.array(["the chapel at Plougras in the rain", "a week in Plougras"]))
    assert res.country.to_pylist() == ["FR", "FR"] and res.tier.to_pylist() == ["village", "village"]
    assert gazetteer.at_min_evidence("bare_town").resolve(pa.array(["a week in Plougras"])).country.to_pylist() == [None]


def test_a_village_that_does_not_own_its_name_is_dropped():
    from connectors.geo.lexicon import load_lexicon

    entries = load_lexicon("gazetteer").entries.to_pandas()
    villages = entries[(entries["match_type"] == "town") & (entries["population"] < 1000)]
    assert len(villages) > 10_000 and not villages["context_only"].any()
