"""Compiled lexicons on disk: a worker reads what another compiled, resolves exactly as a fresh compile
does, and never reads the patterns of another lexicon or of a cut file."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.geo.resolve import ALL_MATCH_TYPES, CountryResolver
from connectors.geo import compiled
from connectors.geo.compiled import cache_key, compiled_patterns

CAPTIONS = pa.array(["Sunset over Paris, France", "A tram in Lisbon", "a dog on a beach", "Street food in Bangkok"])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHAUDIT_GEO_CACHE", str(tmp_path / "geo"))
    return tmp_path / "geo"


def countries(resolver: CountryResolver) -> list:
    return resolver.resolve(CAPTIONS).country.to_pylist()


def test_a_second_worker_reads_the_patterns_and_resolves_as_a_fresh_compile(cache, paper_lexicon, monkeypatch):
    first = compiled_patterns(paper_lexicon.entries, paper_lexicon.sha256, ALL_MATCH_TYPES)
    files = list(cache.glob("patterns-*.pickle"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    monkeypatch.setattr(compiled, "compile_patterns", lambda *a: pytest.fail("compiled again"))
    again = compiled_patterns(paper_lexicon.entries, paper_lexicon.sha256, ALL_MATCH_TYPES)
    assert again.lower == first.lower and again.countries == first.countries
    fresh = CountryResolver(paper_lexicon.entries)
    assert countries(CountryResolver(paper_lexicon.entries, patterns=again)) == countries(fresh) == ["FR", "PT", None, "TH"]


def test_another_lexicon_or_compiler_has_another_key(paper_lexicon, monkeypatch):
    key = cache_key(paper_lexicon.sha256, ALL_MATCH_TYPES)
    assert cache_key("0" * 64, ALL_MATCH_TYPES) != key
    assert cache_key(paper_lexicon.sha256, ALL_MATCH_TYPES[:-1]) != key
    monkeypatch.setattr(compiled, "compiler_digest", lambda: "an edited compiler")
    assert cache_key(paper_lexicon.sha256, ALL_MATCH_TYPES) != key


def test_a_cut_file_is_compiled_again_and_an_unwritable_cache_costs_only_the_compile(cache, paper_lexicon, tmp_path,
                                                                                    monkeypatch):
    path = cache / f"patterns-{cache_key(paper_lexicon.sha256, ALL_MATCH_TYPES)}.pickle"
    cache.mkdir()
    path.write_bytes(b"\x80\x05cut")
    patterns = compiled_patterns(paper_lexicon.entries, paper_lexicon.sha256, ALL_MATCH_TYPES)
    assert countries(CountryResolver(paper_lexicon.entries, patterns=patterns))[0] == "FR"
    assert path.stat().st_size > 100  # replaced by the good compile
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("BENCHAUDIT_GEO_CACHE", str(blocked / "geo"))
    patterns = compiled_patterns(paper_lexicon.entries, paper_lexicon.sha256, ALL_MATCH_TYPES)
    assert countries(CountryResolver(paper_lexicon.entries, patterns=patterns))[0] == "FR"
    assert not list(tmp_path.glob("**/.patterns-*"))  # no temporary file left behind


def test_runs_of_one_process_share_the_last_resolver_built_at_their_own_evidence_floor(cache, paper_lexicon,
                                                                                       extended_lexicon, monkeypatch):
    from audit.geo.stage import GeoStage
    from connectors.geo.compiled import built_resolver

    first = built_resolver(paper_lexicon.entries, paper_lexicon.sha256)
    monkeypatch.setattr(compiled, "CountryResolver", lambda *a, **k: pytest.fail("built again"))
    assert built_resolver(paper_lexicon.entries, paper_lexicon.sha256) is first
    assert countries(first) == countries(CountryResolver(paper_lexicon.entries)) == ["FR", "PT", None, "TH"]
    # a stage takes its own operating point from the shared resolver, which keeps its own
    strict = GeoStage(paper_lexicon.entries, min_evidence="country_region_address", resolver=first)
    assert strict.resolver is not first and strict.resolver.min_evidence == "country_region_address"
    assert first.min_evidence is None
    with pytest.raises(ValueError, match="repair_mojibake"):
        GeoStage(paper_lexicon.entries, repair_mojibake=False, resolver=first)
    monkeypatch.undo()
    # another lexicon (or another repair setting) is built anew, and replaces the one kept
    other = built_resolver(extended_lexicon.entries, extended_lexicon.sha256)
    assert other is not first and built_resolver(paper_lexicon.entries, paper_lexicon.sha256) is not first
    assert built_resolver(paper_lexicon.entries, paper_lexicon.sha256, repair_mojibake=False).repair is False
