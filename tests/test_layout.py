"""The layout holds: imports run one way (jobs -> connectors -> audit) and no module imports itself back."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("audit", "connectors", "jobs")
ALLOWED = {"audit": {"audit"}, "connectors": {"audit", "connectors"}, "jobs": {"audit", "connectors", "jobs"}}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imports(path: Path, known: set[str]) -> set[str]:
    """Every project module a file imports, at module level or inside functions (lazy imports count)."""
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out |= {n for n in names if n.split(".")[0] in PACKAGES}
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: {i for i in imports(path, known) if i in known and i != name} for name, path in mods.items()}


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
    assert "audit.geo.lexicon" in g["connectors.lexicon"]
    assert "jobs.common.shards" in g["jobs.geo.run"]
    assert len(g) > 100
