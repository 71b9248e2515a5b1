"""What WordNet says about a place name: is it also a common word, a person, a people, a dish?

Four small tables are derived from Princeton WordNet 3.0 at build time (``python -m scripts.derive.wordnet``)
and shipped with its licence notice; the gazetteer build reads only them:

``wordnet_names.csv`` — for every place name that WordNet lists, the facts the word filters need:
whether the name is also written in lower case (a common word: "reading", "nice", "orange"), and the
class of its first — most frequent — capitalised sense (``noun.location`` for London, ``noun.person``
for Lincoln and Jackson, ``noun.group`` for York). A name whose first sense is a lower-case word or a
non-place proper noun is *context-only* in the gazetteer: "Reading, Berkshire" counts, a bare
"Reading" does not.

``wordnet_collocations.csv`` — multi-word expressions that contain a place name and denote something
that is not a place: a food ("french fries"), an artifact ("panama hat"), an animal or breed ("german
shepherd"), a plant ("brussels sprouts"), a person ("jack london"), a substance ("plaster of paris").
They are matched as blockers, so the place alias inside them says nothing. Kept geographic: named
artifacts (instances such as London Bridge), flags and emblems ("Union Jack"), and every other sense
class — languages (noun.communication), currencies (noun.quantity), peoples and organisations
(noun.group), events, natural features. The same table holds the places that contain a country's name
or demonym and lie in no country (``places_in_no_country``): "South America", "Indian Ocean", "Gulf of
Mexico" name a continent or a sea, not the United States, India or Mexico.

``wordnet_demonyms.csv`` — the adjectives of a region or a city inside one country ("Tuscan", "Tasmanian",
"Bavarian") with that country (``regional_demonyms``): demonyms of the country in the gazetteer.

``wordnet_features.csv`` — the named natural features, parks and landmarks that lie in one country ("Lake Constance",
"Machu Picchu", "Eiffel Tower") with that country (``features_in_one_country``): ``region`` entries of the gazetteer.

``wordnet_words.csv`` — the words of large cities' names of several words that WordNet writes in lower case ("bay",
"coast"; ``lower_case_words``): a name made only of them is an English phrase ("gold coast"), matched capitalised only.
"""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from audit.geo.normalize import alias_norms, fold_diacritics
from audit.geo.wordnet_model import WordNet  # read from the database files by scripts.derive.wordnet, at build time only

NATURAL_OBJECT = "noun.object"  # WordNet's lexicographer file of natural objects: seas, rivers, lakes, mountains, islands
PLACE_SENSES = frozenset({"noun.location", NATURAL_OBJECT})  # cities, regions; rivers, islands, mountains
NON_GEOGRAPHIC_SENSES = frozenset({
    "noun.food", "noun.artifact", "noun.animal", "noun.plant", "noun.person", "noun.substance",
})
EMBLEM_HEADS = frozenset({"flag", "emblem"})  # an artifact under these stays geographic (the Union Jack)

NAME_COLUMNS = ["alias_norm", "lower_noun", "lower_other_pos", "first_sense", "first_sense_written", "tagged", "proper_place_senses",
                "proper_other_senses"]
COLLOCATION_COLUMNS = ["alias_norm", "lemma", "sense", "contains"]

WORDNET_NOTICE = """\
The files wordnet_names.csv, wordnet_collocations.csv, wordnet_demonyms.csv, wordnet_features.csv and
wordnet_words.csv in this folder are derived from WordNet 3.0 (lemmas, sense order, lexicographer file names,
and the countries that part holonyms put a place in). WordNet's licence requires this notice:

WordNet Release 3.0

This software and database is being provided to you, the LICENSEE, by Princeton University under the
following license. By obtaining, using and/or copying this software and database, you agree that you
have read, understood, and will comply with these terms and conditions.:

Permission to use, copy, modify and distribute this software and database and its documentation for
any purpose and without fee or royalty is hereby granted, provided that you agree to comply with the
following copyright notice and statements, including the disclaimer, and that the same appear on ALL
copies of the software, database and documentation, including modifications that you make for
internal use or for distribution.

WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.

THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR
WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO
REPRESENTATIONS OR WARRANTIES OF MERCHANT- ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE
USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS,
COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS.

The name of Princeton University or Princeton may not be used in advertising or publicity pertaining
to distribution of the software and/or database. Title to copyright in this software, database and
any associated documentation shall at all times remain with Princeton University and LICENSEE agrees
to preserve same.
"""


