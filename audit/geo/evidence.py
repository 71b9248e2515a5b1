"""How strong a record's evidence for its country is, and the gazetteer's decision rule.

Evidence tiers, strongest first (``TIERS``); every resolved record gets one, and ``min_evidence``
turns a record below the chosen tier into ``unresolved``:

1. ``corroborated`` — two distinct aliases agree ("Kerrville, TX"; "Perth, Scotland"; "Kenyan runners
   in Nairobi").
2. ``country_region_address`` — one country, region, county, state code pair or postal address.
3. ``town_after_locative`` — one small place right after a locative word ("a cabin in Gimli").
4. ``large_city`` — one city of ≥ 100,000 people or a national capital.
5. ``bare_town`` — one small place with nothing around it ("Gimli sunset").
6. ``village`` — one place of fewer than 1,000 people (GeoNames' ``cities500`` beyond ``cities1000``),
   with or without a locative ("a week in Vougeot"): the gazetteer's widest net, kept apart so
   ``--min-evidence bare_town`` leaves it out.
7. ``alternate_name`` — one place by a name GeoNames lists among its other names and nothing else names
   ("Bangalore" for Bengaluru, "Genf" for Geneva): the names of any language, with no language tag, kept
   apart so ``--min-evidence village`` leaves them out.
8. ``demonym`` — one adjective of nationality ("Danish style sideboard").

The gazetteer's decision: places outrank demonyms. A country's place score is 4 per country,
region, code or address alias, 3 per large city, 2 per small place; the highest place score wins, a
tie at the top is ambiguous, and demonyms decide only a record that names no place at all.

Named rules that read case and context (each tested in tests/audit/geo/test_evidence_rules.py):

* ``NAMED_COUNTRY_BREAKS_TIE`` — when countries tie on place score and exactly one of them is named
  as a country, it wins ("a farm stay near Eden Valley, South Australia" style: two namesake towns
  abroad tie one country name). Why: a caption names a country on purpose, while the towns tying it
  are often namesakes, words of a business name or parts of a longer name.
* ``DEMONYM_BREAKS_TIE`` — when countries still tie on place score and the record's demonyms name exactly one
  of them most, that one wins ("Greek Macedonia, Greece flag": the country Greece ties the country Macedonia, and
  "Greek" says which the record is about). Why: a demonym is weaker evidence than a place, so it decides nothing
  against one, but it is evidence, and between equals it is the only difference.
* ``COUNTRY_NAME_KEPT`` — a name its country owns (the country entry counts alone) keeps that reading
  when another name of the record supports a namesake town of it: "Piedmont Italy" is Italy, not the
  town of Italy, Texas, that the Piedmonts of the United States would agree with; "guided tour of Copper
  Canyon, Mexico" is Mexico. Only a state or region written right after it reads it as the town ("Italy,
  TX": the two are paired first). Why: a caption writes a country's name to name the country; the
  towns named after countries are read as such only with their state.
* ``NAME_IN_PROSE`` — a country name that needs support because it is also a word or a given name
  ("china" the porcelain, "Jordan" the player) counts alone when written as a place is: capitalised,
  right after a locative ("made in China", "flights from Jordan"), and not followed by another
  capitalised word (which makes it part of a longer name: a person, a business, a product line).
  A name that is also a first-level region ("Georgia") stays context-only: after "in" the region is
  as likely as the country; so does a name the lexicon gives several countries. Why: people write
  places after "in/at/from"; the word, the person and the brand are written otherwise.
* ``PLACE_NAME_IN_PROSE`` — the same reading for a town or city that needs support only because it is
  also a person's name ("Sofia", "Decatur", "Worthington": US Census given names and surnames, the
  curated exclusions that are such names, and the names WordNet knows first as a person, "Hutchinson",
  "Kitchener"): written as a place, capitalised right after "in", "at" or "from" (``PERSON_LOCATIVES``:
  people are gathered around and sat near) and not followed by another capitalised word ("a new office
  opened in Sofia", "a meatpacking plant in Worthington"), it counts alone for the country whose place no
  namesake abroad comes within half the size of (``NAMESAKE_DOMINANCE``, the test the lexicon puts a large
  city's name to: "a kitchen in Alameda" is California's, the Spanish town being 15 times smaller), which is
  every place of that name when they lie in one country. A name that is also an English word ("Sunrise",
  "Stock", "March") or shared by countries of comparable places ("Manchester") gains nothing, and neither do
  the given names that are as often words written capitalised (``GIVEN_NAME_WORDS``: "in April"), nor a
  name in the possessive ("at Macy's", "at McDonald's": a
  business named after its founder). Names context-only as another proper noun (WordNet: "Congress",
  "Christmas") gain nothing either: an institution or a holiday is written after "in" and "at" as a place
  is. Why: a person is not written after "in"; the place named after one is.
* ``PLACE_NAME_AS_LABEL`` — the same lift for such a town or city set apart as a label, as ``NAME_AS_LABEL`` reads
  one (closing the record after a comma or a dash, a field of its own between dashes or bars, or alone in
  parentheses): "Living room | Molly's Cottage, Knighton", "Office space - Muncy", "The Walper Hotel - Kitchener -
  Bedroom". Not a bracketed name after a personal pronoun ("hit him (Davis)": the editor's note of who) or in
  capitals ("(NASH)": an acronym), and not a field between commas, which in prose sets off people ("Her eldest,
  Harrison, 8,"). The possessive, the given names that are as often words and the names of comparable places in
  several countries are left alone as above.
* ``NAME_AS_LABEL`` — the same lift for a country name set apart as a label in the text as written:
  alone in parentheses ("…Jewelry Gifts(China)", "(China (Mainland))": a marketplace's origin label)
  closing the record after a comma or a dash ("Sunset from the beach, Palau"), or a field of its own between dashes
  or bars ("Flag | China | 3x5 ft"). Why: a label, like
  the last line of an address, is a place by where it stands; the word and the person are written
  inside the prose.
* ``NAME_IN_TRADE_PHRASE`` — the same lift for a capitalised name after "made in" ("Made In China
  Modern Office Table", where every word is capitalised and ``NAME_IN_PROSE`` reads a longer name) or
  right before a noun of the trade (``TRADE_NOUNS``: "China Suppliers", "China factory"). Why: a trade
  phrase states where goods come from; "bone china manufacturer" is lower case, "Jordan Brand" names no
  trade noun.
"""
from __future__ import annotations

