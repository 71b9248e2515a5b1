"""Benchmarks as jobs take them: one config per benchmark, and the input flags every benchmark job shares.

A benchmark is a preset (the real layout of TruthfulQA, DROP, MMLU ...) or a field mapping naming
its own columns; ``BenchmarkConfig`` turns into a ``connectors.benchmarks.BenchmarkSpec`` at the
edge. ``BenchmarkInputs`` is the base of every benchmark job's config: ``--benchmark
NAME:PRESET:PATH`` (repeatable), ``--benchmarks list.yaml``, or one benchmark mapped by hand with
``--input`` and ``--<field>-column`` flags, plus ``--limit``.
"""
from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from connectors.benchmarks.choices import FORMATS, PRESET_NAMES
from jobs.common.cli.config import ConfigError, Flag, InputName, JobConfig, parse_named_inputs, read_entries, validated

if TYPE_CHECKING:
    from connectors.benchmarks.spec import BenchmarkSpec

INPUT = "benchmarks"


class BenchmarkConfig(BaseModel):
    """One benchmark: a preset, or the source column of each item field."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: InputName
    paths: list[str] = Field(min_length=1)
    preset: str | None = None
    question: str | None = None
    id: str | None = None
    passage: str | None = None
    instructions: str | None = None
    options: str | list[str] | None = None
    gold: str | list[str] | None = None
    list_sep: str | None = None
    format: str | None = None
    split: str | None = None
    encoding: str = "utf-8"

    @model_validator(mode="after")
    def _preset_or_mapping(self) -> BenchmarkConfig:
        if self.preset and self.preset not in PRESET_NAMES:
            raise ValueError(f"benchmark {self.name}: unknown preset {self.preset!r}; known: {sorted(PRESET_NAMES)}")
        if bool(self.preset) == bool(self.question):
            raise ValueError(f"benchmark {self.name}: give a preset or a question column (--question-column), not both or neither")
        if self.format and self.format not in FORMATS:
            raise ValueError(f"benchmark {self.name}: unknown format {self.format!r}; known: {FORMATS}")
        return self

    def to_spec(self) -> BenchmarkSpec:
        from connectors.benchmarks.schema import FieldMapping
        from connectors.benchmarks.spec import BenchmarkSpec

        mapping = None
        if not self.preset:
            mapping = FieldMapping(
                question=self.question or "", id=self.id, passage=self.passage, instructions=self.instructions,
                options=tuple(self.options) if isinstance(self.options, list) else self.options,
                gold=tuple(self.gold) if isinstance(self.gold, list) else self.gold, list_sep=self.list_sep,
            )
        return BenchmarkSpec(tuple(self.paths), preset=self.preset, mapping=mapping, name=self.name,
                             split=self.split, format=self.format, encoding=self.encoding)


def shipped_benchmark(file: str) -> str:
    """Path of a shipped benchmark sample (``connectors/samples/benchmarks``; origin and licence there)."""
    return str(resources.files("connectors") / "samples" / "benchmarks" / file)


def shipped_mcqa() -> BenchmarkConfig:
    """The model audits' embedded default: the shipped ARC-Challenge test set (1,172 items, CC BY-SA 4.0)."""
    return BenchmarkConfig(name="arc_challenge", preset="arc", paths=[shipped_benchmark("arc_challenge_test.jsonl")])


def _one_or_list(values: list[str] | None) -> str | list[str] | None:
    return values[0] if values and len(values) == 1 else values


_MAPPED = Flag("one benchmark mapped by hand (--input)", requires="input")