def _lemma_norms(wn: WordNet) -> dict[str, list[str]]:
    """Normalized form (as the lexicon normalizes aliases, diacritics folded) → WordNet index keys."""
    keys = sorted(wn.senses)
    norms = alias_norms([k[2:].replace("_", " ") for k in keys])
    out: dict[str, list[str]] = {}
    for key, norm in zip(keys, norms):
        out.setdefault(fold_diacritics(norm), []).append(key)
    return out


def _written(word: str) -> str:
    return word.split("(")[0]  # adjective markers: "galore(ip)"


def _is_lower_form(wn: WordNet, key: str) -> bool:
    lemma = key[2:]
    return any(f == f.lower() and any(ch.isalpha() for ch in f)
               for s in wn.senses[key] for f in (_written(w) for w in wn.synsets[s].words) if f.lower() == lemma)


def lower_case_words(wn: WordNet, words: set[str]) -> pd.DataFrame:
    """The ``words`` WordNet lists as a lower-case word of any part of speech, inflected forms included ("bay",
    "coast", "springs"; not "vegas", "louis" or "moines", which wordfreq counts often because names are
    words to it): the words a name of several words is made of when it is a phrase of English prose."""
    rows = sorted(w for w in words if " " not in w and any(
        _is_lower_form(wn, f"{pos}:{b}") for pos in "nvar" for b in wn.base_forms(pos, w)))
    return pd.DataFrame({"word": rows})


def name_senses(wn: WordNet, names: set[str]) -> pd.DataFrame:
    """One row per place name WordNet knows: is it a lower-case word (also as an inflected form:
    "Highways", "Grants", "Media"), and what are its capitalised senses."""
    rows = []
    index = _lemma_norms(wn)
    for norm in sorted(names):
        folded = fold_diacritics(norm)
        keys = index.get(folded, [])
        inflected = [f"{pos}:{b}" for pos in "nva" if " " not in folded for b in wn.base_forms(pos, folded) if b != folded]
        if not keys and not inflected:
            continue
        lower_noun = any(k.startswith("n:") and _is_lower_form(wn, k) for k in inflected)
        lower_other = any(not k.startswith("n:") and _is_lower_form(wn, k) for k in inflected)
        tagged = False
        first_sense, first_written = "", ""
        place = other = 0
        for key in keys:
            lemma = key[2:]
            for rank, skey in enumerate(wn.senses[key]):
                syn = wn.synsets[skey]
                forms = [_written(w) for w in syn.words if _written(w).lower() == lemma]
                is_lower = any(f == f.lower() and any(ch.isalpha() for ch in f) for f in forms)
                if key.startswith("n:"):
                    lower_noun |= is_lower
                    if rank == 0:
                        first_sense, first_written = syn.lexname, "lower" if is_lower else "proper"
                        tagged = wn.tagged[key] > 0
                    if not is_lower:
                        place += syn.lexname in PLACE_SENSES
                        other += syn.lexname not in PLACE_SENSES
                else:
                    lower_other |= is_lower
        if not keys and lower_noun:
            first_written = "lower"  # only an inflected common noun ("Highways"): its first sense is that noun
        rows.append((norm, lower_noun, lower_other, first_sense, first_written, tagged, place, other))
    return pd.DataFrame(rows, columns=NAME_COLUMNS)


def _blocked_sense(wn: WordNet, skey: str) -> str | None:
    """The sense class that makes a synset non-geographic, or None when it stays geographic."""
    syn = wn.synsets[skey]
    if syn.lexname not in NON_GEOGRAPHIC_SENSES:
        return None
    if syn.lexname == "noun.artifact":
        if syn.instance:  # a named structure (London Bridge) is somewhere
            return None
        heads = {_written(w).lower() for k in wn.hypernym_closure(skey) for w in wn.synsets[k].words}
        if heads & EMBLEM_HEADS:
            return None
    return syn.lexname


