"""Output styles change the system prompt as in Claude Code: a custom style from
.claude/output-styles replaces the coding instructions unless it keeps them; built-ins keep
them; an unknown style is named, not silently ignored."""

from __future__ import annotations

import json
from pathlib import Path

from codeloop.context.system_prompt import STATIC_PROMPT
from codeloop.testing.scenario import Scenario, turn
from tests.e2e.test_claude_compat import make_project, run, settings

HOW_TO_WORK = "How to work:"


def system_of(body: dict[str, object]) -> str:
    return json.dumps(body["system"])


def test_custom_and_built_in_styles(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    styles = project / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "poet.md").write_text(
        "---\nname: Poet\ndescription: Answers in verse\n---\nPOET-STYLE: answer in rhyme.\n"
    )
    settings(project, {"outputStyle": "Poet"})
    scenario = Scenario(turns=(turn("A rhyme."),))
    result, bodies = run(project, tmp_path, scenario, "--output-format", "stream-json", "--verbose")
    assert result.returncode == 0, result.stderr
    assert "POET-STYLE" in system_of(bodies[0]) and HOW_TO_WORK not in system_of(bodies[0])
    assert result.json_lines()[0]["output_style"] == "Poet"

    settings(project, {"outputStyle": "Explanatory"})
    result, bodies = run(project, tmp_path, scenario)
    assert "Insight" in system_of(bodies[0]) and HOW_TO_WORK in system_of(bodies[0])
    assert HOW_TO_WORK in STATIC_PROMPT

    settings(project, {"outputStyle": "nonexistent"})
    result, bodies = run(project, tmp_path, scenario)
    assert result.returncode == 0 and "outputStyle 'nonexistent' is not a style" in result.stderr
