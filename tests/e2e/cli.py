"""Run the real `codeloop` CLI as a subprocess against a FakeModelServer on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer

PROVIDER_MODELS = {"anthropic": "anthropic:claude-sonnet-4-5", "openai": "openai:gpt-4.1"}


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def json_lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def provider_env(server: FakeModelServer | None, provider: str, home: Path) -> dict[str, str]:
    """A minimal environment: no real keys leak in from the developer's shell."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    if server is not None and provider == "anthropic":
        env |= {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "test-key"}
    if server is not None and provider == "openai":
        env |= {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "test-key"}
    return env


def run_cli(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin: str | None = None,
    timeout: float = 120,
) -> CliRun:
    proc = subprocess.run(
        [sys.executable, "-m", "codeloop", *args],
        cwd=cwd,
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return CliRun(proc.returncode, proc.stdout, proc.stderr)
