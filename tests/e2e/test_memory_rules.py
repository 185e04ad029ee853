"""Rules and nested memory through the real CLI: always-on rules reach the first request,
`paths:` rules and a subfolder's CLAUDE.md only once the model reads a file they concern."""

from __future__ import annotations

import json
from pathlib import Path

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import last_tool_result, make_project, run, script, settings
from tests.e2e.test_claude_compat import text_of as text


def rules_project(tmp_path: Path) -> Path:
    project = make_project(tmp_path)
    rules = project / ".claude" / "rules"
    (rules / "backend").mkdir(parents=True)
    (rules / "style.md").write_text(
        "STYLE-11: use four spaces.\n<!-- maintainers: keep short -->\n"
    )
    (rules / "backend" / "api.md").write_text(
        '---\npaths:\n  - "src/api/**/*.py"\n---\n\nAPI-22: validate every input.\n'
    )
    (rules / "tests.md").write_text("---\npaths: tests/**/*.{py,txt}\n---\nTESTS-33: use pytest.\n")
    (project / "src" / "api").mkdir(parents=True)
    (project / "src" / "api" / "handlers.py").write_text("def handle():\n    pass\n")
    (project / "pkg").mkdir()
    (project / "pkg" / "CLAUDE.md").write_text("PKG-44: this package is frozen.\n")
    (project / "pkg" / "mod.py").write_text("X = 1\n")
    user_rules = tmp_path / "home" / ".claude" / "rules"
    user_rules.mkdir(parents=True)
    (user_rules / "me.md").write_text("USER-55: answer briefly.\n")
    return project


def test_rules_load_at_start_or_when_a_matching_file_is_read(tmp_path: Path) -> None:
    project = rules_project(tmp_path)
    logger = script(
        project,
        "log.py",
        'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "loaded.jsonl"), "a") as f:\n'
        "    f.write(json.dumps(payload) + '\\n')\n",
    )
    settings(
        project,
        {"hooks": {"InstructionsLoaded": [{"hooks": [{"type": "command", "command": logger}]}]}},
    )
    scenario = Scenario(
        turns=(
            turn(tool_use("Read", {"file_path": "src/api/handlers.py"})),
            turn(tool_use("Read", {"file_path": str(project / "src" / "api" / "handlers.py")})),
            turn(tool_use("Read", {"file_path": "pkg/mod.py"})),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "stream-json", "--verbose")
    assert result.returncode == 0, result.stderr
    first = json.dumps(bodies[0])
    assert "STYLE-11" in first and "USER-55" in first
    assert "maintainers" not in first  # HTML comments are for people
    assert "API-22" not in first and "PKG-44" not in first and "TESTS-33" not in first
    # Reading a file under src/api brings the API rule, next to the file, once.
    assert "API-22" in text(last_tool_result(bodies[1])["content"])
    assert "API-22" not in text(last_tool_result(bodies[2])["content"])
    assert json.dumps(bodies[3]).count("API-22") == 1
    # The subfolder's CLAUDE.md arrives with the first file read there.
    assert "PKG-44" in text(last_tool_result(bodies[3])["content"])
    assert "TESTS-33" not in json.dumps(bodies[-1])

    init = result.json_lines()[0]
    loaded = {Path(f["path"]).name for f in init["memory_files"]}
    assert {"CLAUDE.md", "style.md", "me.md"} <= loaded and "api.md" not in loaded
    events = [json.loads(line) for line in (project / "loaded.jsonl").read_text().splitlines()]
    reasons = {e["file_path"]: e["load_reason"] for e in events}
    rules = project / ".claude" / "rules"
    assert reasons[str(rules / "style.md")] == "session_start"
    assert reasons[str(project / "docs" / "rules.md")] == "include"  # CLAUDE.md imports it
    assert reasons[str(rules / "backend" / "api.md")] == "path_glob_match"
    assert reasons[str(project / "CLAUDE.md")] == "session_start"
    api = next(e for e in events if e["file_path"].endswith("api.md"))
    assert api["globs"] == ["src/api/**/*.py"]
    assert api["trigger_file_path"] == str(project / "src" / "api" / "handlers.py")
    nested = next(e for e in events if e["load_reason"] == "nested_traversal")
    assert nested["file_path"] == str(project / "pkg" / "CLAUDE.md")


def test_claude_md_excludes_skip_files(tmp_path: Path) -> None:
    project = rules_project(tmp_path)
    settings(project, {"claudeMdExcludes": ["**/rules/style.md"]})
    result, bodies = run(project, tmp_path, Scenario(turns=(turn("ok"),)))
    assert result.returncode == 0, result.stderr
    assert "STYLE-11" not in json.dumps(bodies[0]) and "USER-55" in json.dumps(bodies[0])
