"""A real two-node Ray cluster on loopback: a head and worker nodes joined with ``ray start --address``.

Every node is its own ``ray start --block`` process in its own process group, started and stopped by
PID (never ``ray stop``, which stops every Ray on the machine). ``kill_raylet`` is the fault: SIGKILL
to a worker node's raylet, what a machine that dies or drops off the network looks like to the GCS.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.servers.ray_head import free_ports, ray_env


@dataclass
class RayCluster:
    gcs: str  # the address a job joins: 127.0.0.1:PORT
    env: dict  # what a client on this machine needs (this venv first on PATH, no leaked Ray settings)
    root: Path
    temp_dir: Path
    nodes: list[subprocess.Popen] = field(default_factory=list)  # the head first


STARTUP_TIMED_OUT = b"The current node timed out during startup"  # Ray's fixed 30 s for a raylet to register
# A port chosen free was taken before the node's agent bound it (another Ray on this machine started workers): the
# raylet exits at once ("one Ray agent failed ... port conflict"), after ``ray start`` said the runtime started.
PORT_TAKEN = b"Address already in use"
RETRIED = (STARTUP_TIMED_OUT, PORT_TAKEN)


def _listening(node: subprocess.Popen, port: int) -> bool:
    """Whether a process of ``node`` listens on ``port``: its runtime-env agent, which its raylet fate-shares with. A
    node whose agent could not bind its port is never taken for a live one, even where another process holds the
    port."""
    try:
        children = psutil.Process(node.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return False
    for child in children:
        try:
            if any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in child.net_connections(kind="tcp")):
                return True
        except psutil.Error:
            continue
    return False


def _start(cluster: RayCluster, name: str, args: list[str], timeout: float) -> subprocess.Popen:
    """One ``ray start --block`` node; returns once it says its runtime started (its raylet registered) and its
    runtime-env agent listens. A start Ray gave up on because its raylet did not register within its fixed 30 s (a
    busy machine), or whose agent found its port taken, is tried again on new ports, twice."""
    log_path = cluster.root / f"{name}.log"
    retries = 2
    while True:
        taken = {int(a) for a in args if a.isdigit()}  # the ports the caller chose for this node
        worker, agent_grpc, runtime_env = free_ports(3, taken)
        while taken & set(range(worker, worker + 41)) or {agent_grpc, runtime_env} & set(range(worker, worker + 41)):
            worker, agent_grpc, runtime_env = free_ports(3, taken)  # the workers' range must hold none of them
        with open(log_path, "wb") as log:
            # the agents' ports given rather than reported by them in files: a raylet waits 15 s for such a file and
            # dies when a busy machine's agent is slower ("Timed out waiting for file .../metrics_agent_port_<node>")
            proc = subprocess.Popen([str(Path(sys.executable).parent / "ray"), "start", "--block", "--node-ip-address", "127.0.0.1",
                                     "--min-worker-port", str(worker), "--max-worker-port", str(worker + 40),
                                     "--dashboard-agent-grpc-port", str(agent_grpc), "--runtime-env-agent-port", str(runtime_env),
                                     "--disable-usage-stats", *args],
                                    stdout=log, stderr=subprocess.STDOUT, env=cluster.env, start_new_session=True)
        cluster.nodes.append(proc)
        deadline = time.monotonic() + timeout
        while b"Ray runtime started" not in log_path.read_bytes() or not _listening(proc, runtime_env):
            if proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        else:
            return proc
        if proc.poll() is not None and any(why in log_path.read_bytes() for why in RETRIED) and retries:
            retries -= 1
            _stop(proc)
            cluster.nodes.remove(proc)
            continue
        stop_cluster(cluster)
        raise RuntimeError(f"ray start ({name}) did not come up: {log_path.read_text(errors='replace')[-3000:]}")


# Ray's GCS declares a node dead after 5 failed health checks 3 s apart (each may wait 10 s): 12-15 s after its
# raylet dies. Fast checks let a test see a loss within a short scan: a dead raylet refuses at once, so it is declared
# dead after 3 checks a second apart (~3 s). Each check waits 2 s for a live one: with 0.5 s, a busy machine (load
# 12-15) had live raylets declared dead, the worker node's before the test killed it and the head's too, and a head
# declared dead takes the driver's actors with it ("The actor died unexpectedly ... Owner's node has crashed").
FAST_HEALTH_CHECKS = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "2000",
                      "RAY_health_check_failure_threshold": "3"}


def start_cluster(root: Path, head_cpus: int, fast_health_checks: bool = False, timeout: float = 120.0) -> RayCluster:
    """A head with ``head_cpus`` CPUs (0: it holds no work, as a head with no GPUs holds no model actor); Ray's
    own health checks unless ``fast_health_checks``."""
    gcs, client, agent, metrics = free_ports(4)
    temp_dir = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # short: Ray's unix sockets live here
    cluster = RayCluster(f"127.0.0.1:{gcs}", ray_env(root), root, temp_dir)
    if fast_health_checks:
        cluster.env = {**cluster.env, **FAST_HEALTH_CHECKS}
    _start(cluster, "head", ["--head", "--port", str(gcs), "--include-dashboard", "false", "--ray-client-server-port",
                             str(client), "--dashboard-agent-listen-port", str(agent), "--metrics-export-port", str(metrics),
                             "--num-cpus", str(head_cpus), "--temp-dir", str(temp_dir)], timeout)
    return cluster


def add_node(cluster: RayCluster, num_cpus: int, resources: dict[str, float], timeout: float = 120.0) -> subprocess.Popen:
    """A worker node joined with ``ray start --address``, with its own CPUs and custom resources."""
    agent, metrics = free_ports(2)
    return _start(cluster, f"node{len(cluster.nodes)}", [
        "--address", cluster.gcs, "--num-cpus", str(num_cpus), "--resources", json.dumps(resources),
        "--dashboard-agent-listen-port", str(agent), "--metrics-export-port", str(metrics)], timeout)


def kill_raylet(node: subprocess.Popen) -> int | None:
    """SIGKILL to the node's raylet; returns its PID, or None when it is gone already: the GCS declared the node dead
    first (its health checks timed out on a busy machine) and the raylet exited, which is the same loss."""
    try:
        raylets = [p for p in psutil.Process(node.pid).children(recursive=True) if p.name() == "raylet"]
    except psutil.NoSuchProcess:
        return None
    assert len(raylets) <= 1, f"expected one raylet under ray start {node.pid}, found {raylets}"
    for raylet in raylets:
        try:
            raylet.send_signal(signal.SIGKILL)
            return raylet.pid
        except psutil.NoSuchProcess:
            return None
    return None


class NodeStates:
    """The GCS's own view of the nodes, from a driver of its own: when each node was first seen dead (what a job's
    watch can know at the earliest)."""

    SCRIPT = ("import sys, time, ray\n"
              "ray.init(address=sys.argv[1], log_to_driver=False)\n"
              "gone = {n['NodeID'] for n in ray.nodes() if not n['Alive']}\n"  # lost before: not this driver's to time
              "while True:\n"
              "    print('dead', time.time(), *[n['NodeID'] for n in ray.nodes() if not n['Alive'] and n['NodeID'] not in gone],"
              " flush=True)\n"
              "    time.sleep(0.2)\n")

    def __init__(self, cluster: RayCluster):
        self.proc = subprocess.Popen([sys.executable, "-c", self.SCRIPT, cluster.gcs], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=cluster.env)
        self.dead_at: dict[str, float] = {}  # node id -> wall-clock time first seen dead
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(120):
            raise RuntimeError("the node-state driver did not start")

    def _read(self) -> None:
        for line in self.proc.stdout:
            if not line.startswith("dead "):  # Ray's own lines on a driver's stdout (a raylet died: its log)
                continue
            _, at, *dead = line.split()
            self.ready.set()
            for node_id in dead:
                self.dead_at.setdefault(node_id, float(at))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def stop_cluster(cluster: RayCluster) -> None:
    """Worker nodes first, then the head: SIGKILL to each ``ray start --block``'s process group, which holds every
    process the node started (its GCS, raylet, agents and workers: counted by their command lines, none outlives
    it). A test cluster has nothing to hand over: a SIGTERM first cost 2 s per node, 8 s after a lost node."""
    for proc in reversed(cluster.nodes):
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
