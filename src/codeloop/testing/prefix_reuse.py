"""A session that Reads distinct files and runs Bash, and how much of each request a server
with a prompt cache could reuse: issue 37's outside measurement of cache-friendly folding.

llama.cpp (and every provider's prompt cache) reuses only the byte-identical prefix of a
prompt: a fold or a compaction that rewrites an early message makes the server process
everything after it again. `reuse` compares each request with the one before it as the
server received it (tools, then messages, in order) and says how much of it was a
continuation. Shared by tests/e2e/test_prefix_reuse.py and bench/prefix_reuse.py.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from codeloop.system.valueclass import valueclass
from codeloop.testing.reading import WORDS, write_file
from codeloop.testing.scenario import Turn, text, tool_use, turn

PROMPT = "Look through data/ and logs/: read each file once, then say what you found."


def write_workload(root: Path, turns: int, file_bytes: int, seed: int = 0) -> list[Turn]:
    """Files under `root` (data/fNN.py and logs/runNN.log, ~`file_bytes` each) and `turns`
    tool-calling turns alternating a Read of the next source and a `cat` of the next log,
    each after a sentence of reasoning, then a last answer."""
    rng = random.Random(seed)
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "logs").mkdir(parents=True, exist_ok=True)
    scripted: list[Turn] = []
    for i in range(turns):
        note = f"Step {i + 1}: the {rng.choice(WORDS)} path looks fine so far; next file."
        if i % 2 == 0:
            write_file(root / "data" / f"f{i:02d}.py", i, file_bytes, rng)
            call = tool_use("Read", {"file_path": f"data/f{i:02d}.py"})
        else:
            write_file(root / "logs" / f"run{i:02d}.log", i, file_bytes, rng)
            call = tool_use("Bash", {"command": f"cat logs/run{i:02d}.log"})
        scripted.append(turn(text(note), call))
    return [*scripted, turn("Nothing in these files needs a change.")]


def _prompt_parts(body: dict[str, Any]) -> list[str]:
    """What a server renders its prompt from, in order, each part as JSON: the system prompt
    and the tools, then each message (Chat Completions and Messages API bodies alike). The
    Messages API's cache breakpoints move with the history and are no part of the prompt."""
    head = {key: body.get(key) for key in ("system", "tools")}
    return [_plain(head)] + [_plain(m) for m in body.get("messages", [])]


def _plain(value: Any) -> str:
    return json.dumps(strip_markers(value), sort_keys=True, ensure_ascii=False)


def strip_markers(value: Any) -> Any:
    """A request body (or part of one) without the Messages API's cache breakpoints."""
    if isinstance(value, dict):
        return {k: strip_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_markers(v) for v in value]
    return value


@valueclass
class Step:
    """One request compared with the one before it."""

    tokens: int  # the request's prompt, at 4 characters a token
    reused: int  # of which a cache holding the previous request could reuse
    extends: bool  # same tools and system prompt, and every earlier message unchanged

    @property
    def processed(self) -> int:
        return self.tokens - self.reused


def prompt_tokens(body: dict[str, Any]) -> int:
    """A request's prompt (system prompt, tools, messages), at 4 characters a token."""
    return sum(len(p) for p in _prompt_parts(body)) // 4


def reuse(bodies: list[dict[str, Any]]) -> list[Step]:
    """Each request after the first, against the one before it: the common prefix of their
    parts, in tokens (4 characters each), and whether it extends it byte for byte."""
    steps: list[Step] = []
    previous: list[str] = []
    for body in bodies:
        parts = _prompt_parts(body)
        same = 0
        while same < min(len(parts), len(previous)) and parts[same] == previous[same]:
            same += 1
        if previous:
            tokens = sum(len(p) for p in parts) // 4
            reused = sum(len(p) for p in parts[:same]) // 4
            steps.append(Step(tokens, reused, same == len(previous)))
        previous = parts
    return steps
