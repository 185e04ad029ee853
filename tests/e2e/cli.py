"""Run the real `codeloop` CLI as a subprocess against a FakeModelServer on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.long_session import summary_turns
from codeloop.testing.scenario import Scenario, Turn

PROVIDER_MODELS = {
    "anthropic": "anthropic:claude-sonnet-5-5",
    "openai": "openai:gpt-6.2-sol",
    "openai-responses": "openai-responses:gpt-6.2-sol",
    # Claude Code's users name Claude on the clouds by alias; the fake server plays the cloud.
    "bedrock": "sonnet",
    "vertex": "sonnet",
}


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def json_lines(self) -> list[Any]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def assistant_texts(self) -> list[str]:
        """The text blocks of the assistant messages a stream-json run printed, in order."""
        return [
            block["text"]
            for line in self.json_lines()
            if line["type"] == "assistant"
            for block in line["message"]["content"]
            if block["type"] == "text"
        ]


def provider_env(server: FakeModelServer | None, provider: str, home: Path) -> dict[str, str]:
    """A minimal environment: no real keys leak in from the developer's shell."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    if server is not None and provider == "anthropic":
        env |= {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "test-key"}
    if server is not None and provider in ("openai", "openai-responses"):
        env |= {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "test-key"}
    if server is not None and provider == "bedrock":
        env |= {
            "CLAUDE_CODE_USE_BEDROCK": "1",
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLEFAKE",
            "AWS_SECRET_ACCESS_KEY": "fake-secret-key",
            "AWS_EC2_METADATA_DISABLED": "true",
            "ANTHROPIC_BEDROCK_BASE_URL": server.url,
        }
    if server is not None and provider == "vertex":
        env |= {
            "CLAUDE_CODE_USE_VERTEX": "1",
            "CLOUD_ML_REGION": "us-east5",
            "ANTHROPIC_VERTEX_PROJECT_ID": "test-project",
            "ANTHROPIC_VERTEX_BASE_URL": server.url,
            "GOOGLE_APPLICATION_CREDENTIALS": str(service_account(home, server.url + "/token")),
        }
    return env


def service_account(home: Path, token_uri: str) -> Path:
    """Application-default credentials (a service account with a fresh key) whose token
    endpoint is the fake server's."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    path = home / "adc.json"
    info = {
        "type": "service_account",
        "project_id": "test-project",
        "private_key_id": "fake-key-id",
        "private_key": pem,
        "client_email": "codeloop-test@test-project.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": token_uri,
    }
    path.write_text(json.dumps(info))
    return path


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


def windowed_session(
    tmp: Path, provider: str, window: int, turns: list[Turn], prompt: str, *, summaries: int
) -> tuple[CliRun, list[RecordedRequest]]:
    """`codeloop -p PROMPT` (stream-json) in `tmp` on a window of `window` tokens
    (CODELOOP_CONTEXT_WINDOW), against a fake server that refuses any request over it, as a
    provider would, and answers up to `summaries` compaction summary calls."""
    with FakeModelServer(
        Scenario(turns=tuple(turns)), max_prompt_tokens=window, summaries=summary_turns(summaries)
    ) as server:
        env = provider_env(server, provider, tmp) | {
            "CODELOOP_HOME": str(tmp / "home"),
            "CODELOOP_CONTEXT_WINDOW": str(window),
        }
        args = ["-p", prompt, "--model", PROVIDER_MODELS[provider]]
        args += ["--output-format", "stream-json"]
        return run_cli(args, cwd=tmp, env=env, timeout=600), server.requests
