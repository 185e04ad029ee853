"""No face rewrites a session's seams (docs/architecture.md, invariant 11): the faces — every
package in the layers above the front door in pyproject's layers contract — drive a session
through `codeloop.frontdoor.Conversation` and never assign its dependencies (`.deps`), its
permission policy's fields (`….policy.<field>`), its question channel (`.questions.ask`) or
its stream switch (`.stream_events`). The front door is the one place that wires them."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "codeloop"


def face_modules() -> list[str]:
    """The layers above `frontdoor` in the layers contract, as dotted module names."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [
        c["layers"]
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and c.get("containers") == ["codeloop"]
    ]
    above = layers[: layers.index("frontdoor")]
    return [name.strip() for layer in above for name in layer.split(":")]


def files_of(module: str) -> list[Path]:
    path = SOURCE.joinpath(*module.split("."))
    if path.is_dir():
        return sorted(path.rglob("*.py"))
    return [path.with_suffix(".py")] if path.with_suffix(".py").exists() else []


def chain(node: ast.expr) -> list[str]:
    """`a.b.c` as ["a", "b", "c"] (calls and subscripts end the chain)."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def seam_assignments(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if not isinstance(target, ast.Attribute):
                continue
            names = chain(target)
            dotted = ".".join(names)
            if (
                names[-1] in ("deps", "stream_events")
                or "policy" in names[:-1]
                or names[-2:] == ["questions", "ask"]
            ):
                yield node.lineno, dotted


def test_the_faces_are_found() -> None:
    faces = face_modules()
    assert {"cli", "api", "batch"} <= set(faces)
    assert all(files_of(face) for face in faces), faces


def test_no_face_assigns_a_seam_of_the_session() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {target} = …"
        for face in face_modules()
        for path in files_of(face)
        for line, target in seam_assignments(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def test_the_check_sees_what_it_forbids() -> None:
    source = (
        "session.deps = x\n"
        "session.config.policy.ask_user = f\n"
        "policy.mode = 'plan'\n"
        "session.questions.ask = g\n"
        "self.session.stream_events = True\n"
        "self.session_id = s\n"
    )
    assert [target for _, target in seam_assignments(ast.parse(source))] == [
        "session.deps",
        "session.config.policy.ask_user",
        "policy.mode",
        "session.questions.ask",
        "self.session.stream_events",
    ]
