"""Real MCP servers for tests: the npm reference servers and the SDK-built Python one.

.ci/run installs the npm servers (tests/npm, `npm ci`), so under CI=true a missing one fails
the test instead of skipping it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

NPM_BIN = Path(__file__).parent / "npm" / "node_modules" / ".bin"
PY_SERVER = [sys.executable, "-m", "codeloop.testing.mcp_server"]


def npm_server(name: str) -> str:
    """The path of an installed npm server's command (`mcp-server-everything`, ...)."""
    path = NPM_BIN / name
    if not path.exists():
        why = f"{path} is missing: run `npm ci --prefix tests/npm`"
        if os.environ.get("CI"):
            pytest.fail(f"CI installs the npm MCP servers, but {why}")
        pytest.skip(why)
    return str(path)


def stdio(command: str | list[str], *args: str, **extra: Any) -> dict[str, Any]:
    """A `.mcp.json` entry for a stdio server."""
    argv = [command] if isinstance(command, str) else list(command)
    return {"command": argv[0], "args": [*argv[1:], *args], **extra}


def python_server(*args: str, **extra: Any) -> dict[str, Any]:
    return stdio(PY_SERVER, *args, **extra)


def write_mcp_json(project: Path, servers: dict[str, Any]) -> Path:
    path = project / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def approve_all(project: Path) -> None:
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enableAllProjectMcpServers": True}))


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[str]
    log: Path

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def http_server(tmp_path: Path, *args: str, transport: str = "http") -> Iterator[HttpServer]:
    """The Python server on 127.0.0.1 over streamable HTTP (or SSE): it prints its URL once it
    listens, and is stopped (it is ours) when the block ends."""
    log = tmp_path / f"server-{transport}-{len(list(tmp_path.glob('server-*')))}.log"
    with log.open("w") as err:
        process = subprocess.Popen(
            [*PY_SERVER, "--transport", transport, *args],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url:
            raise RuntimeError(f"the MCP test server did not start: {log.read_text()}")
        yield HttpServer(url, process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
