"""Errors people can act on: one or two lines saying what failed, where, and what to do.

A job raises whatever its connectors raise (a ``BenchmarkError`` naming file, row and field, a
``CorpusError``, an ``OSError`` from the filesystem); this module decides what the user sees. The
full traceback goes to ``<run>/.partial/error.log`` (and to the terminal under
``--log-level debug``), never as 200 lines of Ray internals. ``--resume`` is suggested only where
it can help: an interruption, a lost worker or a transient read failure -- never bad input or bad
config, which a rerun would meet again.
"""
from __future__ import annotations

import errno
import re
import traceback

# Failures of the filesystem or network that a rerun may not meet again.
_PERMANENT_OS_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)
_TRANSIENT_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.ETIMEDOUT, errno.ECONNRESET, errno.ECONNREFUSED,
                     errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EAGAIN}


class JobError(RuntimeError):
    """A failure with a message written for the user.

    ``resumable`` says whether ``--resume`` can help; ``partial`` is the unfinished run directory
    (where ``error.log`` is) when one exists.
    """

    def __init__(self, message: str, *, resumable: bool = False, partial: str | None = None, run_id: str | None = None,
                 reason: str = "job"):
        super().__init__(message)
        self.resumable, self.partial, self.run_id, self.reason = resumable, partial, run_id, reason

    @property
    def transient(self) -> bool:
        """Errors as data (``failure_reason``): a resumable failure is a transient one."""
        return self.resumable


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception, then what it wraps: Ray's ``cause`` (a task's error) and Python's ``__cause__``/``__context__``."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop(0)
        if isinstance(e, BaseException) and all(e is not s for s in seen):
            seen.append(e)
            todo += [getattr(e, "cause", None), e.__cause__, e.__context__]
    return seen


def failure_reason(exc: BaseException) -> tuple[str, bool]:
    """(reason code, transient) of a failure, as set where it happened.

    Errors as data: the first exception in the chain that carries ``reason`` and ``transient`` attributes
    (``connectors.models.base.BackendError`` and its kinds, ``connectors.models.http_client.EndpointError``,
    a ``JobError``) says both; Ray's wrappers are looked through by their ``cause``. An actor whose
    creation failed (``actor_init_failed``: a model that could not load) is permanent -- its cause would
    stop it again; any other failure is transient by its type (``is_transient``)."""
    for e in _chain(exc):
        reason, transient = getattr(e, "reason", None), getattr(e, "transient", None)
        if isinstance(reason, str) and isinstance(transient, bool):
            return reason, transient
    if any(getattr(e, "actor_init_failed", False) for e in _chain(exc)):
        return "model_init_failed", False
    return type(exc).__name__, is_transient(exc)


class UnreachableError(JobError):
    """Nobody answered at an address the user gave (a closed port, a host that does not reply): one kind of
    failure with one exit code (1) from every command that dials one (a job's ``--address``, ``submit``'s),
    since it passes on a rerun once the cluster is up. Something else answering there is a bad address (2)."""

    def __init__(self, message: str):
        super().__init__(message, resumable=True)


def is_transient(exc: BaseException) -> bool:
    """Whether the failure may pass on a rerun: disk full, timeouts, lost connections or workers."""
    if isinstance(exc, JobError):
        return exc.resumable
    if isinstance(exc, (KeyboardInterrupt, TimeoutError, ConnectionError)):
        return True
    if isinstance(exc, OSError) and not isinstance(exc, _PERMANENT_OS_ERRORS):
        return exc.errno in _TRANSIENT_ERRNOS or exc.errno is None
    name = type(exc).__name__
    return name in {"RayActorError", "WorkerCrashedError", "ObjectLostError", "NodeDiedError", "ActorDiedError",
                    "OwnerDiedError", "RaySystemError", "GetTimeoutError"}


def one_line(exc: BaseException) -> str:
    """The exception's own message on one line (its type when it has none)."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    text = user_code_error(exc) or " ".join(str(exc).split())
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        text = f"{exc.filename}: {exc.strerror}"
    return text or type(exc).__name__


_RAISED = re.compile(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception|Invalid)): (.+)$")


def user_code_error(exc: BaseException) -> str | None:
    """The message of the exception user code raised inside a Ray task, out of Ray's wrapped text.

    Ray Data re-raises a task's failure as ``RayTaskError(UserCodeException)``, and an actor that
    failed in ``__init__`` (a model that could not load) as ``ActorDiedError``; their text holds the
    remote traceback, whose last ``SomeError: message`` line that is not Ray's own is the real one.
    """
    if not type(exc).__name__.startswith(("RayTaskError", "UserCodeException", "ActorDiedError", "RayActorError")):
        return None
    found = [m.group(2) for m in map(_RAISED.match, str(exc).splitlines())
             if m and not m.group(1).startswith(("Ray", "UserCode", "Actor"))]
    return found[-1].strip() if found else None


def format_traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def failure_lines(prog: str, exc: BaseException) -> list[str]:
    """At most three lines: the error, where the details are, and the resume command if it can help."""
    lines = [f"{prog}: error: {one_line(exc)}"]
    partial = getattr(exc, "partial", None)
    if partial:
        lines.append(f"{prog}: traceback in {partial.rstrip('/')}/error.log")
    run_id = getattr(exc, "run_id", None)
    if getattr(exc, "resumable", False) and run_id:
        lines.append(f"{prog}: finished shards are kept; rerun the same command with --resume --run-id {run_id}")
    return lines
