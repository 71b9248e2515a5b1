"""Shipped lexicons compiled once per test process (and read back from ``connectors.geo.compiled``'s disk cache by
the next one), for the tests that build many stages and resolvers of the same profile: a gazetteer compile costs
seconds, and what it produces is asserted by tests/connectors/geo/test_compiled.py."""
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


def geo_stage(profile: str = "gazetteer", **options) -> GeoStage:
    lexicon, patterns = compiled(profile)
    return GeoStage(lexicon.entries, patterns=patterns, **options)


def resolver(profile: str = "gazetteer", **options) -> CountryResolver:
    lexicon, patterns = compiled(profile)
    return CountryResolver(lexicon.entries, patterns=patterns, **options)