from audit.geo.choices import TIERS

TIER_RANK = {t: i for i, t in enumerate(TIERS)}
VILLAGE_POPULATION = 1000  # a lone town below this many people decides at the ``village`` tier
PLACE_WEIGHTS = {"country": 4, "region": 4, "code": 4, "address": 4, "city": 3, "town": 2}
# A place named by one of its other names (GeoNames' alternates: "Genf", and the Vietnamese "Nhat Chieu" of China's
# Rizhao) counts below any place named by its own name, as its tier is below theirs: a foreign form is the weaker
# evidence ("… on Nhat Chieu, Tay Ho": Tay Ho, Hanoi).
ALTERNATE_NAME_WEIGHT = 1
# Prepositions of place (and "city of …"): a capitalised small place right after one is meant as a place.
LOCATIVES = frozenset({"in", "at", "near", "from", "outside", "around", "across", "throughout", "within", "of"})
# The prepositions no person is written after ("in Worthington"; "gathered around Santa Claus" is the person)
PERSON_LOCATIVES = frozenset({"in", "at", "from"})
_PLACE_NOUNS_BEFORE_OF = frozenset({"city", "town", "village", "county", "borough", "township", "hamlet", "suburb", "province", "state"})


# Thoroughfare types (USPS Publication 28, appendix C1, the common ones; Royal Mail's "close",
# "crescent"): a name right before one is a street ("Dublin Road", "Oak Ridge Dr", "Korea Way"), not the place. A
# country's name before a street type written in lower case is the exception: a common noun, a road in that country
# ("Old Laos road", "Croatia road trip"), as a street's name is written with its type capitalised.
STREET_TYPES = frozenset({
    "street", "st", "road", "rd", "avenue", "ave", "av", "boulevard", "blvd", "drive", "dr", "lane", "ln", "way",
    "court", "ct", "place", "pl", "terrace", "ter", "parkway", "pkwy", "highway", "hwy", "circle", "cir", "trail",
    "trl", "pike", "crescent", "close", "square", "sq", "expressway", "expy", "freeway", "fwy", "turnpike", "tpke",
})


NAME_IN_PROSE = "name_in_prose"
PLACE_NAME_IN_PROSE = "place_name_in_prose"
PLACE_NAME_AS_LABEL = "place_name_as_label"
NAME_AS_LABEL = "name_as_label"
NAME_IN_TRADE_PHRASE = "name_in_trade_phrase"
# Nouns of the trade after a country's name: the listing says where the goods are made ("China Suppliers").
TRADE_NOUNS = frozenset({"supplier", "suppliers", "factory", "factories", "manufacturer", "manufacturers", "wholesale",
                         "wholesaler", "wholesalers", "exporter", "exporters", "maker", "makers"})
