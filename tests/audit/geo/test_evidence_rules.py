"""The named evidence rules of ``audit.geo.evidence`` on the shipped gazetteer, each with the example that motivated it."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.geo.resolve import CountryResolver
from tests.geo_compiled import resolver


@pytest.fixture(scope="module")
def gazetteer():

    return resolver()


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


def test_named_country_breaks_a_tie_with_namesake_regions(gazetteer):
    # NAMED_COUNTRY_BREAKS_TIE: "Valle" (a Honduran department) and "Nevada" (a US state) tie Chile at 4;
    # the one country written as a country wins. Two named countries still tie.
    res = gazetteer.resolve(pa.array(["Valle Nevada ski slopes, Chile", "Mongolia and Russia border"]))
    assert res.country.to_pylist() == ["CL", None]
    assert res.outcome.to_pylist() == ["weighted_majority", "ambiguous"]


def test_country_name_kept_over_a_namesake_town_other_towns_agree_with(gazetteer):
    # COUNTRY_NAME_KEPT: the United States have towns named Peru, Cuba and Jamaica, and towns named Woodstock,
    # Bartlett and Springfield that would agree with them; the country's name still names the country
    res = gazetteer.resolve(pa.array(["Farmhouse in Woodstock, Peru", "Weekend cabin near Bartlett, Cuba",
                                      "Old mill in Springfield, Jamaica"]), with_matches=True)
    assert res.country.to_pylist() == ["PE", "CU", "JM"]
    assert all("country_name_kept" in rules for rules in res.rules.to_pylist())


def test_country_name_kept_yields_to_a_state_or_county_that_says_the_town(gazetteer):
    # a state written after it, or a county of the namesake's country in the record, reads it as the town
    assert countries(gazetteer, ["Main street of Italy, Texas", "Lebanon police and the Boone County sheriff"]) == ["US", "US"]


def test_named_country_breaks_tie_only_for_exactly_one_named_leader():
    from audit.geo.evidence import named_country_breaks_tie

    assert named_country_breaks_tie([3, 7, 9], {7, 40}) == [7]
    assert named_country_breaks_tie([3, 7], {3, 7}) == [3, 7]
    assert named_country_breaks_tie([3, 7], set()) == [3, 7]


def test_state_code_picks_the_namesake_in_that_country(gazetteer):
    # STATE_CODE_PICKS_NAMESAKE: GeoNames has US towns named Peru and Cuba, not in Vermont or New York;
    # the postal code after the name still says which Peru is meant
    assert countries(gazetteer, ["sunset over Peru VT", "hay bales outside Cuba NY"]) == ["US", "US"]


def test_state_code_picks_namesake_needs_a_code_written_as_one():
    from audit.geo.evidence import state_code_picks_namesake

    town = ("peru", 1, 5, False, True, 1, frozenset({"US-IN"}), 3000)
    code = ("vt", 1, 7, True, False, 2, frozenset({"US-VT"}), 0)
    assert state_code_picks_namesake([town], [code], 7, 5, "VT") == ({town}, {code})
    assert state_code_picks_namesake([town], [code], 7, 5, "Minn") == ({town}, {code})
    assert state_code_picks_namesake([town], [code], 7, 5, "La") == (set(), set())  # title-case "La": a word
    other = ("vt", 2, 7, True, False, 2, frozenset({"CA-ON"}), 0)
    assert state_code_picks_namesake([town], [other], 7, 5, "VT") == (set(), set())  # no namesake in that country


def test_records_name_the_rules_that_changed_them(gazetteer):
    res = gazetteer.resolve(pa.array(["sunset over Peru VT", "crates shipped from Jordan", "a dog"]), with_matches=True)
    assert res.rules.to_pylist() == [["state_code_picks_namesake"], ["name_in_prose"], []]


def test_person_name_lowers_a_place_inside_a_persons_name(gazetteer):
    # PERSON_NAME: "Brenda Dallas", "Larry Houston" (a city after a given name), "Austin Sweeney" (a
    # given-name city before a surname) and "Bruce F Springfield" (an initial between) name people
    texts = ["portrait of Brenda Dallas at the gala", "Coach Larry Houston speaks", "Austin Sweeney signs autographs",
             "Bruce F Springfield on stage"]
    res = gazetteer.resolve(pa.array(texts), with_matches=True)
    assert res.country.to_pylist() == [None, None, None, None]
    assert all("person_name" in r for r in res.rules.to_pylist())


def test_person_name_leaves_places_beside_names_and_features(gazetteer):
    assert countries(gazetteer, [
        "Austin Texas skyline at night",  # the next word is a place, not a surname
        "Sydney Harbour at dusk",  # a feature word, no surname
        "canoes on Lake Louise Alberta",  # a given name after a place noun is part of the place
        "Maxine Waters, D-Los Angeles",  # a party letter is no initial
    ]) == ["US", "AU", "CA", "US"]


def test_person_name_rule_reads_given_names_and_surnames():
    from audit.geo.evidence import person_name

    given, surnames = frozenset({"john", "florence", "may"}), frozenset({"pugh", "kennedy"})
    assert person_name(["John", "F"], "Kennedy", None, given, surnames)
    assert person_name([], "Florence", "Pugh", given, surnames)
    assert not person_name([], "FLORENCE", "Pugh", given, surnames)  # capitals: a heading, not a name
    assert not person_name(["May"], "Kennedy", None, given, surnames)  # a month as often as a name
    assert not person_name(["john"], "Kennedy", None, given, surnames)  # not written as a name


def test_business_name_lowers_a_carmakers_place_name(gazetteer):
    # BUSINESS_NAME: Toyota (Aichi) beside another capitalised word is the make; alone it is the city
    assert countries(gazetteer, ["a used Toyota Corolla for sale", "Ballarat Toyota service centre",
                                 "the car plants of Toyota"]) == [None, "AU", "JP"]


def test_demonym_in_fixed_phrase_does_not_locate(gazetteer):
    # DEMONYM_IN_FIXED_PHRASE: the dish and the breed travel; a plain demonym still counts
    res = gazetteer.resolve(pa.array(["Thai cuisine night at the community hall", "a Portuguese sausage roll",
                                      "a Greek salad and lemonade", "a Thai temple at dawn"]), with_matches=True)
    assert res.country.to_pylist() == [None, None, None, "TH"]
    assert res.rules.to_pylist()[:3] == [["demonym_in_fixed_phrase"]] * 3
    # the sport and the airline travel too (the shipped CC3M sample's commonest false positive)
    assert countries(gazetteer, ["an american football tackle at practice", "a Canadian Airlines jet on approach"]) == [None, None]


def test_person_name_after_a_title(gazetteer):
    # PERSON_NAME: a title before a capitalised place name makes it a surname; a pageant title does not
    assert countries(gazetteer, ["a statement from Mr Brisbane, the club secretary", "Judge Houston ruled on Monday",
                                 "crowned Miss Nebraska last June"]) == [None, None, "US"]


def test_name_as_label_counts_a_country_name_set_apart_as_a_label(gazetteer):
    # NAME_AS_LABEL: the origin label of a marketplace listing, and a country closing a caption after a comma
    texts = ["Enamel Koi Brooch Pin Vintage Gift For Her(China)",
             "Resin Bangle Set Wholesale Dropshipping (China (Mainland))",
             "Morning swim off the reef, Palau",
             "Dusk over the wadi - Jordan"]
    assert countries(gazetteer, texts) == ["CN", "CN", "PW", "JO"]
    res = gazetteer.resolve(pa.array(texts[:1]), with_matches=True)
    assert res.rules.to_pylist() == [["name_as_label"]]


def test_name_as_label_leaves_the_word_and_a_longer_name_alone(gazetteer):
    assert countries(gazetteer, [
        "grandmother's tea set (china, hand painted)",  # the porcelain: not capitalised
        "a teapot (China Blue glaze) on the shelf",  # more than the name inside the parentheses
        "a signed jersey, Jordan at his best",  # the name does not close the caption
        "sneakers, Jordan Brand",  # a longer name closes it
    ]) == [None, None, None, None]


def test_a_country_name_that_counts_alone_is_no_surname_after_a_given_name(gazetteer):
    # PERSON_NAME reads "Maxwell Barbados" as a given name and a surname once the comma is gone; a country's
    # name the lexicon lets count alone is no one's surname, while a town after a given name still is
    assert countries(gazetteer, ["Sea view flat in Maxwell, Barbados with pool"]) == ["BB"]
    res = gazetteer.resolve(pa.array(["A speech by John F Kennedy on the radio"]), with_matches=True)
    assert res.country.to_pylist() == [None] and res.rules.to_pylist() == [["person_name"]]


def test_a_large_city_whose_name_is_no_english_phrase_matches_in_lower_case(gazetteer):
    # lower-case alt text: "dehradun" (Dehradun, IN, ~580k people) is the city; an English phrase that is also
    # a large city's name ("international city", a district of Dubai) is prose, and stays capitalised-only
    assert countries(gazetteer, ["best engineering colleges dehradun campus photos",
                                 "an international city of trade and finance"]) == ["IN", None]


def test_name_in_trade_phrase_counts_a_country_named_as_the_goods_origin(gazetteer):
    # NAME_IN_TRADE_PHRASE: title-case listings, where NAME_IN_PROSE sees a longer capitalised name
    texts = ["Made In China Bamboo Serving Tray Set", "Hot Sale China Factory Folding Chairs"]
    assert countries(gazetteer, texts) == ["CN", "CN"]
    assert gazetteer.resolve(pa.array(texts), with_matches=True).rules.to_pylist() == [["name_in_trade_phrase"]] * 2
    assert countries(gazetteer, ["bone china manufacturer catalogue", "Jordan Brand retro sneakers"]) == [None, None]


def test_place_name_in_prose_counts_a_place_named_like_a_person_written_as_a_place(gazetteer):
    # PLACE_NAME_IN_PROSE: "Sofia" (a curated given name) and "Worthington", "Newberry" (census surnames) need
    # support alone, but right after a locative, capitalised and not part of a longer name, they are the place
    texts = ["The trade fair opened in Sofia last week", "a new clinic in Worthington", "the choir sang at a church in Newberry"]
    assert countries(gazetteer, texts) == ["BG", "US", "US"]
    rules = gazetteer.resolve(pa.array(texts), with_matches=True).rules.to_pylist()
    assert all("place_name_in_prose" in r for r in rules)


def test_place_name_as_label_counts_a_place_named_like_a_person_closing_the_record(gazetteer):
    # PLACE_NAME_AS_LABEL: "Worthington" and "Newberry" (census surnames) closing a listing after a comma or a dash,
    # or in parentheses, are its place; the person in the prose, the namesakes and the possessive are not
    texts = ["Three bedroom farmhouse for sale, Worthington", "Sunny loft with a view - Newberry",
             "Wedding photos at the old mill (Newberry)", "Photo by Ellen Worthington", "Summer fair, Manchester",
             "Lunch with friends - Macy's"]
    assert countries(gazetteer, texts) == ["US", "US", "US", None, None, None]
    rules = gazetteer.resolve(pa.array(texts), with_matches=True).rules.to_pylist()
    assert all("place_name_as_label" in r for r in rules[:3]) and not any("place_name_as_label" in r for r in rules[3:])


def test_place_name_in_prose_leaves_the_person_the_word_the_business_and_the_namesakes_alone(gazetteer):
    assert countries(gazetteer, [
        "Sofia Coppola's new film",  # the person: no locative
        "a weekend in Sofia Vergara's home town",  # a longer capitalised name follows
        "lunch at Macy's",  # the possessive: a business named after its founder
        "lunch at McDonald's",
        "the concert in April",  # a given name that is as often a word
        "snow in March",  # a word, not a person's name
        "the family gathered at Christmas",  # WordNet's other proper noun first (a holiday), no census name
        "a rainy week in Manchester",  # a person's name only among namesakes in several countries
        "checking in at an airport somewhere in Asia",  # a town of the Philippines, but WordNet's continent first
    ]) == [None] * 9


def test_place_name_in_prose_reads_a_name_wordnet_knows_first_as_a_person_written_as_a_place(gazetteer):
    # WordNet's first sense of "Hutchinson" (Anne Hutchinson), "Lombard" (a member of a Germanic people) and
    # "Kitchener" (the field marshal) is a person: context-only, like a census name, and the place where written as one
    texts = ["emergency crews in Hutchinson responded to a fire", "a town hall meeting in Lombard",
             "The Walper Hotel - Kitchener - Bedroom", "Lord Kitchener inspects the troops",
             "Children gathered around Santa Claus at the mall"]  # people are gathered around: not a locative for them
    res = gazetteer.resolve(pa.array(texts), with_matches=True)
    assert res.country.to_pylist() == ["US", "US", "CA", None, None]
    assert res.rules.to_pylist()[:3] == [["place_name_in_prose"], ["place_name_in_prose"], ["place_name_as_label"]]


def test_a_person_named_place_with_namesakes_abroad_goes_to_the_one_no_namesake_comes_near(gazetteer):
    # Alameda (US, 78,630 people; a Spanish town of 5,241) and Lugo (ES, 98,025; Italy's 21,273): written as a
    # place, the name is the place no namesake abroad comes within half the size of, as a city's is in the lexicon
    assert countries(gazetteer, ["a bright kitchen in Alameda designed by William Adams", "For sale: a house in Lugo",
                                 "Sunny flat in Blackburn with a garden"]) == ["US", "ES", None]  # Blackburn: no person


def test_place_name_in_prose_on_several_countries_needs_one_to_dominate():
    from audit.geo.evidence import place_name_in_prose

    def entry(code: int, population: int) -> tuple:
        return ("lugo", code, 0, False, True, 1, frozenset(), population, False)

    lifted = place_name_in_prose([entry(1, 98_025), entry(2, 21_273), entry(3, 2_372)], "lugo")
    assert [(e[1], e[4]) for e in lifted] == [(1, False)]  # only the dominant country's, and no longer context-only
    close = [entry(1, 98_025), entry(2, 49_013)]  # half the size of the largest: no one dominates
    assert place_name_in_prose(close, "lugo") == close


def test_a_bracketed_person_after_a_pronoun_or_an_acronym_is_no_place_label(gazetteer):
    # the editor's note of who a pronoun is, and an acronym in capitals: "(Davis)", "(NASH)" are not the places
    assert countries(gazetteer, ["Durr hit him (Davis) when he tried to leave",
                                 'He said: "He (Steele) was compiling this report"',
                                 "Walsh has Nonalcoholic Steatohepatitis (NASH), a condition"]) == [None, None, None]


def test_a_label_of_several_words_and_a_label_between_dashes(gazetteer):
    # "Prince Rupert" (BC; WordNet's first sense the prince) as a label: the words of a name as written are separated
    # by one space, not by the two of the matching buffer; a field of its own between dashes or bars is a label too
    texts = ["Fishing charters - Prince Rupert", "Harbour at dawn (Prince Rupert)", "The Walper Hotel - Kitchener - Bedroom"]
    assert countries(gazetteer, texts) == ["CA", "CA", "CA"]
    # commas set off people in news prose ("Her eldest, Harrison, 8,"): a field between commas is no label
    assert countries(gazetteer, ["Her eldest, Hutchinson, 8, held a paper plate"]) == [None]


def test_punctuation_between_a_name_and_a_street_word_makes_no_street(gazetteer):
    assert countries(gazetteer, ["¡Viva Mexico! Square Collection - Pink VW Beetle", "Bantayan - Way to the Beach",
                                 "Bantayan-Way", "Korea Way", "a surf shack on Baltic Avenue"]) == ["MX", "PH", None, None, None]


def test_demonym_breaks_a_tie_between_places(gazetteer):
    # DEMONYM_BREAKS_TIE: the country Greece ties the country Macedonia; "Greek" says which. Without a demonym, or
    # with demonyms of both, a tie stays a tie
    res = gazetteer.resolve(pa.array(["Greek Macedonia, Greece flag Mouse Pads", "Mongolia and Russia border",
                                      "Mongolian and Russian herders at the Mongolia and Russia border"]), with_matches=True)
    assert res.country.to_pylist() == ["GR", None, None]
    assert "demonym_breaks_tie" in res.rules.to_pylist()[0]


def test_demonym_breaks_tie_only_for_exactly_one_leader_named_most():
    from audit.geo.evidence import demonym_breaks_tie

    assert demonym_breaks_tie([1, 2], {1: 1}) == [1]
    assert demonym_breaks_tie([1, 2], {1: 1, 2: 1}) == [1, 2]
    assert demonym_breaks_tie([1, 2], {3: 2}) == [1, 2]  # a demonym of a country not tied decides nothing


def test_a_small_town_named_like_a_sea_is_the_sea(gazetteer):
    # "Baltic" (a town of South Dakota) and "North Sea" (a hamlet of New York) are WordNet's sea first: context-only
    assert countries(gazetteer, ["A beach on the Baltic Sea at Laboe", "the island Helgoland in the North Sea",
                                 "a green Baltic beach chair"]) == ["DE", "DE", None]


def test_a_place_named_by_another_name_counts_below_one_named_by_its_own(gazetteer):
    # GeoNames lists "Nhat Chieu" (Vietnamese) for China's Rizhao; beside Hanoi's Tay Ho it no longer ties it
    assert countries(gazetteer, ["Lakeview apartment for rent on Nhat Chieu, Tay Ho"]) == ["VN"]


def test_a_large_city_named_by_words_no_english_phrase_holds_matches_in_lower_case(gazetteer):
    # wordfreq counts "vegas" and "louis" often, as names; WordNet has no lower-case word "vegas" or "louis", so
    # "las vegas" and "st louis" are no English phrase. "east london" is a compass word before London, and the
    # east of London as often as the city of South Africa
    assert countries(gazetteer, ["wedding dress rental las vegas wedding idea", "tent rental st louis wedding decoration",
                                 "the victim was taken to an east london hospital"]) == ["US", "US", "GB"]
