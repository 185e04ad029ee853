"""A session that reads a different file every turn: issue 16's outside measurement.

The files are source-like, each with a unique first, middle and last line; between calls the
script thinks aloud (~1 KB, what only a summary can shrink). `last_read` finds, in a request
as a provider receives it, the newest tool result: what the model is shown of the file it just
read. Shared by the e2e tests and bench/context_fidelity.py.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from codeloop.testing.scenario import Turn, text, tool_use, turn

WORDS = ("parse", "token", "buffer", "window", "cache", "limit", "entry", "stream", "offset")


def write_file(path: Path, index: int, size: int, rng: random.Random) -> tuple[str, str, str]:
    """A source-like file of about `size` bytes; its first, middle and last lines, unique."""
    lines = [f"# file {index}: first line"]
    while sum(len(line) + 1 for line in lines) < size:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
        lines.append(f"    {rng.choice(WORDS)}_{len(lines)} = compute({words!r})")
    lines[len(lines) // 2] = f"# file {index}: middle line"
    lines.append(f"# file {index}: last line")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines[0], lines[len(lines) // 2], lines[-1]


def reasoning(index: int, rng: random.Random) -> str:
    sentences = [
        f"The {rng.choice(WORDS)} handling in file {index - 1} passes the {rng.choice(WORDS)} "
        "through unchanged, so nothing there needs a fix yet."
        for _ in range(10)
    ]
    return " ".join(sentences) + f" Next I read file {index}."


def reading_turns(count: int, rng: random.Random, folder: str = "data") -> list[Turn]:
    """`count` turns, each reading `folder`/f{i:03d}.py, then a last answer."""
    turns = [
        turn(text(reasoning(i, rng)), tool_use("Read", {"file_path": f"{folder}/f{i:03d}.py"}))
        for i in range(count)
    ]
    return [*turns, turn("Read them all.")]


def last_read(provider: str, body: dict[str, Any]) -> tuple[str, str] | None:
    """The tool_use id and the text of the newest tool result a request body carries, when its
    last message brings results (None otherwise)."""
    messages = body["messages"]
    if provider == "openai":
        tools = [m for m in messages if m.get("role") == "tool"]
        if not tools or messages[-1].get("role") != "tool":
            return None
        content = tools[-1]["content"]
        found = content if isinstance(content, str) else "".join(p["text"] for p in content)
        return tools[-1]["tool_call_id"], found
    content = messages[-1]["content"]
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return None
    inner = results[-1]["content"]
    found = inner if isinstance(inner, str) else "".join(p.get("text", "") for p in inner)
    return results[-1]["tool_use_id"], found
