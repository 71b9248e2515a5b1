"""Shipped lexicons compiled and built once per test process (the patterns read back from ``connectors.geo.compiled``'s
disk cache by the next process), for the tests that use many stages and resolvers of the same profile: a gazetteer
compile costs seconds and its automata seconds more. A built resolver is pure state, so tests share it, each at its own
evidence floor (``CountryResolver.at_min_evidence``); what the compile produces is asserted by
tests/connectors/geo/test_compiled.py."""
from __future__ import annotations

from functools import cache

from audit.geo.lexicon import Lexicon
from audit.geo.patterns import Patterns
from audit.geo.resolve import ALL_MATCH_TYPES, CountryResolver
from audit.geo.stage import GeoStage
from connectors.geo.compiled import compiled_patterns
from connectors.geo.lexicon import load_lexicon


@cache
def compiled(profile: str) -> tuple[Lexicon, Patterns]:
    lexicon = load_lexicon(profile)
    return lexicon, compiled_patterns(lexicon.entries, lexicon.sha256, ALL_MATCH_TYPES)


@cache
def _built(profile: str, repair_mojibake: bool) -> CountryResolver:
    lexicon, patterns = compiled(profile)
    return CountryResolver(lexicon.entries, patterns=patterns, repair_mojibake=repair_mojibake)


def geo_stage(profile: str = "gazetteer", **options) -> GeoStage:
    lexicon, _ = compiled(profile)
    return GeoStage(lexicon.entries, resolver=_built(profile, options.get("repair_mojibake", True)), **options)


def resolver(profile: str = "gazetteer", **options) -> CountryResolver:
    """The profile's resolver with ``options``; built once when they are only ``min_evidence``/``repair_mojibake``."""
    if set(options) <= {"min_evidence", "repair_mojibake"}:
        return _built(profile, options.get("repair_mojibake", True)).at_min_evidence(options.get("min_evidence"))
    lexicon, patterns = compiled(profile)
    return CountryResolver(lexicon.entries, patterns=patterns, **options)