def _aliases_inside(aliases: set[str]) -> Callable[[str], list[str]]:
    """A function from a normalized multi-word name to the aliases it contains as whole words."""
    by_first: dict[str, list[str]] = {}
    for a in aliases:
        if a:
            by_first.setdefault(a.split()[0], []).append(a)

    def inside(norm: str) -> list[str]:
        padded = f" {norm} "
        return sorted({a for t in set(norm.split()) for a in by_first.get(t, ()) if a != norm and f" {a} " in padded})

    return inside


def _lemma(wn: WordNet, synset_keys: list[str], norm: str) -> str:
    """How WordNet writes the lemma normalized as ``norm`` among the words of ``synset_keys``."""
    return next(_written(w) for s in synset_keys for w in wn.synsets[s].words
                if fold_diacritics(alias_norms([_written(w).replace("_", " ")])[0]) == norm).replace("_", " ")


def collocations(wn: WordNet, aliases: set[str]) -> pd.DataFrame:
    """Multi-word WordNet nouns that contain a place alias and whose every sense is non-geographic."""
    aliases_in = _aliases_inside(aliases)
    rows = []
    for norm, keys in sorted(_lemma_norms(wn).items()):
        if " " not in norm:
            continue
        inside = aliases_in(norm)
        if not inside:
            continue
        noun_keys = [k for k in keys if k.startswith("n:")]
        if not noun_keys:
            continue
        senses = [_blocked_sense(wn, s) for k in noun_keys for s in wn.senses[k]]
        if senses and all(senses):
            lemma = _lemma(wn, list(wn.senses[noun_keys[0]]), norm)
            rows.append((norm, lemma, ";".join(sorted({s for s in senses if s})), ";".join(inside)))
    return pd.DataFrame(rows, columns=COLLOCATION_COLUMNS)


def _kinds(wn: WordNet, keys: set[str]) -> set[str]:
    """The words of synsets ``keys``, lower case: the kinds a synset is, given its hypernym closure."""
    return {_written(w).lower() for k in keys for w in wn.synsets[k].words}


def _is_country_kind(wn: WordNet, key: str) -> bool:
    """Is synset ``key`` a kind of country or state (``COUNTRY_KINDS``) by its hypernyms?"""
    return bool(_kinds(wn, wn.hypernym_closure(key)) & COUNTRY_KINDS)


# What a place in no country may be: a sea or an ocean, a continent, or a named region that is no political unit
# ("Latin America" is directly a geographical area; a city or a province is one only through its own kind).
NO_COUNTRY_KINDS = frozenset({"body_of_water", "continent"})
NO_COUNTRY_DIRECT_KINDS = frozenset({"geographical_area", "isthmus"})
COUNTRY_KINDS = frozenset({"country", "state"})  # a synset under these, named as a country, is that country


def places_in_no_country(wn: WordNet, countries: set[str], country_words: set[str], places: set[str]) -> pd.DataFrame:
    """Multi-word WordNet places that contain a country's name or demonym (``country_words``) and lie in no
    country: seas and oceans, continents and named regions (``NO_COUNTRY_KINDS``, ``NO_COUNTRY_DIRECT_KINDS``; WordNet
    files former states that spanned several of today's countries, "Austria-Hungary", "French Indochina", as regions
    too) that no place sense puts inside a country, neither themselves nor anything they are part of (part holonyms,
    transitively). "Central America", "Indian Ocean", "Gulf of Mexico" say nothing of the United States, India
    or Mexico, so they are blockers. A place inside a country ("New Mexico") and every name the gazetteer has
    as a place (``places``) are left to the gazetteer."""
    aliases_in = _aliases_inside(country_words)
    words = sorted({w for s in wn.synsets.values() if s.key.startswith("n:") for w in s.words})
    norm_of = dict(zip(words, (fold_diacritics(n) for n in alias_norms([_written(w).replace("_", " ") for w in words]))))

    def is_country(key: str) -> bool:
        syn = wn.synsets[key]
        return any(norm_of.get(w) in countries for w in syn.words) and _is_country_kind(wn, key)

    rows = []
    for norm, keys in sorted(_lemma_norms(wn).items()):
        if " " not in norm or norm in places:
            continue
        inside = aliases_in(norm)
        senses = [s for k in keys if k.startswith("n:") for s in wn.senses[k] if wn.synsets[s].lexname in PLACE_SENSES]
        if not inside or not senses:
            continue
        if not all(_kinds(wn, wn.hypernym_closure(s)) & NO_COUNTRY_KINDS
                   or _kinds(wn, set(wn.synsets[s].hypernyms)) & NO_COUNTRY_DIRECT_KINDS
                   for s in senses):
            continue
        if any(is_country(k) for s in senses for k in wn.part_closure(s)):
            continue
        rows.append((norm, _lemma(wn, senses, norm), "in_no_country", ";".join(inside)))
    return pd.DataFrame(rows, columns=COLLOCATION_COLUMNS)


