"""Frontmatter as real files write it: valid YAML, and the hand-written kind YAML rejects."""

from __future__ import annotations

from codeloop.extensions.frontmatter import flag, name_list, parse


def test_yaml_frontmatter_and_body() -> None:
    doc = parse("---\nname: reviewer\ntools: [Read, Grep]\n---\n\nYou review code.\n")
    assert doc.meta == {"name": "reviewer", "tools": ["Read", "Grep"]}
    assert doc.body == "You review code.\n" and doc.problem is None


def test_unquoted_colons_fall_back_to_lines() -> None:
    text = (
        "---\n"
        "name: code-reviewer\n"
        "description: Use this agent when: the user asks for a review. Examples: <example>\n"
        "  Context: a PR</example>\n"
        "tools: Read, Grep, Bash(git diff:*)\n"
        "skills:\n  - api-conventions\n  - testing\n"
        "---\n"
        "Body\n"
    )
    doc = parse(text)
    assert doc.problem is not None and "line by line" in doc.problem
    assert doc.meta["name"] == "code-reviewer"
    assert doc.meta["description"].startswith("Use this agent when: the user asks")
    assert doc.meta["description"].endswith("Context: a PR</example>")
    assert name_list(doc.meta["tools"]) == ["Read", "Grep", "Bash(git diff:*)"]
    assert doc.meta["skills"] == ["api-conventions", "testing"]


def test_no_frontmatter_and_unclosed_frontmatter() -> None:
    assert parse("# Just markdown\n").meta == {}
    unclosed = parse("---\nname: x\nno end\n")
    assert unclosed.meta == {} and unclosed.problem


def test_flags_and_lists() -> None:
    assert flag({"a": "Yes"}, "a") and flag({"a": 1}, "a") and not flag({"a": "off"}, "a")
    assert flag({}, "a", default=True)
    assert name_list(None) is None
    assert name_list("Read Grep,Glob") == ["Read", "Grep", "Glob"]
    assert name_list(["Bash(git add *)", "Edit"]) == ["Bash(git add *)", "Edit"]


def test_examples_in_an_unquoted_description_stay_in_it() -> None:
    """Claude Code's own plugins write agent descriptions like this; YAML rejects them."""
    text = (
        "---\n"
        "name: agent-creator\n"
        'description: Use this agent when the user asks to "create an agent". Trigger when:\n'
        "\n"
        "<example>\n"
        "Context: User wants an agent\n"
        'user: "Create an agent that reviews code"\n'
        'assistant: "I\'ll use the agent-creator agent."\n'
        "</example>\n"
        "model: sonnet\n"
        'tools: ["Write", "Read"]\n'
        "---\n"
        "You create agents.\n"
    )
    meta = parse(text).meta
    assert set(meta) == {"name", "description", "model", "tools"}
    assert meta["description"].startswith('Use this agent when the user asks to "create')
    assert '\nContext: User wants an agent\nuser: "Create' in meta["description"]
    assert meta["description"].endswith("</example>")
    assert meta["tools"] == ["Write", "Read"] and meta["model"] == "sonnet"
