"""Configuration every job shares, and the metadata that turns a config field into a CLI flag.

Each job declares its options once, as the fields of a frozen pydantic model: name, type,
default and description. ``jobs.common.cli.flags`` generates the command line from those fields, so
``--help`` cannot drift from the code, and a YAML or Python caller gets the same validation as the
command line. ``Flag`` (kept in a field's ``Annotated`` metadata) adds what a flag needs beyond
the type: its group in ``--help``, a metavar, repeatable or comma-separated lists, old spellings
and the input it applies to.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from audit.stats.choices import DEFAULT_LEVEL, DEFAULT_REPLICATES, DEFAULT_SEED

if TYPE_CHECKING:
    from audit.stats.bootstrap import BootstrapConfig


@dataclass(frozen=True)
class Alias:
    """An old spelling of a flag, accepted for one release with a deprecation warning.

    ``convert`` maps the old value onto the new field (``--alpha 0.05`` → ``--level 0.95``);
    ``note`` says how in the warning.
    """

    flag: str
    convert: Callable[[str], Any] | None = None
    note: str = ""


@dataclass(frozen=True)
class Flag:
    """How one config field appears on the command line."""

    group: str = "options"
    metavar: str | None = None
    repeat: bool = False  # a list given by repeating the flag (else: one comma-separated value)
    default_text: str | None = None  # how --help shows a default that is not a literal
    requires: str | None = None  # the field this option applies to; giving it alone is an error
    deprecated: tuple[str | Alias, ...] = ()
    name: str | None = None  # the flag, when it is not --<field-name>
    positional: bool = False  # also accepted as the command's one positional argument (``reaudit plan.yaml``)
    cli: bool = True  # False: settable from YAML/Python only

    def option(self, field: str) -> str:
        return self.name or "--" + field.replace("_", "-")


def flag_of(field_info: Any) -> Flag:
    """The ``Flag`` in a field's metadata, or the default one."""
    return next((m for m in field_info.metadata if isinstance(m, Flag)), Flag())


def option_name(model: type[BaseModel], field: str) -> str:
    """The command-line spelling of ``model.field`` (what error messages name)."""
    info = model.model_fields.get(field)
    return flag_of(info).option(field) if info is not None else field


class ConfigError(ValueError):
    """Invalid options; the message names the flag."""


def _path_name(value: str) -> str:
    from connectors.runs.paths import safe_name  # when a value is validated, never while flags are parsed

    return safe_name(value)


def _input_name(value: str) -> str:
    from connectors.runs.paths import input_name

    return input_name(value)


# Names that become paths (see ``connectors.runs.paths``), checked where they are declared so the
# error names the flag or YAML field before any run directory exists.
PathName = Annotated[str, AfterValidator(_path_name)]  # a path segment as it is: run ids, submission ids
InputName = Annotated[str, AfterValidator(_input_name)]  # a label; a path only percent-encoded


def describe_validation(model: type[BaseModel], exc: ValidationError) -> str:
    """``--flag: problem`` for each error (pydantic's ``Value error,`` prefixes dropped)."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = err["loc"]
        where = option_name(model, str(loc[0])) if loc else ""
        message = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if loc and loc[0] == "level" and err["type"] in ("less_than", "greater_than"):  # "--level 95" meant 95%
            message = f"give a fraction between 0 and 1, e.g. 0.95 for a 95% interval (got {err['input']})"
        if loc[1:]:
            message = f"item {'.'.join(str(p) for p in loc[1:])}: {message}"
        lines.append(f"{where}: {message}" if where else message)
    return "; ".join(dict.fromkeys(lines))


ModelT = TypeVar("ModelT", bound=BaseModel)


def validated(model: type[ModelT], values: dict, context: str) -> ModelT:
    """``model(**values)`` with a one-line error naming ``context`` (a YAML entry, a flag value)."""
    try:
        return model(**values)
    except ValidationError as exc:
        raise ConfigError(f"{context}: {describe_validation(model, exc)}") from None


class JobConfig(BaseModel):
    """Base of every job config: frozen, unknown keys rejected, options that cannot apply refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="after")
    def _options_apply(self) -> JobConfig:
        for name in self.model_fields_set:
            info = type(self).model_fields[name]
            need = flag_of(info).requires
            if need and need not in self.model_fields_set:
                cls = type(self)
                raise ValueError(f"{option_name(cls, name)} applies only together with {option_name(cls, need)}")
        return self


def check_choices(names: list[str] | tuple[str, ...], known: tuple[str, ...], what: str) -> None:
    """``names`` must be a non-empty subset of ``known``; the error lists the known ones."""
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"unknown {what} {unknown}; known: {', '.join(known)}" if unknown else f"give at least one {what}")


def read_entries(model: type[ModelT], path: str, what: str) -> list[ModelT]:
    """The entries of a YAML list file (``--corpora``, ``--benchmarks``, ``--models``), each validated
    into ``model`` with an error naming the file and entry. The file is read when the config is
    built (a run), never while flags are parsed."""
    from connectors.io.yaml_lists import read_yaml_list

    return [validated(model, e, f"{path}: entry {i + 1}") for i, e in enumerate(read_yaml_list(path, what))]


