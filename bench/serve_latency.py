"""What a client of `codeloop serve` waits for, beside an editor on `codeloop acp`'s stdio.

The same scripted session as bench/acp_latency.py (each prompt: a text answer with a Read, then
a closing text) runs in `codeloop acp` over stdin/stdout and in `codeloop serve` over a
WebSocket at /acp, with a second client watching the same session (it loaded it): each
prompt's milestones are stamped as their messages arrive: prompt sent → first text chunk, and
prompt sent → the tool call's end, for the client that prompted and for the watcher. Prints
medians side by side, their difference and ratio.

    python -m bench.serve_latency [--prompts 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from bench.acp_latency import MODEL, Line, Stamped, first, measure, scenario, update
from bench.common import median, ms
from codeloop.testing.fake_server import FakeModelServer

FIRST_LINE = re.compile(r"codeloop serve: http://127\.0\.0\.1:(\d+)/\?token=(\S+)\n")


class Socket(Stamped):
    """A WebSocket client speaking ACP frames (Process's shape, so bench/acp_latency.py's
    session runs over it unchanged)."""

    ended = "the server closed the socket"

    def __init__(self, url: str) -> None:
        self.ws: ClientConnection = connect(url)  # permessage-deflate, as a browser asks
        super().__init__()

    def _read(self) -> None:
        for frame in self.ws:
            self.lines.put((time.monotonic(), json.loads(frame)))
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> float:
        sent = time.monotonic()
        self.ws.send(json.dumps(message))
        return sent

    def close(self) -> None:
        self.ws.close()


def environment(home: str, server: FakeModelServer) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "CODELOOP_HOME": str(Path(home) / ".codeloop"),
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "ANTHROPIC_API_KEY": "bench",
        "CODELOOP_MODEL": MODEL,
    }


def rpc(client: Socket, number: int, method: str, params: dict[str, Any]) -> list[Line]:
    client.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
    return client.until(lambda m: m.get("id") == number)


def over_serve(prompts: int) -> tuple[list[float], ...]:
    """(prompter's text, prompter's tool, watcher's text, watcher's tool) latencies."""
    with tempfile.TemporaryDirectory() as home:
        work = Path(home) / "work"
        work.mkdir()
        (work / "notes.txt").write_text("remember 42\n")
        with FakeModelServer(scenario(work, prompts)) as server:
            serve = subprocess.Popen(
                [sys.executable, "-m", "codeloop", "serve", "--port", "0"],
                stdout=subprocess.PIPE, text=True, env=environment(home, server), cwd=work,
                start_new_session=True,
            )  # fmt: skip
            try:
                assert serve.stdout is not None
                found = FIRST_LINE.fullmatch(serve.stdout.readline())
                assert found, "no URL line"
                url = f"ws://127.0.0.1:{found[1]}/acp?token={found[2]}"
                return _session(Socket(url), Socket(url), work, prompts)
            finally:
                os.killpg(serve.pid, signal.SIGTERM)
                serve.wait(60)


def _session(
    prompter: Socket, watcher: Socket, work: Path, prompts: int
) -> tuple[list[float], ...]:
    for client in (prompter, watcher):
        rpc(client, 0, "initialize", {"protocolVersion": 1})
    new = rpc(prompter, 1, "session/new", {"cwd": str(work), "mcpServers": []})
    session = new[-1][1]["result"]["sessionId"]
    rpc(watcher, 1, "session/load", {"cwd": str(work), "sessionId": session, "mcpServers": []})
    found: tuple[list[float], ...] = ([], [], [], [])
    for n in range(2, prompts + 2):
        prompt = [{"type": "text", "text": f"Prompt {n}."}]
        sent = prompter.send(
            {"jsonrpc": "2.0", "id": n, "method": "session/prompt",
             "params": {"sessionId": session, "prompt": prompt}}
        )  # fmt: skip
        mine = prompter.until(lambda m, n=n: m.get("id") == n)  # type: ignore[misc]
        theirs = watcher.until(lambda m: _text(m) == "Done.")
        for lines, text, tool in ((mine, found[0], found[1]), (theirs, found[2], found[3])):
            text.append(first(lines, lambda m: _text(m) is not None) - sent)
            tool.append(first(lines, lambda m: update(m).get("status") == "completed") - sent)
    prompter.close()
    watcher.close()
    return found


def _text(message: dict[str, Any]) -> str | None:
    u = update(message)
    return u["content"].get("text") if u.get("sessionUpdate") == "agent_message_chunk" else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=20)
    prompts = parser.parse_args().prompts
    stdio_text, stdio_tool = measure("acp", prompts)
    text, tool, w_text, w_tool = over_serve(prompts)
    print(f"client-visible latency, {prompts} prompts each (medians; the first prompt included)")
    print(
        f"  {'':32}{'acp stdio':>10}{'serve ws':>10}{'watcher':>10}{'ws − stdio':>12}{'ratio':>7}"
    )
    for name, base, mine, theirs in (
        ("prompt → first text chunk", stdio_text, text, w_text),
        ("prompt → tool call completed", stdio_tool, tool, w_tool),
    ):
        b, m, t = median(base), median(mine), median(theirs)
        print(f"  {name:32}{ms(b):>10}{ms(m):>10}{ms(t):>10}{ms(m - b):>12}{m / b:>7.2f}")


if __name__ == "__main__":
    main()
