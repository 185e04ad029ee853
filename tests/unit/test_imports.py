"""No import cycle anywhere in the package, with every import counted: lazy ones (inside
functions) and those under `if TYPE_CHECKING:` too.

Read from the source, not from `sys.modules`, so that an import a code path has not run yet
counts too. A type-only import never runs, but it still says one module needs the other: a
cycle through one is two modules that cannot be understood, or moved, apart. Importing
`a.b.c` also runs the packages `a` and `a.b`, so those count as edges as well.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import codeloop

ROOT = Path(codeloop.__file__).parent


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(node: ast.AST, package: list[str]) -> Iterator[str]:
    """Every module name an import statement under `node` names, at any depth."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = package[: len(package) - node.level + 1] if node.level else []
        module = ".".join([*base, *([node.module] if node.module else [])])
        yield module
        yield from (f"{module}.{alias.name}" for alias in node.names)
    for child in ast.iter_child_nodes(node):
        yield from _imported(child, package)


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges: set[str] = set()
        for target in _imported(ast.parse(path.read_text(encoding="utf-8")), package):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in known and prefix != name and not name.startswith(prefix + "."):
                    edges.add(prefix)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_walk_sees_lazy_and_type_only_imports_and_finds_a_cycle() -> None:
    graph = import_graph()
    assert "codeloop.models.local" in graph["codeloop.models.factory"]  # imported in a function
    assert "codeloop.mcp.agent_servers" in graph["codeloop.subagents"]  # if TYPE_CHECKING
    looped = {**graph, "codeloop.models.local": {"codeloop.models.factory"}}
    assert ["codeloop.models.factory", "codeloop.models.local"] in cycles(looped)
