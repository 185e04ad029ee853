"""The LSP tool reads the file it is given: it needs no permission in the default mode, and
the Read rules that guard a file guard it from LSP too."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeloop.permissions.policy import Policy
from codeloop.tools.lsp_tool import LspTool
from codeloop.workspace.tool_workspace import Workspace


def decide(tmp_path: Path, file_path: str, *deny: str) -> str:
    tool = LspTool()
    args = tool.parse({"operation": "hover", "filePath": file_path, "line": 1, "character": 1})
    policy = Policy("default", disallowed=deny, roots=[tmp_path], home=tmp_path / "home")
    return policy.decide(tool, args, Workspace(tmp_path)).behavior


def test_lsp_runs_without_asking_in_the_default_mode(tmp_path: Path) -> None:
    assert decide(tmp_path, "pkg/shapes.py") == "allow"


@pytest.mark.parametrize("rule", ["Read(./secret/**)", "Read(//{root}/secret/keys.py)", "LSP"])
def test_a_read_deny_rule_or_an_lsp_rule_stops_it(tmp_path: Path, rule: str) -> None:
    denied = rule.format(root=str(tmp_path).lstrip("/"))
    assert decide(tmp_path, "secret/keys.py", denied) == "deny"
    assert decide(tmp_path, "pkg/shapes.py", denied) == ("deny" if rule == "LSP" else "allow")
