"""``benchaudit submit <job> [options]`` (one subcommand per job that writes a run) and ``submit status|stop``."""
from __future__ import annotations

from jobs.common.cli.config import DRIVER_OPTIONS
from jobs.common.cli.flags import Command, load_command
from jobs.common.cli.registry import JOBS, Lazy, lookup
from jobs.submit.config import SubmissionConfig, with_job


def _wrap(command: Command, path: tuple[str, ...]) -> Command | None:
    """The submit form of ``command`` (and of its subcommands): same options, minus where the job joins Ray."""
    here = (*path, command.name)
    subs = tuple(w for w in (_wrap(load_command(c), here) for c in command.subcommands if not c.replaced_by) if w is not None)
    writes_run = command.run is not None and "out" in command.run_options and not command.replaced_by
    if not writes_run and not subs:
        return None
    options = tuple(o for o in command.run_options if o not in ("address", "num_cpus"))  # the job joins the cluster
    return Command(name=command.name, help=command.help, description=f"Submit 'benchaudit {' '.join(here)}' to a Ray cluster. "
                   + (command.description or command.help),
                   config=with_job(command.config, here, command.run_options) if writes_run else None,
                   run="jobs.submit.run:submit" if writes_run else None, run_options=options, outputs=(), subcommands=subs)


def wrapped(name: str) -> Command:
    """The submit form of the registered job ``name`` (loaded only when a command line names it)."""
    entry = lookup(name)
    assert entry is not None, name
    found = _wrap(load_command(entry), ())
    assert found is not None, f"{name} writes no run"
    return found


_SUBMISSION = (*DRIVER_OPTIONS[:1], "connect_timeout", "log_level")  # --out: the run root whose store says the run's state

COMMAND = Command.registered(
    "submit",
    description="Submit any job to a Ray cluster's Jobs API (http://HEAD:8265) with a runtime env generated from "
                "pyproject.toml (this checkout as working_dir). The job's options are checked before anything is sent; "
                "the token is read where Ray reads it ($RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token).\n\n"
                "  benchaudit submit geo --address http://head:8265 --extras s3 --corpus coyo:coyo:'s3://b/coyo/*.parquet' "
                "--out s3://b/audits\n"
                "  benchaudit submit reaudit --address http://head:8265 --submission-id 'reaudit-{week}' --plan plan.yaml "
                "--out s3://b/audits\n"
                "  benchaudit submit status --address http://head:8265 --submission-id reaudit-2026-W49",
    subcommands=(*(Lazy(job.name, job.help, "jobs.submit.cli:wrapped") for job in JOBS),
                 Command(name="status", help="state of a submission, and of its run", config=SubmissionConfig,
                         run="jobs.submit.run:status", run_options=_SUBMISSION, outputs=()),
                 Command(name="stop", help="stop a submission (its finished shards stay for --resume)", config=SubmissionConfig,
                         run="jobs.submit.run:stop", run_options=_SUBMISSION, outputs=())),
)
