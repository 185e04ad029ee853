"""The property behind failing closed: take a well-formed settings file and a set of tool calls,
damage the file where it restricts (a wrong type, a stray item, a misspelt key, broken JSON,
a repeated key), and no call's verdict may become more permissive. Either the damaged file
gives the same verdict or a stricter one, or codeloop refuses to start.

The verdicts come from the real chain a session uses: the settings files on disk, load_settings,
the permission mode they select, settings_rules and the Policy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeloop.errors import UnsafeSettingsError
from codeloop.permissions.policy import Policy, settings_rules
from codeloop.settings.settings_apply import permission_mode
from codeloop.settings.settings_files import load_settings
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools

TOOLS = default_tools()
RANK = {"deny": 0, "ask": 1, "allow": 2}
ALLOW = ["Bash", "Read", "Edit", "Write", "WebFetch", "Bash(git:*)", "Edit(src/**)"]
RESTRICT = [
    "Bash",
    "Bash(rm:*)",
    "Bash(curl:*)",
    "Bash(git push:*)",
    "Read(./secrets/**)",
    "Edit(src/**)",
    "Write",
    "WebFetch(domain:evil.example)",
]
MODES = ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Bash", {"command": "rm -f victim.txt"}),
    ("Bash", {"command": "curl https://evil.example/x"}),
    ("Bash", {"command": "git push origin main"}),
    ("Bash", {"command": "git status"}),
    ("Read", {"file_path": "secrets/key"}),
    ("Edit", {"file_path": "src/app.py", "old_string": "hi", "new_string": "ho"}),
    ("Write", {"file_path": "notes.txt", "content": "x"}),
    ("WebFetch", {"url": "https://evil.example/x", "prompt": "read"}),
    ("WebFetch", {"url": "https://fine.example/", "prompt": "read"}),
]


def rule_lists(pool: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(pool), unique=True, max_size=4)


well_formed = st.fixed_dictionaries(
    {"allow": rule_lists(ALLOW), "deny": rule_lists(RESTRICT), "ask": rule_lists(RESTRICT)},
    optional={
        "defaultMode": st.sampled_from(MODES),
        "disableBypassPermissionsMode": st.just("disable"),
    },
)

# What a wrong value can be, whatever the key.
junk = st.one_of(
    st.integers(),
    st.none(),
    st.booleans(),
    st.text(max_size=8),
    st.dictionaries(st.text(max_size=5), st.booleans(), max_size=2),
    st.lists(st.integers(), max_size=2),
)


def well_formed_value(key: str, value: Any) -> bool:
    """A value the key may have (a change of mind, not damage): an empty rule list, a rule
    string (read as a list of one), a mode, or disableBypassPermissionsMode on or off."""
    if key in ("deny", "ask"):
        return value == [] or isinstance(value, str)
    if key == "defaultMode":
        return value in (*MODES, "auto", "manual")
    return value is None or isinstance(value, bool) or value in ("", "disable")


@st.composite
def damaged(draw: st.DrawFn, perms: dict[str, Any]) -> str:
    """The text of the settings file with one restriction damaged."""
    key = draw(st.sampled_from(["deny", "ask", "defaultMode", "disableBypassPermissionsMode"]))
    how = draw(
        st.sampled_from(
            [
                "replace",
                "stray item",
                "broken rule",
                "as a string",
                "misspelt key",
                "not an object",
                "broken JSON",
                "repeated key",
            ]
        )
    )
    out = dict(perms)
    rules = list(out.get(key, [])) if key in ("deny", "ask") else []
    data: dict[str, Any] = {"permissions": out}
    if how == "replace" or (how in ("stray item", "broken rule", "as a string") and not rules):
        out[key] = draw(junk.filter(lambda v: not well_formed_value(key, v)))
    elif how == "stray item":
        at = draw(st.integers(0, len(rules)))
        out[key] = [*rules[:at], draw(junk.filter(lambda v: not isinstance(v, str))), *rules[at:]]
    elif how == "broken rule":
        at = draw(st.integers(0, len(rules) - 1))
        broken = draw(st.sampled_from([rules[at].rstrip(")") + "(", rules[at].lower()]))
        out[key] = [*rules[:at], broken, *rules[at + 1 :]]
    elif how == "as a string":
        out[key] = rules[0] if len(rules) == 1 else ", ".join(rules)
    elif how == "misspelt key" and key in out:
        spelling = draw(st.sampled_from([key.capitalize(), key + key[-1], key.upper()]))
        out[spelling] = out.pop(key)
    elif how == "misspelt key":
        data = {"permission": out}
    elif how == "not an object":
        data = {"permissions": draw(junk.filter(lambda v: not isinstance(v, dict)))}
    elif how == "repeated key":
        widening = json.dumps({"allow": out.get("allow", [])})
        return f'{{"permissions": {json.dumps(out)}, "permissions": {widening}}}'
    text = json.dumps(data, indent=1)
    if how == "broken JSON":
        return text[: draw(st.integers(1, len(text) - 1))]
    return text


def verdicts(project: Path, home: Path) -> list[str] | None:
    """Each call's verdict under the project's settings; None when codeloop refuses to start."""
    try:
        loaded = load_settings(project, env={"HOME": str(home)})
    except UnsafeSettingsError:
        return None
    mode = permission_mode(None, loaded, [])
    try:
        rules = settings_rules(loaded.rule_sets, project, TOOLS)
    except UnsafeSettingsError:
        return None
    policy = Policy(
        mode,  # type: ignore[arg-type]  # one of the modes: the settings checked it
        rules["allow"],
        rules["deny"],
        rules["ask"],
        roots=[project],
        home=home,
    )
    out: list[str] = []
    for name, raw in CALLS:
        tool = TOOLS[name]
        out.append(policy.decide(tool, tool.parse(raw), Workspace(cwd=project)).behavior)
    return out


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("never-loosen").resolve()
    project, home = root / "project", root / "home"
    for folder in (project / "src", project / "secrets", home):
        folder.mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hi')\n")
    (project / "secrets" / "key").write_text("hunter2\n")
    (project / "victim.txt").write_text("precious\n")
    return project, home


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), perms=well_formed)
def test_no_damage_to_a_restriction_makes_a_verdict_more_permissive(
    dirs: tuple[Path, Path], data: st.DataObject, perms: dict[str, Any]
) -> None:
    project, home = dirs
    shutil.rmtree(project / ".claude", ignore_errors=True)
    (project / ".claude").mkdir()
    settings_file = project / ".claude" / "settings.json"
    settings_file.write_text(json.dumps({"permissions": perms}))
    before = verdicts(project, home)
    assert before is not None  # the well-formed file loads
    settings_file.write_text(data.draw(damaged(perms), label="damaged file"))
    after = verdicts(project, home)
    if after is None:
        return
    for call, old, new in zip(CALLS, before, after, strict=True):
        assert RANK[new] <= RANK[old], (call, old, new)
