"""The code stays readable: no function in the package is over 120 lines, and the loop's own
body reads as its lifecycle (under 60 lines; its phases are functions of their own)."""

from __future__ import annotations

import ast
from pathlib import Path

import codeloop

ROOT = Path(codeloop.__file__).parent
MAX_FUNCTION_LINES = 120


def functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", node))
    return found


def length(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def test_no_function_is_over_120_lines() -> None:
    long = {name: length(node) for name, node in functions() if length(node) > MAX_FUNCTION_LINES}
    assert long == {}


def test_the_loop_body_is_short() -> None:
    (loop,) = [
        node
        for name, node in functions()
        if name.startswith("loop.py") and node.name == "query_loop"
    ]
    body = loop.body[1:] if ast.get_docstring(loop) else loop.body
    assert body[-1].end_lineno is not None
    assert body[-1].end_lineno - body[0].lineno + 1 < 60