NAMED_COUNTRY_BREAKS_TIE = "named_country_breaks_tie"
DEMONYM_BREAKS_TIE = "demonym_breaks_tie"
COUNTRY_NAME_KEPT = "country_name_kept"
STATE_CODE_PICKS_NAMESAKE = "state_code_picks_namesake"
PERSON_NAME = "person_name"
DEMONYM_IN_FIXED_PHRASE = "demonym_in_fixed_phrase"
# Nouns that make a demonym before them a dish, a breed, a sport, an airline, a named quarter, a finish, a
# garment or an instrument that travels, not a place ("Mexican food", "German Shepherd", "American football",
# "French Quarter", "Venetian plaster", "Hawaiian shirt"):
# WordNet's collocations block the fixed ones it lists; these heads cover the open classes. Measured
# and left out: styles ("French Country kitchen", "Japanese style"), which the silver labels place in
# the style's country, armies and the press ("Lebanese Army", "Canadian Press"), which geo_dev's do, and
# languages, which count as the country's emblem (tests/audit/geo/test_gazetteer_resolve.py).
FIXED_PHRASE_HEADS = frozenset({
    "quarter", "bungalow", "fries", "toast", "braid", "braids", "twist", "manicure", "horn", "bulldog", "poodle",
    "mastiff", "shepherd", "terrier", "setter", "pointer", "cuisine", "food", "restaurant", "dressing", "vanilla",
    "roast", "bread", "salad", "sausage", "broccoli", "football", "footballer", "rules", "airlines", "airways",
    "plaster", "blind", "blinds", "husky", "shirt", "mask", "guitar",
})
BUSINESS_NAME = "business_name"

# A place owns a name its namesakes abroad share when none of them comes within this fraction of its size (London
# against London, Ontario): the lexicon's test for a city's name (``LexiconConfig.city_dominance``) and, in
# ``place_name_in_prose``, for a person-named place written as one.
NAMESAKE_DOMINANCE = 0.5
# a bracketed name after one of these is the editor's note of who the pronoun is ("He (Steele) said"), no label
PERSONAL_PRONOUNS = frozenset({"he", "she", "him", "her", "his", "hers", "they", "them", "their", "i", "me", "we", "us", "you"})
# Given names that are as often English words written capitalised (months, virtues, nouns at a
# sentence start): before a place they mark no person ("May Paris traffic", "Grace Bay").
GIVEN_NAME_WORDS = frozenset({
    "april", "june", "may", "august", "autumn", "summer", "dawn", "eve", "grace", "hope", "joy", "faith", "will",
    "mark", "bill", "art", "guy", "pat", "sue", "ray", "rich", "chance", "hunter", "king", "major", "rose",
    "lily", "ivy", "daisy", "angel", "christian", "sandy", "ruby", "jade", "pearl", "crystal", "amber", "misty",
    "sunny", "forest", "dale", "glen", "brook", "cliff", "lake", "river", "west", "north", "south", "east", "new",
    "old", "mount", "saint", "san", "santa", "fort", "port", "said", "don", "van", "von", "de", "del", "la", "le",
    "long", "little", "young", "general", "lord", "lady", "prince", "princess", "queen", "star", "golden",
})
# Words that make a capitalised name before them a feature or a building, not a surname: "Sydney
# Harbour", "Florence Cathedral" (census surnames many of them are: Hill, Park, Church).
PLACE_NOUNS = frozenset({
    "harbour", "harbor", "bridge", "park", "hall", "house", "hill", "hills", "beach", "lake", "river", "center",
    "centre", "castle", "tower", "bay", "valley", "port", "falls", "church", "square", "court", "island", "islands",
    "mountain", "mountains", "city", "county", "station", "airport", "cathedral", "palace", "gardens", "garden",
    "museum", "zoo", "stadium", "university", "college", "school", "market", "street", "road", "avenue", "point",
    "heights", "springs", "creek", "canyon", "forest", "woods", "marsh", "cove", "pier", "wharf",
    "temple", "abbey", "chapel", "fort", "cape", "head", "ridge", "peak", "downs", "green", "common",
    "ford", "field", "fields", "gate", "dam", "reef", "coast", "shore", "sound", "strait", "gulf", "sea", "ocean",
    "province", "state", "region", "district", "international", "national", "central", "north",
    "south", "east", "west", "old", "new", "town", "village", "opera", "arena", "plaza", "mall",
})
# Carmakers named after a place ("Toyota", Aichi): the name followed or preceded by another capitalised
# word is the make of a car or a dealer ("Toyota Camry", "Yarra Valley Toyota").
BRANDS = frozenset({"toyota", "lincoln", "pontiac", "cadillac", "dodge", "mercedes", "bentley"})
# Titles and offices written before a person's name ("Mr Paterson", "Mayor Virginia Raggi", "Coach
# Holroyd"): a capitalised place name right after one is a surname or a given name. ("Miss" and "Rep"
# are left out: "Miss Ohio" is a pageant of the place, "Rep Congo" the Republic of the Congo.)
HONORIFICS = frozenset({
    "mr", "mrs", "ms", "mx", "dr", "sir", "dame", "sen", "senator", "gov", "governor",
    "mayor", "president", "coach", "judge", "justice", "officer", "sgt", "sergeant", "lt", "capt", "captain", "col",
    "gen", "prof", "professor", "rev", "reverend", "pastor", "father", "detective", "attorney", "councillor",
    "councilman", "councilwoman", "commissioner", "trooper", "deputy", "chancellor", "minister", "sheriff",
})
# US party-and-place labels ("Barbara Lee, D-Oakland"; "R-Texas"): a capital letter there is no initial.
PARTY_LETTERS = frozenset({"D", "R", "I"})