class BenchmarkInputs(JobConfig):
    """The benchmark input flags every benchmark job shares (see the module docstring)."""

    benchmark: Annotated[list[BenchmarkConfig], BeforeValidator(parse_named_inputs),
                         Flag(INPUT, metavar="NAME:PRESET:PATH", repeat=True,
                              default_text="the job's shipped samples, where it has any")] = Field(
        default_factory=list, description="a benchmark by preset (" + ", ".join(sorted(PRESET_NAMES)) + "); PATH is a file, "
                                          "directory, glob or URL; repeat for several benchmarks, one table row each")
    benchmarks: Annotated[str | None, Flag(INPUT, metavar="YAML")] = Field(
        None, description="a YAML list of benchmarks: name, paths, preset, or question/id/passage/instructions/options/gold")
    input: Annotated[list[str], Flag(_MAPPED.group, metavar="PATH", repeat=True)] = Field(
        default_factory=list, description="a benchmark with its own columns: files, directories, globs or URLs")
    name: Annotated[str, _MAPPED] = Field("benchmark", description="name of the --input benchmark in the report")
    preset: Annotated[str | None, _MAPPED] = Field(None, description="layout preset for --input")
    format: Annotated[str | None, Flag(_MAPPED.group, requires="input", default_text="from the extension")] = Field(
        None, description=f"input format, one of {', '.join(FORMATS)}")
    split: Annotated[str | None, _MAPPED] = Field(None, description="split of a Hugging Face DatasetDict folder")
    question_column: Annotated[str | None, Flag(_MAPPED.group, requires="input", deprecated=("--question-field",))] = Field(
        None, description="column holding the question")
    id_column: Annotated[str | None, Flag(_MAPPED.group, requires="input", deprecated=("--id-field",),
                                          default_text="file + row")] = Field(None, description="column holding the item id")
    passage_column: Annotated[str | None, Flag(_MAPPED.group, requires="input", deprecated=("--passage-field",))] = Field(
        None, description="column holding a passage or context")
    instructions_column: Annotated[str | None, Flag(_MAPPED.group, requires="input", deprecated=("--instructions-field",))] = Field(
        None, description="column holding instructions")
    options_column: Annotated[list[str], Flag(_MAPPED.group, requires="input", metavar="COLUMN[,COLUMN...]",
                                              deprecated=("--options-field",))] = Field(
        default_factory=list, description="list column of options, or comma-separated scalar columns (A,B,C,D)")
    gold_column: Annotated[list[str], Flag(_MAPPED.group, requires="input", metavar="COLUMN[,COLUMN...]",
                                           deprecated=("--gold-field",))] = Field(
        default_factory=list, description="column (or comma-separated columns) holding the gold answer text(s)")
    list_sep: Annotated[str | None, _MAPPED] = Field(None, description="separator splitting a string options/gold column "
                                                                        "into a list (e.g. '; ')")
    limit: Annotated[int | None, Flag(INPUT, metavar="N", default_text="all")] = Field(
        None, ge=1, description="read only the first N items of each benchmark (a smoke test; recorded in the manifest)")

    def embedded(self) -> list[BenchmarkConfig]:
        """The benchmarks a job audits when given none; each job names its shipped samples."""
        raise NotImplementedError

    def benchmark_configs(self) -> list[BenchmarkConfig]:
        """Every benchmark the options name, in order (the embedded default when none)."""
        out = list(self.benchmark)
        if self.benchmarks:
            out = read_entries(BenchmarkConfig, self.benchmarks, "name, paths, preset or question/options/gold") + out
        if self.input:
            out.append(validated(BenchmarkConfig, dict(
                name=self.name, paths=self.input, preset=self.preset, format=self.format, split=self.split,
                question=self.question_column, id=self.id_column, passage=self.passage_column,
                instructions=self.instructions_column, options=_one_or_list(self.options_column or None),
                gold=_one_or_list(self.gold_column or None), list_sep=self.list_sep,
            ), "--input"))
        out = out or self.embedded()
        names = [b.name for b in out]
        if len(set(names)) != len(names):
            raise ConfigError(f"benchmark names must be unique, got {names}")
        return out

    @model_validator(mode="after")
    def _resolves(self) -> BenchmarkInputs:
        self.benchmark_configs()  # a bad YAML entry or --input mapping fails here, at the edge
        return self


def check_benchmark(entry: dict, check_files: bool) -> str:
    """One benchmarks-list entry: valid as a config and, with ``check_files``, every file's fields."""
    cfg = validated(BenchmarkConfig, entry, "benchmark")
    if not check_files:
        return f"preset {cfg.preset}" if cfg.preset else f"question column {cfg.question}"
    from connectors.benchmarks.shards import plan_benchmark

    plan = plan_benchmark(cfg.to_spec(), 1 << 62)
    items = f"{plan.expected_items:,} items" if plan.expected_items is not None else "items counted when read"
    return f"{len(plan.files)} file(s), {items}; fields present in every file"


def validate_file(path: str, check_files: bool) -> list:
    """``benchaudit validate`` of a benchmarks YAML list (see ``jobs.common.cli.validation``)."""
    from connectors.io.yaml_lists import read_yaml_list
    from jobs.common.cli.validation import check_entries

    return check_entries(read_yaml_list(path, "name, paths, preset or question/options/gold"),
                         lambda entry: check_benchmark(entry, check_files))
