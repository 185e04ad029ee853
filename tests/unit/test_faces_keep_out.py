"""No face rewrites a session's seams (docs/architecture.md, invariant 11). The faces — every
package in the layers above the front door in pyproject's layers contract — and the slash
commands they run drive a session through `codeloop.frontdoor.Conversation`, which alone wires
the seams: no assignment to the loop's dependencies (`deps`), the permission policy's fields
(the mode, who is asked), the question channel or the stream switch (`stream_events`),
however the object is reached (`session.config.policy.mode = …`, `policy = …; policy.mode =
…`, `setattr(policy, …)`). Checked on the code: a face that sets them behaves the same until it
bypasses what the front door does on the way (a mode it validates, a responder it wires once)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

import codeloop

ROOT = Path(codeloop.__file__).parent
PYPROJECT = ROOT.parents[1] / "pyproject.toml"
SEAMS = frozenset({"deps", "policy", "questions", "stream_events"})


def drivers() -> list[str]:
    """The layers above `frontdoor` in the layers contract, and the slash commands."""
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    (layers,) = [
        c["layers"]
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and c.get("containers") == ["codeloop"]
    ]
    above = layers[: layers.index("frontdoor")]
    return [*(name.strip() for layer in above for name in layer.split(":")), "commands"]


def files_of(module: str) -> list[Path]:
    path = ROOT.joinpath(*module.split("."))
    if path.is_dir():
        return sorted(path.rglob("*.py"))
    return [path.with_suffix(".py")] if path.with_suffix(".py").exists() else []


def _names(node: ast.expr) -> set[str]:
    """The names along an attribute chain: `self.session.config.policy` → all four."""
    names = set()
    while isinstance(node, ast.Attribute):
        names.add(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.add(node.id)
    return names


def seam_assignments(source: str) -> list[int]:
    """The lines of `source` that set something on a seam."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            names = _names(node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and len(node.args) >= 2
        ):
            field = node.args[1]  # the attribute's name, when it is written out
            names = _names(node.args[0]) | {str(getattr(field, "value", ""))}
        else:
            continue
        if SEAMS & names:
            lines.append(node.lineno)
    return lines


def test_the_drivers_are_found() -> None:
    found = drivers()
    assert {"cli", "api", "batch", "commands"} <= set(found)
    assert all(files_of(module) for module in found), found


@pytest.mark.parametrize("module", drivers())
def test_no_driver_sets_the_session_s_seams(module: str) -> None:
    found = {
        f"{path.relative_to(ROOT)}:{line}": path.read_text().splitlines()[line - 1].strip()
        for path in files_of(module)
        for line in seam_assignments(path.read_text(encoding="utf-8"))
    }
    assert found == {}


@pytest.mark.parametrize(
    "code",
    [
        "session.config.policy.ask_user = ask",
        "policy = session.config.policy\npolicy.mode = 'plan'",
        "session.deps = replace(session.deps, call_model=tap)",
        "session.questions.ask = ask",
        "self.session.stream_events = True",
        "self.session.config.policy.mode += ''",
        "a, session.config.policy.mode = 1, 'plan'",
        "setattr(session.config.policy, 'mode', 'plan')",
        "setattr(session, 'deps', deps)",
    ],
)
def test_every_way_of_setting_a_seam_is_seen(code: str) -> None:
    assert seam_assignments(code)


@pytest.mark.parametrize(
    "code",
    [
        "mode = session.config.policy.mode",
        "conversation.set_mode('plan')",
        "self.dialog = PermissionDialog(request)",
        "session.config.policy.remove_rule(kind, rule)",
        "self.session_id = session.session_id",
    ],
)
def test_reading_a_seam_or_calling_it_is_no_assignment(code: str) -> None:
    assert seam_assignments(code) == []