def named_country_breaks_tie(leaders: list[int], named: set[int]) -> list[int]:
    """``NAMED_COUNTRY_BREAKS_TIE``: of countries tied on place score, the one the record names as a
    country (when exactly one is) wins."""
    named_leaders = [c for c in leaders if c in named]
    return named_leaders if len(named_leaders) == 1 else leaders


def demonym_breaks_tie(leaders: list[int], demonyms: dict[int, int]) -> list[int]:
    """``DEMONYM_BREAKS_TIE``: of countries tied on place score, the one the record's demonyms name most (when
    exactly one is named most)."""
    counts = [demonyms.get(c, 0) for c in leaders]
    most = max(counts)
    return [leaders[counts.index(most)]] if most and counts.count(most) == 1 else leaders


def state_code_picks_namesake(heads: list[tuple], codes: list[tuple], code_type: int, town_type: int,
                              written: str) -> tuple[set, set]:
    """``STATE_CODE_PICKS_NAMESAKE``: a name right before a state, province or postal code keeps its
    small namesakes in the code's country even when the gazetteer does not put them in that very state
    (GeoNames holds one "Malta" of the US, in Illinois; "Malta NY" is the town of Malta, New York).
    Only a code written as one (``written``: in capitals, "NY", or an abbreviation of 3+ letters,
    "Minn"): a two-letter one in title case is as often a word ("La", "Pa", "Mo").
    Returns the head entries and the code entries kept (both empty when no head is in a code's country)."""
    keep_heads: set = set()
    keep_codes: set = set()
    if not (written.isupper() or len(written) >= 3):
        return keep_heads, keep_codes
    for t in codes:
        if t[2] != code_type:
            continue
        for e in heads:
            if e[1] == t[1] and e[2] == town_type and e is not t:
                keep_heads.add(e)
                keep_codes.add(t)
    return keep_heads, keep_codes


def person_name(before: list[str], name: str, after: str | None, given: frozenset[str], surnames: frozenset[str]) -> bool:
    """``PERSON_NAME``: is a capitalised place name part of a person's name? Either it follows a
    title ("Mr Paterson", "Mayor Virginia Raggi") or a capitalised given name, with or without an
    initial ("Bruce Springfield", "John F Kennedy"), or it
    is itself a given name in title case followed by a capitalised surname ("Florence Pugh", "Sydney
    Sweeney"). ``before`` holds the tokens before the name as written (nearest last) that are no place
    themselves, ``after`` the next one (None when it is a place or there is none). Why: people are
    named after places and places after people; the given name beside it says which one is written."""
    at = len(before) - 1  # the token right before the name
    prev = before[at] if before else ""
    if prev.lower() in HONORIFICS and prev[:1].isupper():
        return True  # a title: "Mr Paterson", "Mayor Virginia Raggi"
    if at >= 1 and len(prev) == 1 and prev.isupper() and prev not in PARTY_LETTERS:
        at -= 1  # an initial: "John F Kennedy"
        prev = before[at]
    lead = before[at - 1] if at >= 1 else ""  # the word before the given name
    if _title(prev) and prev.lower() in given and prev.lower() not in GIVEN_NAME_WORDS and lead.lower() not in PLACE_NOUNS:
        return True  # (after a place noun the given name is part of the place: "Lake Louise", "Lake Constance")
    return (after is not None and _title(name) and name.lower() in given and _title(after)
            and after.lower() in surnames and after.lower() not in PLACE_NOUNS)