def parse_named_inputs(values: object) -> object:
    """``NAME:PRESET:PATH`` strings (``--corpus``, ``--benchmark``) as ``{name, preset, paths}`` mappings;
    anything else (mappings from YAML or Python) passes through for the model to validate."""
    if not isinstance(values, list):
        return values
    out = []
    for v in values:
        if isinstance(v, str):
            parts = v.split(":", 2)
            if len(parts) != 3 or not all(parts):
                raise ValueError(f"{v!r}: expected NAME:PRESET:PATH")
            v = {"name": parts[0], "preset": parts[1], "paths": [parts[2]]}
        out.append(v)
    return out


INTERVALS = "intervals and randomness"


class IntervalOptions(JobConfig):
    """Bootstrap replicates, interval level and seed: one spelling and one default for every job with intervals."""

    bootstrap: Annotated[int, Flag(INTERVALS)] = Field(
        DEFAULT_REPLICATES, ge=1, description="bootstrap replicates behind every interval")
    level: Annotated[float, Flag(INTERVALS)] = Field(DEFAULT_LEVEL, gt=0, lt=1, description="two-sided interval level, a fraction")
    seed: Annotated[int, Flag(INTERVALS)] = Field(
        DEFAULT_SEED, ge=0, lt=2**64, description="seed of every random choice (recorded in the manifest)")

    def bootstrap_config(self) -> BootstrapConfig:
        from audit.stats.bootstrap import BootstrapConfig

        return BootstrapConfig(self.bootstrap, self.seed, self.level)


RUNNING = "running"
LogLevel = Literal["debug", "info", "warning", "error"]


class RunOptions(JobConfig):
    """Where a job writes, how it joins Ray, and how much bad input it may skip.

    These decide where and how a run happens, not its results, so they are kept out of the
    config hash; the skip limits are recorded in the manifest all the same.
    """

    out: Annotated[str, Flag(RUNNING, metavar="ROOT")] = Field(
        "runs", description="root of run directories: <out>/<job>/<run-id>/ (local path or fsspec URL)")
    run_id: Annotated[PathName | None, Flag(RUNNING, default_text="UTC time to the millisecond + a random suffix")] = Field(
        None, description="run id: letters, digits, '.', '_' and '-', starting with a letter or digit")
    resume: Annotated[bool, Flag(RUNNING)] = Field(
        False, description="continue the unfinished run --run-id (or the latest one); finished shards are not rerun")
    address: Annotated[str | None, Flag(RUNNING, default_text="start a local Ray")] = Field(
        None, description="Ray address to join: 'auto', 'HOST:PORT' (GCS) or 'ray://HOST:10001' (Ray Client)")
    connect_timeout: Annotated[float, Flag(RUNNING, metavar="SECONDS")] = Field(
        30.0, gt=0, description="give up on a Ray address that does not answer within this time")
    lost_node_timeout: Annotated[float, Flag(RUNNING, metavar="SECONDS")] = Field(
        60.0, gt=0, description="after a Ray node dies, stop a stage (resumably) once no live node has been able to "
                                "take its work for this long")
    num_cpus: Annotated[int | None, Flag(RUNNING, default_text="all")] = Field(
        None, ge=1, description="CPUs of a local Ray")
    executor: Annotated[Literal["auto", "ray", "local"], Flag(RUNNING)] = Field(
        "auto", description="auto: a small input (every shard's size known, within the job's limit) runs in this "
                            "process without starting Ray; ray: always on Ray; local: always in this process")
    on_error: Annotated[Literal["fail", "skip"], Flag(RUNNING)] = Field(
        "fail", description="an unreadable input stops the job, or is skipped and counted (within --max-skipped)")
    max_skipped: Annotated[float, Flag(RUNNING, metavar="FRACTION")] = Field(
        0.01, ge=0, le=1, description="a run that skipped a larger share of its rows (bad rows, unread rows, skipped "
                                      "inputs' rows) fails instead of reporting success")
    max_skipped_inputs: Annotated[int, Flag(RUNNING, metavar="N")] = Field(
        0, ge=0, description="with --on-error skip: how many whole inputs (files, shards) may be skipped")
    log_level: Annotated[LogLevel, Flag(RUNNING)] = Field(
        "info", description="info: progress lines and result paths; debug: also tracebacks and Ray's own logs")


DRIVER_OPTIONS = ("out", "run_id", "log_level")  # jobs that run on the driver: no Ray, no shards to skip
EXPORT_OPTIONS = ("log_level",)  # single-file exports (--to FILE)


def config_hash(payload: dict) -> str:
    """Hash of the result-relevant configuration (run options excluded)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def non_default_options(config: BaseModel) -> dict[str, Any]:
    """The options of ``config`` that differ from its job's defaults, as JSON values (required fields
    included): what tells two runs of one job apart (``lexicon_profile=gazetteer``), where the config
    hash only says that they differ. The run store, ``runs list``/``compare`` and the index show it."""
    dumped = config.model_dump(mode="json")
    out = {}
    for name, info in type(config).model_fields.items():
        if info.is_required() or getattr(config, name) != info.get_default(call_default_factory=True):
            out[name] = dumped[name]
    return out
