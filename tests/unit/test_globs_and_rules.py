"""Path globs for rules and excludes, and rules folders read file by file."""

from __future__ import annotations

from pathlib import Path

from codeloop.context.globs import expand, matches
from codeloop.context.lazy_memory import InstructionTracker
from codeloop.context.memory import load_memory, strip_comments


def test_globs() -> None:
    assert matches(["**/*.ts"], "a/b/c.ts") and matches(["**/*.ts"], "c.ts")
    assert matches(["src/**/*"], "src/x/y.py") and not matches(["src/**/*"], "lib/y.py")
    assert matches(["*.md"], "README.md") and not matches(["*.md"], "docs/README.md")
    assert matches(["src/*.{ts,tsx}"], "src/a.tsx") and not matches(["src/*.{ts,tsx}"], "src/a.js")
    assert matches(["./lib/[ab].py"], "lib/a.py") and not matches(["lib/[ab].py"], "lib/c.py")
    assert not matches(["photos [2024/**"], "photos [2024/x")  # invalid: matches nothing
    assert len(expand(["{a,b}/{c,d}/*.{e,f}"])) == 8


def test_comments_are_stripped_outside_code() -> None:
    text = "keep <!-- drop --> this\n<!--\nmulti\n-->\n```\n<!-- in code -->\n```\n"
    assert strip_comments(text) == "keep  this\n\n```\n<!-- in code -->\n```\n"


def test_scoped_rules_wait_for_a_matching_file(tmp_path: Path) -> None:
    rules = tmp_path / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "py.md").write_text("---\npaths: ['**/*.py']\n---\nPY rule\n")
    (rules / "on.md").write_text("Always on\n")
    (rules / "bad.md").write_text("---\npaths: [\n---\nunparsable frontmatter\n")
    memory = load_memory(tmp_path, env={"HOME": str(tmp_path / "home")})
    assert [f.path.name for f in memory.files] == ["on.md"]
    (warning,) = memory.warnings
    assert "bad.md: frontmatter not valid YAML" in warning
    assert [r.path.name for r in memory.scoped] == ["bad.md", "py.md"]
    tracker = InstructionTracker(memory, tmp_path, tmp_path / "home")
    assert tracker.load_for(tmp_path / "notes.txt") == []
    (loaded,) = tracker.load_for(tmp_path / "pkg" / "m.py")
    assert loaded.content.strip() == "PY rule" and loaded.reason == "path_glob_match"
    assert tracker.load_for(tmp_path / "other.py") == []  # once per conversation
    assert tracker.fork().load_for(tmp_path / "x.py") == []  # a fork starts from here