def demonym_in_fixed_phrase(next_word: str) -> bool:
    """``DEMONYM_IN_FIXED_PHRASE``: does the word after a demonym (lower case) make a fixed phrase of
    it ("Spanish Bungalow", "French Quarter", "Thai cuisine")? Why: the dish, the breed and the
    quarter are found far from their country; the demonym then says nothing of where the picture is."""
    return next_word in FIXED_PHRASE_HEADS


def business_name(run: list[str], name: str) -> bool:
    """``BUSINESS_NAME``: is the place name a carmaker's, beside another capitalised word ("Yarra
    Valley Toyota", "Toyota Camry")? ``run``: the capitalised words the name stands in (itself and up
    to three each side). (Lodging and corporate names were measured too: a hotel named after a place
    mostly stands there, "Hotel Moscow", "Butterfly Beach Hotel Barbados", so they are not read.)"""
    return len(run) >= 2 and name.lower() in BRANDS


def _title(word: str) -> bool:
    return len(word) > 1 and word[0].isupper() and word[1:].islower()


def name_in_prose(entries: list[tuple], country_type: int, region_type: int) -> list[tuple]:
    """``NAME_IN_PROSE``, for a name written as a place: its context-only country entries made to count
    alone, and its namesake towns dropped — unless the name is also a region or names several
    countries, when nothing changes.
    (An entry is ``(alias_norm, country, type, pair_only, context_only, ...)``.)"""
    if any(e[2] == region_type for e in entries):
        return entries
    lifted = [(*e[:4], False, *e[5:]) for e in entries if e[2] == country_type and e[4]]
    return lifted if len({e[1] for e in lifted}) == 1 else entries  # several countries' name: no help


def place_name_in_prose(entries: list[tuple], name: str) -> list[tuple]:
    """The lift of ``PLACE_NAME_IN_PROSE`` and ``PLACE_NAME_AS_LABEL``, for a town or city name written as a place
    or a label whose every entry is context-only as a person's name: the entries of the country whose largest place
    no other country's comes within ``NAMESAKE_DOMINANCE`` of (every entry, when they lie in one country), made to
    count alone, unless the name is a ``GIVEN_NAME_WORDS`` word; else unchanged. (An entry is ``(alias_norm,
    country, type, pair_only, context_only, admin1, case, population, alternate)``; ``name`` is the name lower-cased.)"""
    if name in GIVEN_NAME_WORDS:
        return entries
    largest: dict[int, int] = {}
    for e in entries:
        largest[e[1]] = max(largest.get(e[1], 0), e[7] or 0)
    owner = max(largest, key=largest.__getitem__)
    if any(pop >= NAMESAKE_DOMINANCE * largest[owner] for code, pop in largest.items() if code != owner):
        return entries
    return [(*e[:4], False, *e[5:]) for e in entries if e[1] == owner]


def check_min_evidence(tier: str | None) -> str | None:
    if tier is not None and tier not in TIER_RANK:
        raise ValueError(f"min_evidence must be one of {TIERS}, got {tier!r}")
    return tier


def is_locative(previous: list[str], person: bool = False) -> bool:
    """Does the token sequence just before a place mark it as a location?

    ``previous`` holds the (normalized) tokens before the place, nearest last. "of" counts only
    after a place noun ("the town of Gimli"), not as a possessive ("the mayor of Gimli" counts via
    nothing here, on purpose: people are "of" places too). For a name that is also a person's
    (``person``) only ``PERSON_LOCATIVES`` count: people are gathered around, sat near and stood outside.
    """
    if not previous:
        return False
    word = previous[-1]
    if word == "of":
        return len(previous) >= 2 and previous[-2] in _PLACE_NOUNS_BEFORE_OF
    return word in (PERSON_LOCATIVES if person else LOCATIVES)


def tier_of(match_types: list[str], locative: bool, village: bool = False, alternate: bool = False) -> str:
    """The tier of a winning country from its distinct supporting aliases' match types (``village``:
    its one town has fewer than ``VILLAGE_POPULATION`` people; ``alternate``: it is named by an alternate name)."""
    if len(match_types) >= 2:
        return "corroborated"
    (mtype,) = match_types
    if mtype in ("country", "region", "code", "address"):
        return "country_region_address"
    if mtype in ("city", "town") and alternate:
        return "alternate_name"
    if mtype == "city":
        return "large_city"
    if mtype == "town":
        return "village" if village else "town_after_locative" if locative else "bare_town"
    return "demonym"
