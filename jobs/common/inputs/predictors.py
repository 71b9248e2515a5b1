"""Prediction files as jobs take them (``--predictions NAME=PATH``): shared by ``coreset estimate`` and ``traces``."""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from jobs.common.cli.config import ConfigError, InputName


class PredictorConfig(BaseModel):
    """One model (or prompt variant): its name in the report and its prediction files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: InputName
    paths: list[str] = Field(min_length=1)


def parse_predictors(values: object) -> object:
    """``NAME=PATH`` strings (from the command line); a repeated NAME adds files to that predictor."""
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return values
    paths: dict[str, list[str]] = {}
    for spec in values:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"{spec!r}: expected NAME=PATH")
        paths.setdefault(name, []).append(path)
    return [{"name": n, "paths": p} for n, p in paths.items()]


Predictors = Annotated[list[PredictorConfig], BeforeValidator(parse_predictors)]


def unique_predictors(predictors: list[PredictorConfig]) -> None:
    names = [p.name for p in predictors]
    if len(set(names)) != len(names):
        raise ConfigError(f"--predictions: predictor names must be unique, got {names}")
