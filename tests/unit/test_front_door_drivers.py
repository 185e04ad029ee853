"""What drives a session through the front door (frontdoor.Conversation) leaves the session's
seams to it: no assignment to the loop's dependencies (`deps`), to the permission policy's
fields (the mode, who is asked) or to the question channel, however the object is reached
(`session.config.policy.mode = …`, `policy = …; policy.mode = …`, `setattr(policy, …)`).
Checked on the code, since a face that sets them behaves the same until it bypasses what the
front door does on the way (a mode it validates, a responder it wires once)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import codeloop

ROOT = Path(codeloop.__file__).parent
# The packages that drive a session through the front door (the other faces join as they move).
DRIVERS = ("cli/tui", "commands")
SEAMS = frozenset({"deps", "policy", "questions"})


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


@pytest.mark.parametrize("package", DRIVERS)
def test_no_driver_sets_the_session_s_seams(package: str) -> None:
    found = {
        f"{path.relative_to(ROOT)}:{line}": path.read_text().splitlines()[line - 1].strip()
        for path in sorted((ROOT / package).rglob("*.py"))
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
    ],
)
def test_reading_a_seam_or_calling_it_is_no_assignment(code: str) -> None:
    assert seam_assignments(code) == []
