"""``benchaudit submit <job>`` options: where and how to submit, plus every option of the job itself.

For each job ``with_job`` builds one config class inheriting the job's config and
``SubmitOptions``, so ``benchaudit submit geo --help`` lists geo's own options (generated as for
``benchaudit geo``) and they are validated here, before anything is sent: a bad option fails on
the laptop, not after a cluster has started. The options as typed are kept (``given``) and become
the job's command line on the cluster (``job_argv``).
"""
from __future__ import annotations

import hashlib
import json
import types
import typing
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from jobs.common.cli.config import ConfigError, Flag, JobConfig, RunOptions, flag_of

SUBMIT = "submission (Ray Jobs API)"


class SubmitOptions(JobConfig):
    """Where to submit, with which runtime environment, under which id, and what to do after."""

    address: Annotated[str | None, Flag(SUBMIT, metavar="URL", default_text="$RAY_API_SERVER_ADDRESS or $RAY_ADDRESS")] = Field(
        None, description="the cluster's Jobs API (dashboard) address, http://HEAD:8265; the job itself joins the cluster "
                          "with --address auto")
    runtime_env: Annotated[str | None, Flag(SUBMIT, metavar="YAML", default_text="generated: this checkout as working_dir, "
                                            "pip from pyproject.toml")] = Field(
        None, description="a Ray runtime env YAML (e.g. cluster/runtime_env.yaml); relative working_dir paths are from the "
                          "current directory")
    extras: Annotated[list[str], Flag(SUBMIT, metavar="EXTRA[,EXTRA...]")] = Field(
        default_factory=list, description="extras of pyproject.toml whose requirements the generated runtime env installs "
                                          "(s3, gcs, models)")
    submission_id: Annotated[str | None, Flag(SUBMIT, metavar="ID", default_text="a fresh one per submission")] = Field(
        None, description="the job's id on the cluster, which refuses an id it has seen: a scheduled run gives the same id "
                          "for the same slot, so a retried or doubled trigger runs once. May hold {job}, {date} (UTC "
                          "YYYYMMDD), {hour} (YYYYMMDDTHH), {week} (ISO YYYY-Www) and {hash} (of the job's options); "
                          "also the run id unless --run-id is given")
    follow: Annotated[bool, Flag(SUBMIT)] = Field(
        True, description="print the job's log until it ends and exit with its exit code (--no-follow: print the "
                          "submission id and return)")
    fetch_to: Annotated[str | None, Flag(SUBMIT, metavar="DIR")] = Field(
        None, description="after a successful run, copy its run directory from --out into DIR/<run-id>")
    entrypoint_num_cpus: Annotated[float, Flag(SUBMIT, metavar="N")] = Field(
        0.0, ge=0, description="CPUs reserved for the job's driver (0: the driver schedules, workers scan)")

    _given: dict = PrivateAttr(default_factory=dict)

    @field_validator("submission_id")
    @classmethod
    def _renders_a_name(cls, template: str | None) -> str | None:
        """The template, once filled in, is a run id (a path name): refused here, before anything is sent."""
        if template is not None:
            _render(template, "job", [], datetime(2026, 1, 1, tzinfo=timezone.utc))
        return template

    JOB_PATH: ClassVar[tuple[str, ...]] = ()  # the job's command words, e.g. ("coreset", "build")
    JOB_MODEL: ClassVar[type[BaseModel] | None] = None
    JOB_RUN_OPTIONS: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="wrap")
    @classmethod
    def _keep_given(cls, data: Any, handler):
        model = handler(data)
        if isinstance(data, dict):
            model._given = dict(data)
        return model

    def job_argv(self, opts: RunOptions, run_id: str) -> list[str]:
        """The job's command line on the cluster: the options as typed, ``--address auto``, ``--run-id``."""
        assert self.JOB_MODEL is not None
        own = set(SubmitOptions.model_fields)
        argv = list(self.JOB_PATH)
        for name, value in self._given.items():
            if name not in own and name in self.JOB_MODEL.model_fields:
                argv += as_flags(self.JOB_MODEL, name, value)
        for name in sorted(opts.model_fields_set):
            if name in self.JOB_RUN_OPTIONS and name not in ("address", "run_id"):
                argv += as_flags(RunOptions, name, getattr(opts, name))
        if "address" in self.JOB_RUN_OPTIONS:
            argv += ["--address", "auto"]
        return [*argv, "--run-id", run_id]