def matchable(aliases: set[str], senses: pd.DataFrame, min_letters: int = 4) -> set[str]:
    """The aliases a blocker can matter for: long enough to be kept and not common words themselves
    (a common word is context-only already, so "orange grove" needs no blocker)."""
    cols = ["alias_norm", "lower_noun", "lower_other_pos", "first_sense_written"]
    common = {n for n, ln, lo, w in zip(*(senses[c] for c in cols)) if is_common_word(ln, lo, w)}
    return {a for a in aliases if a not in common and len(a.replace(" ", "")) >= min_letters}


def is_common_word(lower_noun: bool, lower_other_pos: bool, first_sense_written: str) -> bool:
    """A name also used as an English common word: "Reading", "Nice", "Orange", "Mobile".

    A lower-case verb, adjective or adverb always counts ("nice", "mobile"); a lower-case noun counts
    unless the name's most frequent noun sense is the capitalised one (Phoenix the city before the
    mythical bird).
    """
    return bool(lower_other_pos) or (bool(lower_noun) and first_sense_written != "proper")


def is_other_proper_noun(first_sense: str, first_sense_written: str, tagged: bool, place_senses: int, other_senses: int) -> bool:
    """A name whose main sense is a person, a people, a language or an organisation.

    With SemCor tag counts WordNet's first sense is the most frequent one (Lincoln the president
    before the city); without them the order means little, so the majority of the capitalised
    senses decides (Jackson: seven people, four places; Vancouver: one navigator, two places).
    """
    if first_sense_written != "proper" and not place_senses + other_senses:
        return False
    if tagged and first_sense_written == "proper":
        return first_sense not in PLACE_SENSES
    return other_senses > place_senses


DEMONYM_COLUMNS = ["alias", "alias_norm", "country_alpha2", "place"]
FEATURE_COLUMNS = ["alias", "alias_norm", "country_alpha2", "kind"]
FEATURE_SENSES = PLACE_SENSES | {"noun.artifact"}  # a named structure is somewhere: the Eiffel Tower, Big Ben
# What a named feature is not: a settlement or an administrative unit (the gazetteer judges those by population and by
# its own sources), nor a street (Fifth Avenue and Park Avenue are in every city's listings).
NOT_FEATURE_KINDS = frozenset({
    "city", "town", "village", "municipality", "port", "state", "province", "region", "district", "county",
    "administrative_district", "country", "thoroughfare", "street", "avenue", "road",
})


def _norm_word(word: str) -> str:
    """A WordNet word ("Lake_Tahoe", "galore(ip)") normalized as the lexicon normalizes aliases, diacritics folded."""
    return fold_diacritics(alias_norms([_written(word).replace("_", " ")])[0])


def _country_of(wn: WordNet, country_codes: dict[str, set[str]]) -> Callable[[str], str | None]:
    """A function from a synset key to the alpha-2 code of the country it is, or None: one of its words names exactly
    one country (``country_codes``: a country's names, normalized, to its codes) and it is a kind of country or state."""
    def country(key: str) -> str | None:
        codes = {c for w in wn.synsets[key].words for c in country_codes.get(_norm_word(w), ())}
        return next(iter(codes)) if len(codes) == 1 and _is_country_kind(wn, key) else None

    return country


