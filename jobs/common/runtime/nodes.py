"""Lost Ray nodes, noticed while a stage runs: one line when a node dies, and a stop when no live node
is left that can take the stage's work.

Why it is needed: Ray restarts the actors of a dead node elsewhere and retries their work (Ray Data
restarts pool actors and retries their tasks without limit), so a stage whose other nodes can hold
its actors finishes by itself, with the same totals: a retried shard overwrites its own outputs and
writes its done-marker once. When no live node can hold one actor of the stage (the only GPU node of
a model stage died, the only node with the CPUs an actor asks for), Ray waits for such a node
forever and says nothing. ``watch_nodes`` then stops the stage after ``--lost-node-timeout`` seconds
with one resumable line; finished shards and cached answers stay, so ``--resume`` on a repaired
cluster repeats none of them.

How long a job waits before giving up on a node: Ray's GCS declares a node dead after its health
checks fail (about 12-15 s after its raylet dies, measured in docs/operations.md#a-lost-node), and
this watch, polling the GCS every second, gives up ``--lost-node-timeout`` seconds after that.
"""
from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from jobs.common.runtime.errors import JobError

log = logging.getLogger("benchaudit")

POLL_S = 1.0  # one ``ray.nodes()`` call to the GCS a second: the watch costs nothing a stage would notice


class NodeLost(JobError):
    """A stage stopped because a Ray node died and no live node can take its work; a rerun on a repaired
    cluster finishes it, so it is resumable."""

    def __init__(self, message: str):
        super().__init__(message, resumable=True)


def fits(resources: dict[str, float], needs: dict[str, float]) -> bool:
    """Whether a node with these total resources can hold one actor asking for ``needs``."""
    return all(resources.get(name, 0.0) >= amount for name, amount in needs.items() if amount > 0)


def describe(needs: dict[str, float]) -> str:
    return ", ".join(f"{amount:g} {name}" for name, amount in needs.items() if amount > 0) or "no resources"


class NodeWatch(threading.Thread):
    """Polls the cluster's nodes while a stage runs (see the module doc); ``stop_stage`` is called at most
    once, from this thread, when the stage has to stop."""

    def __init__(self, job: str, what: str, needs: dict[str, float], timeout_s: float, stop_stage: Callable[[], None]):
        super().__init__(name="node-watch", daemon=True)
        self.job, self.needs, self.timeout_s, self.stop_stage = job, needs, timeout_s, stop_stage
        self.what = f"{what}: " if what else ""
        self.stopped = threading.Event()
        self.lost: dict[str, str] = {}  # node id -> its address, every node that died during the stage
        self.message: str | None = None  # why the stage was stopped, once it was
        self._known = self._alive()

    @staticmethod
    def _alive() -> dict[str, dict]:
        import ray

        return {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}

    def run(self) -> None:
        without_room: float | None = None  # since when no live node can hold an actor of the stage
        while not self.stopped.wait(POLL_S):
            try:
                alive = self._alive()
            except Exception as exc:  # noqa: BLE001 -- a slow or lost GCS: ask again (a lost one fails the stage itself)
                log.debug("%s: could not list the Ray nodes: %s", self.job, exc)
                continue
            for node_id in self._known.keys() - alive.keys():
                address = self._known[node_id].get("NodeManagerAddress", "?")
                self.lost[node_id] = address
                log.warning("%s: warning: %slost Ray node %s (%s); its work is retried on the nodes that remain", self.job,
                            self.what, address, node_id[:8])
            self._known = alive
            if not self.lost or any(fits(n.get("Resources", {}), self.needs) for n in alive.values()):
                without_room = None
                continue
            now = time.monotonic()
            without_room = without_room or now
            if now - without_room >= self.timeout_s:
                self.message = (f"{self.job}: {self.what}lost Ray node {', '.join(sorted(self.lost.values()))} and no live node has "
                                f"{describe(self.needs)} for an actor of this stage (waited {self.timeout_s:g} s, "
                                "--lost-node-timeout); add such a node")
                self.stop_stage()
                return


@contextmanager
def watch_nodes(job: str, what: str, needs: dict[str, float], timeout_s: float) -> Iterator[NodeWatch]:
    """Run the body (a Ray stage of ``job``, described by ``what`` in its lines, consumed in this thread) under
    a ``NodeWatch``; raises ``NodeLost`` in this thread when the stage has to stop.

    The stop is a SIGUSR1 to this thread, whose handler raises: a signal wakes the thread from any
    blocking wait inside Ray (a lock, ``ray.get``), where a flag would only be read once the wait ended,
    which it never does. Only the main thread receives Python signals; a stage consumed elsewhere
    gets the warnings and the final line in the log, not the stop.
    """
    main = threading.current_thread() is threading.main_thread()
    active = threading.Event()

    def stop_stage() -> None:
        if main and active.is_set():
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)  # the main thread has started: an ident
        else:
            log.error("%s", watch.message)

    def raise_lost(signum, frame) -> None:
        if active.is_set() and watch.message:
            active.clear()  # once: the unwinding below must not be interrupted again
            raise NodeLost(watch.message)

    watch = NodeWatch(job, what, needs, timeout_s, stop_stage)
    previous = signal.signal(signal.SIGUSR1, raise_lost) if main else None
    active.set()
    watch.start()
    try:
        yield watch
    finally:
        active.clear()
        watch.stopped.set()
        watch.join()
        if main:
            signal.signal(signal.SIGUSR1, previous)