def submission_id(template: str, job: str, argv: list[str], now: datetime | None = None) -> str:
    """The id for ``template``: {job}, {date}, {hour}, {week} of ``now`` (UTC) and {hash} of the job's options.

    The id is also the run id, a path segment, so it must be a path name (``connectors.runs.paths``).
    """
    try:
        return _render(template, job, argv, now or datetime.now(timezone.utc))
    except ValueError as exc:
        raise ConfigError(f"--submission-id {template}: {exc}") from None


def _render(template: str, job: str, argv: list[str], now: datetime) -> str:
    from connectors.runs.paths import safe_name  # when a value is validated, never while flags are parsed

    year, week, _ = now.isocalendar()
    digest = hashlib.sha256("\0".join(argv).encode()).hexdigest()[:10]
    try:
        sid = template.format(job=job, date=f"{now:%Y%m%d}", hour=f"{now:%Y%m%dT%H}", week=f"{year}-W{week:02d}", hash=digest)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise ValueError(f"unknown placeholder {exc}; use {{job}}, {{date}}, {{hour}}, {{week}} or {{hash}}") from None
    return safe_name(sid)


def _is_bool(annotation: Any) -> bool:
    return annotation is bool or (typing.get_origin(annotation) in (typing.Union, types.UnionType)
                                  and set(typing.get_args(annotation)) == {bool, type(None)})


def as_flags(model: type[BaseModel], name: str, value: Any) -> list[str]:
    """``model.name = value`` (as argparse collected it) written back as command-line words."""
    info = model.model_fields[name]
    flag = flag_of(info)
    option = flag.option(name)
    if _is_bool(info.annotation):
        if value:
            return [option]
        return ["--no-" + option[2:]] if info.default is True else []
    if isinstance(value, (list, tuple)):
        if flag.repeat:
            return [w for v in value for w in (option, _word(v))]
        return [option, ",".join(_word(v) for v in value)]
    return [option, _word(value)]


def _word(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, BaseModel):
        return json.dumps(value.model_dump())
    return str(value)


def with_job(model: type[BaseModel] | None, path: Sequence[str], run_options: Sequence[str]) -> type[SubmitOptions]:
    """The submit config of one job: its own options and ``SubmitOptions`` in one model."""
    bases = (SubmitOptions,) if model is None else (SubmitOptions, model)
    clash = set(SubmitOptions.model_fields) & set(model.model_fields if model else ())
    if clash:
        raise TypeError(f"benchaudit submit {' '.join(path)}: options {sorted(clash)} exist in the job and in submit")
    name = "Submit" + "".join(p.title().replace("-", "") for p in path)
    return type(name, bases, {"__module__": __name__, "JOB_PATH": tuple(path), "JOB_MODEL": model or JobConfig,
                              "JOB_RUN_OPTIONS": tuple(run_options), "__annotations__": {}})


class SubmissionConfig(JobConfig):
    """``benchaudit submit status|stop``: one submission on one cluster."""

    address: Annotated[str | None, Flag(SUBMIT, metavar="URL", default_text="$RAY_API_SERVER_ADDRESS or $RAY_ADDRESS")] = Field(
        None, description="the cluster's Jobs API (dashboard) address, http://HEAD:8265")
    submission_id: Annotated[str | None, Flag(SUBMIT, metavar="ID", default_text="required")] = Field(
        None, description="the submission, as 'benchaudit submit' printed it")
