"""The layout holds: imports run one way (jobs -> connectors -> audit) and no module imports itself back."""
from __future__ import annotations

from pathlib import Path

from connectors.runs.code_graph import import_graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("audit", "connectors", "jobs")
ALLOWED = {"audit": {"audit"}, "connectors": {"audit", "connectors"}, "jobs": {"audit", "connectors", "jobs"}}


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
    assert "jobs.common.shards" in g["jobs.geo.run"]
    assert len(g) > 100
