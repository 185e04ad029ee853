"""Memory files: discovery from the user dirs and the repository down to cwd, @imports."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codeloop.context.memory import (
    MAX_IMPORT_DEPTH,
    Memory,
    find_imports,
    load_memory,
    user_context_message,
)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A HOME and a git repository with a nested working directory."""
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    (home / ".claude").mkdir(parents=True)
    (repo / "pkg" / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return home, repo, {"HOME": str(home)}


def names(memory: Memory, root: Path) -> list[str]:
    return [str(f.path.relative_to(root)) for f in memory.files]


def test_reading_order_user_then_root_down_to_cwd(
    layout: tuple[Path, Path, dict[str, str]],
) -> None:
    home, repo, env = layout
    env["CODELOOP_HOME"] = str(home / "cl")
    (home / "cl").mkdir()
    files = {
        home / ".claude" / "CLAUDE.md": "user claude",
        home / "cl" / "AGENTS.md": "user codeloop agents",
        repo / "CLAUDE.md": "root claude",
        repo / "AGENTS.md": "root agents",
        repo / "CLAUDE.local.md": "root local",
        repo / "pkg" / ".claude" / "CLAUDE.md": "pkg dot-claude",
        repo / "pkg" / "sub" / "CLAUDE.md": "sub claude",
        repo.parent / "CLAUDE.md": "above the repository: not read",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    memory = load_memory(repo / "pkg" / "sub", env=env)
    assert [f.content.strip() for f in memory.files] == [
        "user claude",
        "user codeloop agents",
        "root claude",
        "root agents",
        "root local",
        "pkg dot-claude",
        "sub claude",
    ]
    assert [f.kind for f in memory.files] == [
        "user",
        "user",
        "project",
        "project",
        "local",
        "project",
        "project",
    ]
    assert memory.warnings == ()


def test_outside_a_repository_only_cwd_is_read(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("parent")
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("here")
    memory = load_memory(cwd, env={"HOME": str(tmp_path / "nohome")})
    assert [f.content for f in memory.files] == ["here"]


def test_imports_relative_home_and_absolute(layout: tuple[Path, Path, dict[str, str]]) -> None:
    home, repo, env = layout
    (repo / "docs").mkdir()
    (repo / "docs" / "style.md").write_text("style guide, which also says @../notes/more.md\n")
    (repo / "notes").mkdir()
    (repo / "notes" / "more.md").write_text("more notes\n")
    (home / "personal.md").write_text("personal prefs\n")
    (repo / "abs.md").write_text("absolute import\n")
    (repo / "CLAUDE.md").write_text(
        f"See @docs/style.md and @~/personal.md.\nAlso @{repo / 'abs.md'}\n"
        "Ask @someone, mail me@example.com, see @missing.md\n"
    )
    memory = load_memory(repo, env=env)
    assert names(memory, repo.parent) == [
        "repo/CLAUDE.md",
        "repo/docs/style.md",
        "repo/notes/more.md",
        "home/personal.md",
        "repo/abs.md",
    ]
    imported = memory.files[1]
    assert imported.imported_from == repo / "CLAUDE.md" and imported.kind == "project"


def test_each_file_once_claude_importing_agents_and_cycles(
    layout: tuple[Path, Path, dict[str, str]],
) -> None:
    _, repo, env = layout
    (repo / "CLAUDE.md").write_text("@AGENTS.md\n")
    (repo / "AGENTS.md").write_text("shared rules; see @extra.md\n")
    (repo / "extra.md").write_text("extra, which points back to @AGENTS.md\n")
    memory = load_memory(repo, env=env)
    assert names(memory, repo) == ["CLAUDE.md", "AGENTS.md", "extra.md"]
    (warning,) = memory.warnings
    assert "imports a file that imports it back" in warning
    assert memory.text().count("shared rules") == 1


def test_symlinked_agents_md_is_read_once(layout: tuple[Path, Path, dict[str, str]]) -> None:
    _, repo, env = layout
    (repo / "AGENTS.md").write_text("the rules\n")
    (repo / "CLAUDE.md").symlink_to(repo / "AGENTS.md")
    memory = load_memory(repo, env=env)
    assert len(memory.files) == 1
    assert memory.text().count("the rules") == 1


def test_import_depth_is_limited(layout: tuple[Path, Path, dict[str, str]]) -> None:
    _, repo, env = layout
    chain = MAX_IMPORT_DEPTH + 2
    (repo / "CLAUDE.md").write_text("@d1.md\n")
    for i in range(1, chain + 1):
        (repo / f"d{i}.md").write_text(f"level {i} @d{i + 1}.md\n")
    memory = load_memory(repo, env=env)
    assert names(memory, repo) == ["CLAUDE.md", *(f"d{i}.md" for i in range(1, 6))]
    (warning,) = memory.warnings
    assert f"deeper than {MAX_IMPORT_DEPTH}" in warning


def test_imports_inside_code_are_ignored() -> None:
    text = (
        "Use @real.md and `@in-span.md` and ``a `@double.md` span``.\n"
        "```bash\n@in-fence.md\n``\n```python\nstill fenced @in-fence2.md\n````\n"
        "~~~\n@tilde.md\n~~~\n"
        "after @after.md, escaped @my\\ file.md#section\n"
        "email a@b.com and @#nope and @/\n"
    )
    assert find_imports(text) == ["real.md", "after.md,", "my file.md"]


def test_binary_and_empty_files_are_skipped(layout: tuple[Path, Path, dict[str, str]]) -> None:
    _, repo, env = layout
    (repo / "CLAUDE.md").write_bytes(b"\x00\x01binary")
    (repo / "AGENTS.md").write_text("  \n")
    memory = load_memory(repo, env=env)
    assert memory.files == ()
    assert "not a text file" in memory.warnings[0]


def test_user_context_message(layout: tuple[Path, Path, dict[str, str]]) -> None:
    _, repo, env = layout
    assert user_context_message(load_memory(repo, env=env)) is None
    (repo / "CLAUDE.md").write_text("Always run `make check`.\n")
    message = user_context_message(load_memory(repo, env=env))
    assert message is not None and message.role == "user" and message.is_meta
    text = message.text
    assert text.startswith("<system-reminder>\n") and text.endswith("\n</system-reminder>")
    assert f"Contents of {repo / 'CLAUDE.md'} (project instructions" in text
    assert "Always run `make check`." in text
    again = user_context_message(load_memory(repo, env=env))
    assert again is not None and again.text == text
