"""The slash-command registry and what it shares between frontends: parsing, providers,
custom command expansion, @-mentions."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from codeloop.commands import Command, Registry, Submit, default_registry, parse
from codeloop.commands.mentions import attach, mentioned_paths
from codeloop.types import ImageBlock, TextBlock

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("/help", ("help", "")),
        ("/compact keep the API notes", ("compact", "keep the API notes")),
        ("/frontend:component Button", ("frontend:component", "Button")),
        ("/review\nthe second line", ("review", "the second line")),
        ("/etc/hosts is broken", None),
        ("no command", None),
        ("/", None),
    ],
)
def test_parse(text: str, parsed: tuple[str, str] | None) -> None:
    assert parse(text) == parsed


async def _nothing(ctx: object, args: str) -> Submit | None:
    return None


def test_a_provided_command_never_hides_a_built_in() -> None:
    registry = Registry()
    registry.add(Command("help", "built-in help", _nothing))
    registry.add_provider(
        lambda session: [
            Command("help", "a custom help", _nothing, source="project"),
            Command("mcp__srv__prompt", "an MCP prompt", _nothing, source="mcp"),
        ]
    )
    names = [(c.name, c.source) for c in registry.commands(session=object())]  # type: ignore[arg-type]
    assert names == [("help", "built-in"), ("mcp__srv__prompt", "mcp")]
    assert registry.find(object(), "HELP").description == "built-in help"  # type: ignore[arg-type,union-attr]
    assert registry.commands(None) == [registry.builtins["help"]]


def test_the_default_registry_has_the_issue_s_commands() -> None:
    names = {c.name for c in default_registry().commands(None)}
    assert {
        "help",
        "clear",
        "compact",
        "context",
        "cost",
        "model",
        "resume",
        "permissions",
        "memory",
        "init",
        "status",
        "exit",
    } <= names


def test_mentions_attach_files_folders_and_images(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("remember me\n")
    (tmp_path / "pic.png").write_bytes(PNG)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("a")
    text = "look at @notes.md, @pic.png and @sub — mail me@example.com or @missing.txt"
    assert mentioned_paths(text, tmp_path) == [
        tmp_path / "notes.md",
        tmp_path / "pic.png",
        tmp_path / "sub",
    ]
    attached = attach(text, tmp_path)
    note, image, folder = attached.blocks
    assert isinstance(note, TextBlock) and "remember me" in note.text and "notes.md" in note.text
    assert isinstance(image, ImageBlock) and image.media_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    assert isinstance(folder, TextBlock) and "a.txt" in folder.text
    assert attached.notes == ()


def test_a_binary_or_huge_mention_is_named_not_attached(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" * 100)
    (tmp_path / "big.txt").write_text("x" * 300_000)
    attached = attach("@blob.bin @big.txt", tmp_path)
    assert attached.blocks == ()
    assert [n.split(":")[0] for n in attached.notes] == ["@blob.bin", "@big.txt"]
