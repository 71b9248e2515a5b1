"""The project's own import graph, read from the source files (no import is executed).

Two users: the run store hashes the code a job can reach (``code_version``), and the layout test
checks that imports run one way without cycles. Both need the same answer to "which project
modules does this file import", lazy imports inside functions included.
"""
from __future__ import annotations

import ast
from pathlib import Path

PROJECT_PACKAGES = ("audit", "connectors", "jobs")


def module_files(root: Path, packages: tuple[str, ...] = PROJECT_PACKAGES) -> dict[str, Path]:
    """Dotted module name → source file, for every module of ``packages`` under ``root``."""
    out = {}
    for pkg in packages:
        for p in (root / pkg).rglob("*.py"):
            parts = list(p.relative_to(root).with_suffix("").parts)
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def module_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The ``known`` modules ``path`` imports, at module level or inside functions; an imported
    name resolves to the module that defines it (``jobs.common.cli.config.Flag`` → ``jobs.common.cli.config``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(head + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for n in names:
            while n and n not in known:
                n = n.rpartition(".")[0]
            if n:
                found.add(n)
    return found


def import_graph(root: Path, packages: tuple[str, ...] = PROJECT_PACKAGES) -> dict[str, set[str]]:
    """Each module → the other project modules it imports."""
    files = module_files(root, packages)
    known = set(files)
    return {name: module_imports(name, path, known) - {name} for name, path in files.items()}
