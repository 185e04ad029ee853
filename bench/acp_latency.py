"""What an editor waits for, over ACP, beside the same session over stream-json.

The same scripted session (each prompt: a text answer with a Read, then a closing text) runs
in `codeloop acp` and in `codeloop -p --input-format stream-json --include-partial-messages`
against the fake model server; each prompt's milestones are stamped as their lines arrive:
prompt sent → first text chunk (`agent_message_chunk` / a `text_delta` stream event), and
prompt sent → the tool call's end (`tool_call_update` completed / the `tool_result` message).
Prints medians side by side, their difference and ratio.

    python bench/acp_latency.py [--prompts 20]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from queue import Queue
from typing import Any

from bench.common import median, ms
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn

Line = tuple[float, dict[str, Any]]
MODEL = "anthropic:claude-sonnet-5-5"


class Stamped:
    """Messages from a peer, each stamped as it arrives (a reader thread fills `lines`, None
    at the end)."""

    ended = "the peer went away early"

    def __init__(self) -> None:
        self.lines: Queue[Line | None] = Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        raise NotImplementedError

    def until(self, done: Callable[[dict[str, Any]], bool]) -> list[Line]:
        """The messages up to the first that `done` accepts."""
        seen: list[Line] = []
        while (line := self.lines.get(timeout=60)) is not None:
            seen.append(line)
            if done(line[1]):
                return seen
        sys.exit(self.ended)


class Process(Stamped):
    """A codeloop process speaking JSON lines."""

    ended = "the process ended early"

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd
        )
        super().__init__()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put((time.monotonic(), json.loads(raw)))
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        sent = time.monotonic()
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        return sent

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def first(lines: list[Line], match: Callable[[dict[str, Any]], bool]) -> float:
    return next(t for t, message in lines if match(message))


def scenario(work: Path, prompts: int) -> Scenario:
    read = tool_use("Read", {"file_path": str(work / "notes.txt")})
    turns = [t for _ in range(prompts) for t in (turn("Reading the notes.", read), turn("Done."))]
    return Scenario(turns=tuple(turns))


def over_acp(proc: Process, work: Path, prompts: int) -> tuple[list[float], list[float]]:
    proc.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    proc.until(lambda m: m.get("id") == 0)
    proc.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(work), "mcpServers": []},
        }
    )
    session = proc.until(lambda m: m.get("id") == 1)[-1][1]["result"]["sessionId"]
    texts, tools = [], []
    for n in range(2, prompts + 2):
        prompt = [{"type": "text", "text": f"Prompt {n}."}]
        sent = proc.send(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": prompt},
            }
        )
        lines = proc.until(functools.partial(_answers, n))
        texts.append(
            first(lines, lambda m: update(m).get("sessionUpdate") == "agent_message_chunk") - sent
        )
        tools.append(first(lines, lambda m: update(m).get("status") == "completed") - sent)
    return texts, tools


def _answers(request_id: int, message: dict[str, Any]) -> bool:
    return message.get("id") == request_id


def update(message: dict[str, Any]) -> dict[str, Any]:
    """A session/update's update ({} for anything else)."""
    return message.get("params", {}).get("update", {}) if message.get("method") else {}


def over_stream_json(proc: Process, prompts: int) -> tuple[list[float], list[float]]:
    texts, tools = [], []
    for n in range(prompts):
        message = {"role": "user", "content": f"Prompt {n}."}
        sent = proc.send({"type": "user", "message": message, "parent_tool_use_id": None})
        lines = proc.until(lambda m: m.get("type") == "result")

        def text_delta(m: dict[str, Any]) -> bool:
            delta = m.get("event", {}).get("delta", {}) if m.get("type") == "stream_event" else {}
            return delta.get("type") == "text_delta"

        def tool_result(m: dict[str, Any]) -> bool:
            content = m.get("message", {}).get("content") if m.get("type") == "user" else None
            return isinstance(content, list) and any(
                b.get("type") == "tool_result" for b in content
            )

        texts.append(first(lines, text_delta) - sent)
        tools.append(first(lines, tool_result) - sent)
    return texts, tools


def measure(face: str, prompts: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as home:
        work = Path(home) / "work"
        work.mkdir()
        (work / "notes.txt").write_text("remember 42\n")
        with FakeModelServer(scenario(work, prompts)) as server:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": home,
                "CODELOOP_HOME": str(Path(home) / ".codeloop"),
                "ANTHROPIC_BASE_URL": server.anthropic_base_url,
                "ANTHROPIC_API_KEY": "bench",
                "CODELOOP_MODEL": MODEL,
            }
            codeloop = [sys.executable, "-m", "codeloop"]
            if face == "acp":
                proc = Process([*codeloop, "acp"], env, work)
                result = over_acp(proc, work, prompts)
            else:
                flags = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]
                more = ["--include-partial-messages", "--verbose"]
                proc = Process([*codeloop, *flags, *more], env, work)
                result = over_stream_json(proc, prompts)
            proc.close()
            return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=20)
    prompts = parser.parse_args().prompts
    acp_text, acp_tool = measure("acp", prompts)
    sj_text, sj_tool = measure("stream-json", prompts)
    print(f"editor-visible latency, {prompts} prompts each (medians; the first prompt included)")
    print(f"  {'':34}{'ACP':>10}{'stream-json':>14}{'ACP − sj':>12}{'ratio':>8}")
    for name, a, s in (
        ("prompt → first text chunk", acp_text, sj_text),
        ("prompt → tool call completed", acp_tool, sj_tool),
    ):
        da, ds = median(a), median(s)
        print(f"  {name:34}{ms(da):>10}{ms(ds):>14}{ms(da - ds):>12}{da / ds:>8.2f}")


if __name__ == "__main__":
    main()
