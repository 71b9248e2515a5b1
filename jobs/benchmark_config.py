"""Benchmarks as jobs take them: validated config, command-line options and YAML lists.

Shared by ``benchaudit conventions`` (many benchmarks per run) and ``benchaudit scorers`` (the
gold answers of one benchmark). A benchmark is a preset (the real layout of TruthfulQA, DROP,
MMLU ...) or a field mapping naming its own columns; the config turns into a
``connectors.benchmarks.BenchmarkSpec`` at the edge.
"""
from __future__ import annotations

import argparse
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from connectors.benchmark_presets import PRESETS
from connectors.benchmarks import FORMATS, BenchmarkSpec, FieldMapping
from jobs.cli_common import split_list


class BenchmarkConfig(BaseModel):
    """One benchmark: a preset, or the source column of each item field."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
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
        if self.preset and self.preset not in PRESETS:
            raise ValueError(f"benchmark {self.name}: unknown preset {self.preset!r}; known: {sorted(PRESETS)}")
        if bool(self.preset) == bool(self.question):
            raise ValueError(f"benchmark {self.name}: give a preset or a field mapping (question, ...), not both or neither")
        if self.format and self.format not in FORMATS:
            raise ValueError(f"benchmark {self.name}: unknown format {self.format!r}; known: {FORMATS}")
        return self

    def to_spec(self) -> BenchmarkSpec:
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


def read_yaml_list(path: str) -> list[dict]:
    """A YAML list of mappings; malformed YAML is an error naming the file and line."""
    with open(path, encoding="utf-8") as fh:
        try:
            entries = yaml.safe_load(fh)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark is not None else "unknown line"
            raise ValueError(f"{path}: malformed YAML at {where}: {getattr(err, 'problem', None) or err}") from err
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError(f"{path}: expected a YAML list of mappings (name, paths, preset or question/options/gold ...)")
    return entries


def add_benchmark_options(p: argparse.ArgumentParser, title: str, many: bool) -> None:
    """``--benchmark NAME:PRESET:PATH`` (repeatable when ``many``), a YAML list, or one mapped input."""
    g = p.add_argument_group(title)
    g.add_argument("--benchmark", action="append" if many else "store", metavar="NAME:PRESET:PATH",
                   help="a benchmark by preset (" + ", ".join(sorted(PRESETS)) + "); PATH is a file, directory, glob or "
                        "URL" + ("; repeat for several benchmarks, one table row each" if many else ""))
    if many:
        g.add_argument("--benchmarks", metavar="YAML", help="a YAML list of benchmarks: name, paths, preset, or the "
                                                           "field mapping question/id/passage/instructions/options/gold")
    g.add_argument("--input", action="append", metavar="PATH", help="a benchmark with its own columns: files, directories, globs or URLs")
    g.add_argument("--name", default="benchmark", help="name of the --input benchmark in the report")
    g.add_argument("--preset", help="layout preset for --input")
    g.add_argument("--format", choices=list(FORMATS), help="input format (default: from the extension)")
    g.add_argument("--split", help="split of a Hugging Face DatasetDict folder")
    g.add_argument("--question-field", help="column holding the question")
    g.add_argument("--id-field", help="column holding the item id (default: file + row)")
    g.add_argument("--passage-field", help="column holding a passage or context")
    g.add_argument("--instructions-field", help="column holding instructions")
    g.add_argument("--options-field", help="list column of options, or comma-separated scalar columns (A,B,C,D)")
    g.add_argument("--gold-field", help="column (or comma-separated columns) holding the gold answer text(s)")
    g.add_argument("--list-sep", help="separator splitting a string options/gold column into a list (e.g. '; ')")


def _one_or_list(value: str | None) -> str | list[str] | None:
    parts = split_list(value)
    return parts[0] if parts and len(parts) == 1 else parts


def benchmarks_from_args(args: argparse.Namespace) -> list[BenchmarkConfig]:
    """Every benchmark the command line names (empty: the job's embedded default)."""
    out: list[BenchmarkConfig] = []
    if getattr(args, "benchmarks", None):
        out += [BenchmarkConfig(**e) for e in read_yaml_list(args.benchmarks)]
    given = args.benchmark if isinstance(args.benchmark, list) else [args.benchmark] if args.benchmark else []
    for spec in given:
        parts = spec.split(":", 2)
        if len(parts) != 3:
            raise ValueError(f"--benchmark {spec!r}: expected NAME:PRESET:PATH")
        out.append(BenchmarkConfig(name=parts[0], preset=parts[1], paths=[parts[2]]))
    if args.input:
        out.append(BenchmarkConfig(
            name=args.name, paths=args.input, preset=args.preset, format=args.format, split=args.split,
            question=args.question_field, id=args.id_field, passage=args.passage_field,
            instructions=args.instructions_field, options=_one_or_list(args.options_field),
            gold=_one_or_list(args.gold_field), list_sep=args.list_sep,
        ))
    return out
