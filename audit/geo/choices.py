"""The names a user chooses among in the geo audit, as data (no imports): the command line lists and
checks them without loading the resolver."""
from typing import Literal

# lexicon profiles: what each adds is in ``audit.geo.profiles`` (and ``benchaudit ls profiles``)
Profile = Literal["paper", "extended", "gazetteer"]
PROFILES: tuple[str, ...] = ("paper", "extended", "gazetteer")
PROFILE_NOTES = {
    "paper": "the reference study's sources: countries, demonyms, capitals, cities of 1M+",
    "extended": "adds ISO 3166-2 regions and 'City, Region' pairs",
    "gazetteer": "small places, counties, state codes and postcodes, with evidence tiers",
}
# evidence tiers of the gazetteer, strongest first (``audit.geo.evidence`` assigns them)
TIERS = ("corroborated", "country_region_address", "town_after_locative", "large_city", "bare_town", "village", "alternate_name",
         "demonym")
