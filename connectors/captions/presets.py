"""Caption corpus presets and specs, as data: the real column layouts of DataComp, COYO, CC12M,
RedCaps, WIT, COCO and CC3M, and the spec a corpus is scanned by.

Imports nothing heavy, so the command line lists and checks presets without loading a reader.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Format = Literal["parquet", "jsonl", "csv", "tsv", "webdataset"]
EXTENSIONS: dict[Format, tuple[str, ...]] = {
    "parquet": (".parquet", ".pq"),
    "jsonl": (".jsonl", ".jsonl.gz", ".ndjson", ".json"),
    "csv": (".csv", ".csv.gz"),
    "tsv": (".tsv", ".tsv.gz", ".txt"),
    "webdataset": (".tar",),
}
@dataclass(frozen=True)
class ColumnMapping:
    """Which source columns hold the caption, extra text, URL, record id and grouping key."""

    text: str
    context: tuple[str, ...] = ()
    url: str | None = None
    id: str | None = None
    group: str | None = None

    def columns(self) -> list[str]:
        cols = [self.text, *self.context, self.url, self.id, self.group]
        return list(dict.fromkeys(c for c in cols if c))


@dataclass(frozen=True)
class CorpusSpec:
    """One corpus to scan: a name for the report, its paths, format and column mapping."""

    name: str
    paths: tuple[str, ...]
    format: Format
    mapping: ColumnMapping
    header: bool = True  # CSV/TSV: first line holds column names
    column_names: tuple[str, ...] = ()  # CSV/TSV without header

    def __post_init__(self) -> None:
        if self.format not in EXTENSIONS:
            raise ValueError(f"corpus {self.name}: unknown format {self.format!r}; expected one of {sorted(EXTENSIONS)}")
        if self.format in ("csv", "tsv") and not self.header and not self.column_names:
            raise ValueError(f"corpus {self.name}: a {self.format} without header needs column_names")


@dataclass(frozen=True)
class Preset:
    format: Format
    mapping: ColumnMapping
    header: bool = True
    column_names: tuple[str, ...] = ()
    note: str = ""


PRESETS: dict[str, Preset] = {
    "datacomp": Preset("parquet", ColumnMapping(text="text", url="url", id="uid"), note="DataComp metadata Parquet (uid, url, text)"),
    "coyo": Preset("parquet", ColumnMapping(text="text", url="url", id="id"), note="COYO-700M Parquet (id, url, text)"),
    "cc12m": Preset("tsv", ColumnMapping(text="caption", url="url"), header=False, column_names=("url", "caption"),
                    note="cc12m.tsv: url<TAB>caption, no header"),
    "redcaps": Preset("jsonl", ColumnMapping(text="caption", url="url", id="image_id", group="subreddit"),
                      note="RedCaps annotations flattened to JSONL/Parquet (image_id, caption, url, subreddit)"),
    "wit": Preset(
        "tsv",
        ColumnMapping(
            text="caption_reference_description",
            context=("context_page_description", "page_title", "section_title"),
            url="image_url",
        ),
        note="WIT tsv(.gz) with header; add --group-column language for per-language tables",
    ),
    "coco": Preset("csv", ColumnMapping(text="caption", id="caption_id"), note="COCO captions CSV (image_id, caption_id, caption)"),
    "cc3m": Preset("tsv", ColumnMapping(text="caption", url="url"), header=False, column_names=("caption", "url"),
                   note="Conceptual Captions TSV: caption<TAB>url, no header"),
}


def spec_from_preset(name: str, preset: str, paths: list[str]) -> CorpusSpec:
    if preset not in PRESETS:
        raise ValueError(f"unknown corpus preset {preset!r}; known: {sorted(PRESETS)}")
    p = PRESETS[preset]
    return CorpusSpec(name=name, paths=tuple(paths), format=p.format, mapping=p.mapping, header=p.header, column_names=p.column_names)
