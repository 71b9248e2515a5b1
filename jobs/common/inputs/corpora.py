"""Caption corpora as jobs take them: one config per corpus (a preset, or its own columns), and the
shipped samples. ``CorpusConfig`` turns into a ``connectors.captions.presets.CorpusSpec`` at the edge."""
from __future__ import annotations

from dataclasses import replace
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field, model_validator

from connectors.captions.presets import PRESETS, ColumnMapping, CorpusSpec, Format, spec_from_preset
from jobs.common.cli.config import InputName


class CorpusConfig(BaseModel):
    """One corpus: a preset gives format and columns; explicit fields override it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: InputName
    paths: list[str] = Field(min_length=1)
    preset: str | None = None
    format: Format | None = None
    text: str | None = None
    context: list[str] | None = None
    url: str | None = None
    id: str | None = None
    header: bool | None = None
    column_names: list[str] | None = None

    @model_validator(mode="after")
    def _known_preset(self) -> CorpusConfig:
        if self.preset and self.preset not in PRESETS:
            raise ValueError(f"corpus {self.name}: unknown preset {self.preset!r}; known: {sorted(PRESETS)}")
        if not self.preset and not self.text:
            raise ValueError(f"corpus {self.name}: give a preset (--preset) or the caption column (--text-column)")
        return self

    def to_spec(self, group_column: str | None) -> CorpusSpec:
        """The preset's spec (``connectors.captions.corpus.spec_from_preset``) with this entry's own fields on top."""
        if self.preset:
            base = spec_from_preset(self.name, self.preset, self.paths)
        else:
            from connectors.captions.corpus import detect_format  # lists the files: at run time, not while parsing flags

            assert self.text is not None, "the validator requires --preset or --text-column"
            base = CorpusSpec(self.name, tuple(self.paths), self.format or detect_format(self.paths), ColumnMapping(text=self.text))
        m = base.mapping
        mapping = ColumnMapping(
            text=self.text or m.text,
            context=tuple(self.context) if self.context is not None else m.context,
            url=self.url if self.url is not None else m.url,
            id=self.id if self.id is not None else m.id,
            group=group_column or m.group,
        )
        return replace(base, format=self.format or base.format, mapping=mapping,
                       header=self.header if self.header is not None else base.header,
                       column_names=tuple(self.column_names) if self.column_names else base.column_names)


def embedded_corpora() -> list[CorpusConfig]:
    """The shipped real captions: COCO 2017 val (CC BY 4.0) and Conceptual Captions val."""
    root = resources.files("connectors") / "samples"
    return [
        CorpusConfig(name="coco2017_val", paths=[str(root / "coco2017_val_captions.csv")], preset="coco"),
        CorpusConfig(name="cc3m_val", paths=[str(root / "cc3m_val_captions.tsv")], preset="cc3m"),
    ]


def check_corpus(entry: dict, check_files: bool) -> str:
    """One corpora-list entry: valid as a config and, with ``check_files``, its files and columns."""
    from jobs.common.cli.config import validated

    cfg = validated(CorpusConfig, entry, "corpus")
    if not check_files:
        return f"preset {cfg.preset}" if cfg.preset else f"text column {cfg.text}"
    from connectors.captions.corpus import plan_corpus

    plan = plan_corpus(cfg.to_spec(None))
    files = len({s.source for s in plan.shards})
    rows = f"{plan.expected_rows:,} rows" if plan.expected_rows is not None else "rows counted when read"
    return f"{plan.spec.format}, {files} file(s), {rows}; columns {', '.join(plan.spec.mapping.columns())} present"


def validate_file(path: str, check_files: bool) -> list:
    """``benchaudit validate`` of a corpora YAML list (see ``jobs.common.cli.validation``)."""
    from connectors.io.yaml_lists import read_yaml_list
    from jobs.common.cli.validation import check_entries

    return check_entries(read_yaml_list(path, "name, paths, preset or format/text/context/url/id"),
                         lambda entry: check_corpus(entry, check_files))
