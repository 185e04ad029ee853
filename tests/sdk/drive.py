"""What the SDK tests share: codeloop as the SDK's CLI, pointed at the fake model server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest

# The console script of the environment running the tests: the SDK executes it directly.
CODELOOP = Path(sys.executable).parent / "codeloop"
MODEL = "anthropic:claude-sonnet-5-5"


def sdk_env(server: FakeModelServer, home: Path) -> dict[str, str]:
    """What the SDK adds to codeloop's environment: the fake server, a home of its own."""
    return {
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "HOME": str(home),
        "CODELOOP_HOME": str(home / ".codeloop"),
        "CODELOOP_MODEL": MODEL,
        "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
    }


def sent_text(request: RecordedRequest) -> str:
    """Everything a model request carried, as text to search."""
    return json.dumps(request.body.get("messages", []), ensure_ascii=False)


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last message."""
    last = request.body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else []
    return [b for b in content if b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])
