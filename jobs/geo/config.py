"""``benchaudit geo`` options: the corpora to scan and the analysis, declared once (flags are generated)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from audit.geo.choices import TIERS, Profile
from audit.stats.choices import DEFAULT_REPLICATES
from connectors.captions.presets import PRESETS, CorpusSpec, Format
from jobs.common.cli.config import INTERVALS, Alias, ConfigError, Flag, IntervalOptions, parse_named_inputs, read_entries, validated
from jobs.common.inputs.corpora import CorpusConfig, embedded_corpora

CORPORA = "corpora (default: the shipped COCO 2017 val and Conceptual Captions val samples)"
MAPPED = "one corpus mapped by hand (--input)"
ANALYSIS = "analysis"
Tier = Literal[TIERS]  # type: ignore[valid-type]


def _mapped(**kw) -> Flag:
    return Flag(MAPPED, requires="input", **kw)


class GeoConfig(IntervalOptions):
    """Everything that decides a geo run's results."""

    corpus: Annotated[list[CorpusConfig], BeforeValidator(parse_named_inputs),
                      Flag(CORPORA, metavar="NAME:PRESET:PATH", repeat=True, default_text="the shipped samples")] = Field(
        default_factory=list, description="a corpus by preset (" + ", ".join(sorted(PRESETS)) + "); PATH is a file, "
                                          "directory, glob or URL (s3://, gs://); repeat for several corpora, one table row each")
    corpora: Annotated[str | None, Flag(CORPORA, metavar="YAML")] = Field(
        None, description="a YAML list of corpora: name, paths, preset or format/text/context/url/id")
    input: Annotated[list[str], Flag(MAPPED, metavar="PATH", repeat=True)] = Field(
        default_factory=list, description="one custom corpus: files, directories, globs or URLs")
    name: Annotated[str, _mapped()] = Field("corpus", description="name of the --input corpus in the report")
    preset: Annotated[str | None, _mapped()] = Field(None, description="column preset for --input")
    format: Annotated[Format | None, _mapped(default_text="from the extension")] = Field(None, description="input format")
    text_column: Annotated[str | None, _mapped()] = Field(None, description="column holding the caption")
    context_columns: Annotated[list[str], _mapped(metavar="COLUMN[,COLUMN...]")] = Field(
        default_factory=list, description="extra text columns resolved with the caption (page title, alt text ...)")
    url_column: Annotated[str | None, _mapped()] = Field(None, description="column holding the URL (for the ccTLD signal)")
    id_column: Annotated[str | None, _mapped(default_text="source file + row number")] = Field(
        None, description="record id column")
    header: Annotated[bool, _mapped()] = Field(True, description="CSV/TSV with a header line (--no-header: give --column-names)")
    column_names: Annotated[list[str], _mapped(metavar="NAME[,NAME...]")] = Field(
        default_factory=list, description="column names of a header-less CSV/TSV")
    group_column: Annotated[str | None, Flag(CORPORA, deprecated=("--group-by",))] = Field(
        None, description="also give the whole analysis per value of this column (e.g. WIT language, RedCaps subreddit)")
    limit: Annotated[int | None, Flag(CORPORA, metavar="N", default_text="all")] = Field(
        None, ge=1, description="read only the first N records of each corpus (a smoke test; recorded in the manifest)")

    lexicon_profile: Annotated[Profile, Flag(ANALYSIS)] = Field(
        "gazetteer", description="gazetteer (the best measured, docs/geo.md): small places, counties, state codes "
                                 "and postcodes, with evidence tiers; extended: adds ISO 3166-2 regions and 'City, Region' "
                                 "pairs to paper; paper: the reference study's sources (to reproduce its tables)")
    min_evidence: Annotated[Tier | None, Flag(ANALYSIS, default_text="every tier")] = Field(
        None, description="count a record only when its evidence is at least this strong (gazetteer tiers, strongest first: "
                          + ", ".join(TIERS) + "); the high-precision operating point")
    repair_mojibake: Annotated[bool, Flag(ANALYSIS)] = Field(
        True, description="repair cp1252/Latin-1 mojibake ('CafÃ©') before matching (repairs are counted in the manifest)")
    lexicon: Annotated[str | None, Flag(ANALYSIS, metavar="PARQUET", default_text="the shipped artifact of the profile")] = Field(
        None, description="a lexicon saved by 'benchaudit geo lexicon' instead of the shipped one")
    lexicon_edits: Annotated[str | None, Flag(ANALYSIS, metavar="CSV")] = Field(
        None, description="CSV of action,alias,country_alpha2,match_type edits (add/remove entries)")
    indicators: Annotated[str | None, Flag(ANALYSIS, metavar="CSV", default_text="the shipped World Bank table")] = Field(
        None, description="indicator CSV (alpha3,indicator,year,value)")
    calibration: Annotated[str | None, Flag(ANALYSIS, metavar="FILE", default_text="none: shares of resolved captions")] = Field(
        None, description="captions a person placed (CSV, JSON Lines or Parquet: caption, country as ISO alpha-2 or empty "
                          "for none; e.g. connectors/samples/geo_calibration.csv): report the resolver's recall and "
                          "precision by region on them and shares corrected for its errors, with intervals")
    write_records: Annotated[bool, Flag(ANALYSIS)] = Field(
        False, description="write per-record assignments (data/records/corpus=<name>/*.parquet)")
    records_text: Annotated[bool, Flag(ANALYSIS, requires="write_records")] = Field(
        False, description="also keep each record's caption text in the records, for review (larger files)")
    top_n: Annotated[int, Flag(ANALYSIS)] = Field(20, ge=1, description="countries listed in the top table and bar chart")
    min_population: Annotated[float, Flag(ANALYSIS)] = Field(
        1_000_000.0, ge=0, description="countries below this population are left out of the fits")
    min_records: Annotated[int, Flag(ANALYSIS)] = Field(
        1, ge=1, description="countries with fewer resolved records are left out of the fits")
    bootstrap: Annotated[int, Flag(INTERVALS, deprecated=(Alias("--bootstrap-replicates"),))] = Field(
        DEFAULT_REPLICATES, ge=0, description="bootstrap replicates (countries resampled) for the r and rho intervals; "
                                              "0: no intervals")
    shard_rows: Annotated[int, Flag(ANALYSIS)] = Field(
        500_000, ge=1, description="target rows per Parquet shard (the unit of work and of --resume)")

    def corpus_configs(self) -> list[CorpusConfig]:
        """Every corpus the options name, in order (the shipped samples when none)."""
        out = list(self.corpus)
        if self.corpora:
            out = read_entries(CorpusConfig, self.corpora, "name, paths, preset or format/text/context/url/id") + out
        if self.input:
            out.append(validated(CorpusConfig, dict(
                name=self.name, paths=self.input, preset=self.preset, format=self.format, text=self.text_column,
                context=self.context_columns or None, url=self.url_column, id=self.id_column,
                header=None if self.header else False, column_names=self.column_names or None,
            ), "--input"))
        out = out or embedded_corpora()
        names = [c.name for c in out]
        if len(set(names)) != len(names):
            raise ConfigError(f"corpus names must be unique, got {names}")
        return out

    def specs(self) -> dict[str, CorpusSpec]:
        return {c.name: c.to_spec(self.group_column) for c in self.corpus_configs()}

    @model_validator(mode="after")
    def _resolves(self) -> GeoConfig:
        self.corpus_configs()  # a bad YAML entry or --input mapping fails here, at the edge
        return self
