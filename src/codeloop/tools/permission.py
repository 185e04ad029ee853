"""What the executor asks before a call runs, and the answer: the seam between the tools and
whoever decides (permissions/policy.py, the SDK's can_use_tool, a test). Here, not in the
executor, so that the deciders import the question without importing the machine."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from codeloop.system.valueclass import valueclass
from codeloop.tools.base import AnyTool, ToolContext


@valueclass(slots=True)
class PermissionDecision:
    allowed: bool
    message: str = ""
    # Denied only because nobody could be asked (a headless run): the user is notified.
    would_ask: bool = False
    # A PermissionRequest hook allowed the call with this input instead (decided again).
    updated_input: dict[str, Any] | None = None
    # A PermissionRequest hook denied the call and asked to stop the run.
    interrupt: bool = False


CanUseTool = Callable[[AnyTool, Any, ToolContext], Awaitable[PermissionDecision]]
