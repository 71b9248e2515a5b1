"""What to read as one benchmark: inputs plus a preset or a field mapping."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from connectors.benchmarks.choices import FORMATS
from connectors.benchmarks.formats import Records
from connectors.benchmarks.presets import PRESETS, read_records
from connectors.benchmarks.schema import BenchmarkError, FieldMapping, Layout


@dataclass(frozen=True)
class BenchmarkSpec:
    """What to read: input path(s) or glob(s), and a preset name or a field mapping (not both).

    ``name`` fills the ``benchmark`` column (default: the preset name, else the first file's
    stem). ``split`` picks a split of a Hugging Face ``DatasetDict`` folder. ``format`` overrides
    the guess from the extension.
    """

    input: str | tuple[str, ...]
    preset: str | None = None
    mapping: FieldMapping | None = None
    name: str | None = None
    split: str | None = None
    format: str | None = None
    encoding: str = "utf-8"

    def __post_init__(self) -> None:
        if (self.preset is None) == (self.mapping is None):
            raise BenchmarkError(f"{self.input}: give exactly one of preset= or mapping=")
        if self.preset is not None and self.preset not in PRESETS:
            raise BenchmarkError(f"unknown preset {self.preset!r}; known: {sorted(PRESETS)}")
        if self.format is not None and self.format not in FORMATS:
            raise BenchmarkError(f"{self.input}: unknown format {self.format!r}; known: {FORMATS}")

    @property
    def inputs(self) -> tuple[str, ...]:
        return (self.input,) if isinstance(self.input, str) else tuple(self.input)

    def layouts(self) -> tuple[Layout, ...]:
        return PRESETS[self.preset].layouts if self.preset else (self.mapping.layout(),)  # type: ignore[union-attr]

    def benchmark_name(self) -> str:
        return self.name or self.preset or Path(self.inputs[0].rstrip("/")).name.split(".")[0]

    def read_records(self, path: str) -> tuple[list[str], Records]:
        """(column names, records) of one input file, through the preset's reader if it has one."""
        preset = PRESETS[self.preset] if self.preset else None
        return read_records(path, self.format, preset, self.split, self.encoding)
