"""Skills that become available while the model works, through the real CLI: a package's own
`.claude/skills/` loads the first time the model reads a file in that package (a name the
root already has gets the folder as qualifier), and a skill with `paths:` is offered only once
a matching file is touched; either one's body then arrives through the Skill tool."""

from __future__ import annotations

from pathlib import Path

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import last_tool_result, make_project, run, text_of


def skill(folder: Path, name: str, description: str, body: str, extra: str = "") -> None:
    (folder / name).mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"
    (folder / name / "SKILL.md").write_text(text)


def request_text(body: dict[str, object]) -> str:
    return str(body["messages"]) + str(body.get("system", ""))


def test_nested_and_path_scoped_skills_arrive_with_the_files_they_concern(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    root_skills = project / ".claude" / "skills"
    skill(root_skills, "deploy", "Deploys the whole site.", "ROOT-DEPLOY-BODY")
    skill(
        root_skills,
        "migrations",
        "Writes database migrations safely.",
        "MIGRATIONS-BODY",
        "paths: db/**/*.sql\n",
    )
    web = project / "apps" / "web"
    skill(web / ".claude" / "skills", "deploy", "Deploys the web app.", "WEB-DEPLOY-BODY")
    skill(web / ".claude" / "skills", "storybook", "Runs the web app's stories.", "STORY-BODY")
    (web / "index.ts").write_text("export {}\n")
    (project / "db" / "m").mkdir(parents=True)
    (project / "db" / "m" / "001.sql").write_text("create table t (id int);\n")
    scenario = Scenario(
        turns=(
            turn(tool_use("Read", {"file_path": "build/out.o"})),
            turn(tool_use("Read", {"file_path": "apps/web/index.ts"})),
            turn(tool_use("Read", {"file_path": "db/m/001.sql"})),
            turn(tool_use("Skill", {"skill": "apps/web:deploy"})),
            turn(tool_use("Skill", {"skill": "migrations"})),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--allowedTools", "Read")
    assert result.returncode == 0, result.stderr
    first = request_text(bodies[0])
    # At start: the root's skills, not the package's, and not the path-scoped one.
    assert "Deploys the whole site." in first
    assert "Deploys the web app." not in first and "Writes database migrations" not in first
    assert "Runs the web app's stories." not in request_text(bodies[1])
    # Reading a file in the package brings its skills, once; the clashing name is qualified.
    package = text_of(last_tool_result(bodies[2])["content"])
    assert "- apps/web:deploy: Deploys the web app." in package
    assert "- storybook: Runs the web app's stories." in package
    assert "migrations" not in package
    # The path-scoped skill arrives with the first matching file.
    sql = text_of(last_tool_result(bodies[3])["content"])
    assert "- migrations: Writes database migrations safely." in sql
    assert "storybook" not in sql
    # And their bodies come through the Skill tool.
    assert "WEB-DEPLOY-BODY" in text_of(last_tool_result(bodies[4])["content"])
    assert "MIGRATIONS-BODY" in text_of(last_tool_result(bodies[5])["content"])
    assert "ROOT-DEPLOY-BODY" not in request_text(bodies[5])


def test_only_nested_skills_still_bring_the_skill_tool(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    web = project / "apps" / "web"
    skill(web / ".claude" / "skills", "storybook", "Runs the web app's stories.", "STORY-BODY")
    (web / "index.ts").write_text("export {}\n")
    ignored = project / "vendor" / "lib"
    skill(ignored / ".claude" / "skills", "vendored", "A vendored skill.", "VENDOR-BODY")
    (project / ".gitignore").write_text("vendor/\n")
    scenario = Scenario(
        turns=(
            turn(tool_use("Read", {"file_path": "apps/web/index.ts"})),
            turn(tool_use("Skill", {"skill": "storybook"})),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--allowedTools", "Read")
    assert result.returncode == 0, result.stderr
    # No skill at the root, yet the tool is there from the start for the one in the package.
    assert "Skill" in [tool["name"] for tool in bodies[0]["tools"]]
    assert "Runs the web app's stories." not in request_text(bodies[0])
    assert "- storybook: Runs the web app's stories." in text_of(
        last_tool_result(bodies[1])["content"]
    )
    assert "STORY-BODY" in text_of(last_tool_result(bodies[2])["content"])


def test_no_skill_anywhere_means_no_skill_tool(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    ignored = project / "vendor" / "lib"
    skill(ignored / ".claude" / "skills", "vendored", "A vendored skill.", "VENDOR-BODY")
    (project / ".gitignore").write_text("vendor/\n")  # git ignores it: not searched
    result, bodies = run(project, tmp_path, Scenario(turns=(turn("Hi."),)))
    assert result.returncode == 0, result.stderr
    assert "Skill" not in [tool["name"] for tool in bodies[0]["tools"]]
