"""``benchaudit reaudit`` options and the plan it reads (a YAML file, validated here)."""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jobs.common.cli.config import ConfigError, Flag, JobConfig, describe_validation

PLAN = "plan"
_CRON_FIELD = re.compile(r"^[\d*/,\-A-Za-z]+$")


class ReauditConfig(JobConfig):
    """The plan to run and whether only to say what would run."""

    plan: Annotated[str | None, Flag(PLAN, metavar="YAML", default_text="required", positional=True)] = Field(
        None, description="the re-audit plan: benchmarks and corpora, audits, models, thresholds, schedule (local path or URL)")
    dry_run: Annotated[bool, Flag(PLAN)] = Field(
        False, description="fingerprint the inputs and print which audits would rerun and why; run nothing, write nothing")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AuditSpec(_Strict):
    """One audit of the plan: a job command and its options (the plan's inputs are added to them)."""

    job: str = Field(min_length=1, description="a job command: geo, conventions, scorers, landscape, 'coreset build' ...")
    id: str = ""
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _named(self) -> AuditSpec:
        if not self.id:
            object.__setattr__(self, "id", self.job.replace(" ", "-"))
        from connectors.runs.paths import safe_name  # when a plan is read, never while flags are parsed

        safe_name(self.id, "audit id")  # it names files: fingerprints/<id>.files.parquet
        return self

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(self.job.split())


class ThresholdSpec(_Strict):
    """When a headline metric's change is a regression: which way is better, and by how much it may move."""

    metric: str = Field(min_length=1, description="metric name, shell patterns allowed (accuracy, *_share)")
    better: Literal["higher", "lower"]
    tolerance: float = Field(0.0, ge=0, description="|delta| up to this is 'unchanged' (same units as the metric)")
    input: str = "*"
    audit: str = "*"
    require_interval: bool = Field(False, description="also require the delta's interval to exclude 0")


class ReauditPlan(_Strict):
    """What to re-audit, against what, and when."""

    name: str = Field(min_length=1, description="the plan's name: runs of the same name are compared with each other")
    schedule: str | None = Field(None, description="cron expression of the scheduled run (recorded; the scheduler runs it)")
    benchmarks: list[dict[str, Any]] = Field(default_factory=list)
    corpora: list[dict[str, Any]] = Field(default_factory=list)
    models: list[dict[str, Any]] = Field(default_factory=list)
    audits: list[AuditSpec] = Field(min_length=1)
    thresholds: list[ThresholdSpec] = Field(default_factory=list)

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is not None and (len(value.split()) != 5 or not all(_CRON_FIELD.match(f) for f in value.split())):
            raise ValueError(f"{value!r} is not a 5-field cron expression (minute hour day month weekday)")
        return value

    @model_validator(mode="after")
    def _unique(self) -> ReauditPlan:
        for what, names in (("audit ids", [a.id for a in self.audits]), ("benchmark names", [b.get("name") for b in self.benchmarks]),
                            ("corpus names", [c.get("name") for c in self.corpora]), ("model names", [m.get("name") for m in self.models
                                                                                                      if m.get("name")])):
            if len(set(names)) != len(names):
                raise ValueError(f"{what} must be unique, got {names}")
        return self


def read_plan(url: str) -> tuple[ReauditPlan, bytes]:
    """The plan at ``url`` and its bytes (hashed into the re-audit's manifest); errors name the file and the field."""
    import fsspec
    import yaml

    from audit.safe_yaml import load_yaml

    try:
        with fsspec.open(url, "rb") as fh:
            raw = fh.read()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--plan {url}: cannot read it ({exc})") from None
    try:
        data = load_yaml(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{url}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{url}: a plan is a mapping with name, audits, benchmarks/corpora, models, thresholds, schedule")
    try:
        return ReauditPlan(**data), raw
    except ValidationError as exc:
        raise ConfigError(f"{url}: {describe_validation(ReauditPlan, exc)}") from None
