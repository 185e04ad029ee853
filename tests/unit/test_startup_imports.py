"""What a session loads before its first request: nothing it does not need then.

Each check runs in a fresh interpreter, since this process has imported everything already.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest


def loaded_after(code: str, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` are in sys.modules after running `code` in a new interpreter."""
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {modules!r} if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [name for name in out.stdout.strip().split(",") if name]


@pytest.mark.skipif(
    importlib.util.find_spec("click") is None, reason="httpx loads its CLI only with click"
)
def test_the_http_client_comes_without_httpx_command_line_tool() -> None:
    code = (
        "from codeloop.models.anthropic import AnthropicClient\n"
        "AnthropicClient(base_url='http://127.0.0.1:9', api_key='k')\n"
    )
    assert loaded_after(code, ("httpx", "httpx._main", "click", "rich", "pygments")) == ["httpx"]


def test_httpx_command_line_tool_is_still_importable_after() -> None:
    code = "from codeloop.models.transport import load_httpx\nload_httpx()\nimport httpx._main\n"
    assert loaded_after(code, ("httpx", "httpx._main")) == ["httpx", "httpx._main"]
