"""The layout holds: imports run one way (jobs -> connectors -> audit) and no module imports itself back."""
from __future__ import annotations

import functools
from pathlib import Path

from connectors.runs.code_graph import import_graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("audit", "connectors", "jobs")
ALLOWED = {"audit": {"audit"}, "connectors": {"audit", "connectors"}, "jobs": {"audit", "connectors", "jobs"}}


@functools.cache
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT, PACKAGES)


def test_imports_run_one_way():
    wrong = [f"{m} imports {i}" for m, deps in graph().items() for i in deps if i.split(".")[0] not in ALLOWED[m.split(".")[0]]]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_the_graph_is_real():
    """The checks above would pass on an empty graph: make sure they see the edges that exist."""
    g = graph()
    assert "connectors.benchmarks.schema" in g["connectors.benchmarks.formats"]
    assert "audit.geo.lexicon" in g["connectors.geo.lexicon"]
    assert "jobs.common.runtime.shards" in g["jobs.geo.run"]
    assert len(g) > 100


def _package(module: str, depth: int = 2) -> str:
    return ".".join(module.split(".")[:depth])


def test_no_job_package_imports_another():
    """A job package wires its own audit; what two jobs share lives in jobs.common (the CLI finds the
    others through the registry, by name)."""
    wrong = [f"{m} imports {i}" for m, deps in graph().items() if m.startswith("jobs.") and m != "jobs.cli"
             for i in deps if i.startswith("jobs.") and _package(i) not in (_package(m), "jobs.common")]
    assert not wrong, "\n".join(wrong)


# Which audits' science a connector group may import: the audits it feeds (audit.stats and the
# multiple-choice core serve everyone that needs them). Groups not listed import no audit module.
SERVES = {
    "connectors.geo": {"audit.geo"}, "connectors.landscape": {"audit.landscape", "audit.mcqa"},
    "connectors.contamination": {"audit.contamination"}, "connectors.coreset": {"audit.coreset"},
    "connectors.traces": {"audit.traces", "audit.coreset"}, "connectors.scorers": {"audit.scorers"},
    "connectors.docs": {"audit.docs"}, "connectors.models": {"audit.mcqa"},
}
SHARED_AUDIT = {"audit.stats", "audit.safe_yaml"}  # the one YAML loader (no aliases) every reader shares


def test_no_connector_imports_an_audit_it_does_not_serve():
    wrong = []
    for m, deps in graph().items():
        if not m.startswith("connectors."):
            continue
        allowed = SERVES.get(_package(m), set()) | SHARED_AUDIT
        wrong += [f"{m} imports {i}" for i in deps if i.startswith("audit.") and _package(i) not in allowed]
    assert not wrong, "\n".join(wrong)


def test_the_rules_see_the_graph():
    """Each rule above has an edge it checks and allows, so an empty graph could not pass them."""
    g = graph()
    assert "audit.mcqa.prompt" in g["connectors.models.batches"] and "jobs.common.runtime.shards" in g["jobs.geo.run"]