def features_in_one_country(wn: WordNet, country_codes: dict[str, set[str]], places: set[str]) -> pd.DataFrame:
    """Named natural features, parks and landmarks that lie in one country: multi-word WordNet names ("Lake Tahoe",
    "Great Barrier Reef", "Acadia National Park", "Machu Picchu") whose every noun sense is a named individual (an
    instance) of place (noun.location, noun.object), no settlement, administrative unit or street (``NOT_FEATURE_KINDS``)
    and no country itself, and whose part holonyms put every sense in the same single country (the test of
    ``regional_demonyms``). Names the gazetteer already has as places (``places``) are left to it.
    Why: a caption of a landscape names the lake, the island or the park, not the town ("Garden pavilion on the
    shores of Lake Chiemsee"); WordNet places its features by part holonyms, so the country is read, not guessed.
    One-word names are left out: a river's or a mountain's short name is a word or a namesake ("the White", "Adams")."""
    country = _country_of(wn, country_codes)
    rows = []
    for norm, keys in sorted(_lemma_norms(wn).items()):
        if " " not in norm or norm in places:
            continue
        senses = [s for k in keys if k.startswith("n:") for s in wn.senses[k]]
        if not senses or not all(wn.synsets[s].instance and wn.synsets[s].lexname in FEATURE_SENSES for s in senses):
            continue
        if any(_kinds(wn, wn.hypernym_closure(s)) & NOT_FEATURE_KINDS or country(s) is not None for s in senses):
            continue
        inside = [{c for k in wn.part_closure(s) if (c := country(k)) is not None} for s in senses]
        if any(len(i) != 1 for i in inside) or len(set.union(*inside)) != 1:
            continue
        lemma = _lemma(wn, senses, norm)
        if not lemma[:1].isupper():  # "twin towers": WordNet writes it as a common noun, not a name
            continue
        kind = _written(wn.synsets[wn.synsets[senses[0]].hypernyms[0]].words[0]).replace("_", " ")
        rows.append((lemma, norm, next(iter(inside[0])), kind))
    return pd.DataFrame(rows, columns=FEATURE_COLUMNS)


def regional_demonyms(wn: WordNet, country_codes: dict[str, set[str]], demonyms: set[str]) -> pd.DataFrame:
    """Adjectives of a region or a city inside one country ("Tuscan", "Tasmanian", "Bavarian", "Texan") with that
    country: WordNet's pertainyms (an adjective's ``\\`` pointer: Tuscan pertains to Tuscany) of a place (noun.location,
    noun.object) that is no country itself and that part holonyms put in exactly one country (``country_codes``:
    a country's names, normalized, to its alpha-2 codes; a synset is a country when one of its words names exactly
    one and it is a kind of country or state). Kept only when the adjective is written capitalised, has that one
    sense ("Roman" also types and numerals, "Olympic" the games, "Catalan" the language) and is never written in
    lower case ("attic", "spartan"); the country's own demonyms (``demonyms``) are the lexicon's already.
    Why: a caption says where a thing is from by the region's adjective as often as by the country's ("a Tuscan
    farmhouse", "Tasmanian sunset"), and the adjective is a demonym of the country the region lies in."""
    country = _country_of(wn, country_codes)
    lower_words = {_written(w) for s in wn.synsets.values() for w in s.words if _written(w) == _written(w).lower()}
    rows = []
    for syn in wn.synsets.values():
        for target in syn.pertains_to:
            place = wn.synsets[target]
            if place.lexname not in PLACE_SENSES or country(target) is not None:
                continue
            inside = {c for k in wn.part_closure(target) if (c := country(k)) is not None}
            if len(inside) != 1:
                continue
            for word in (_written(w) for w in syn.words):
                lemma = word.lower()
                if (not word[:1].isupper() or len(wn.senses.get(f"a:{lemma}", ())) != 1 or lemma in lower_words
                        or _norm_word(word) in demonyms):
                    continue
                rows.append((word.replace("_", " "), _norm_word(word), next(iter(inside)), _written(place.words[0]).replace("_", " ")))
    out = pd.DataFrame(rows, columns=DEMONYM_COLUMNS).drop_duplicates(["alias_norm", "country_alpha2"])
    return out.sort_values(["alias_norm", "country_alpha2"]).reset_index(drop=True)
