"""codeloop: a fast, open coding agent for the terminal, and a library for building such agents.

The library's public names are these; everything else is private and may change. The API
module loads on first use of one of them, so `import codeloop` (and the CLI) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codeloop._version import __version__ as __version__

if TYPE_CHECKING:
    from codeloop.api import (
        Client,
        HookMatcher,
        PermissionResultAllow,
        PermissionResultDeny,
        ToolPermissionContext,
        query,
        tool,
    )
    from codeloop.errors import CodeloopError
    from codeloop.messages import (
        AssistantMessage,
        Message,
        PromptSuggestionMessage,
        ResultMessage,
        StreamEvent,
        SystemMessage,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        ToolUseSummaryMessage,
        UserMessage,
    )
    from codeloop.options import Options

__all__ = [
    "AssistantMessage",
    "Client",
    "CodeloopError",
    "HookMatcher",
    "Message",
    "Options",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PromptSuggestionMessage",
    "ResultMessage",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolPermissionContext",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolUseSummaryMessage",
    "UserMessage",
    "__version__",
    "query",
    "tool",
]

_HOMES = {
    "codeloop.api": (
        "Client",
        "HookMatcher",
        "PermissionResultAllow",
        "PermissionResultDeny",
        "ToolPermissionContext",
        "query",
        "tool",
    ),
    "codeloop.errors": ("CodeloopError",),
    "codeloop.messages": (
        "AssistantMessage",
        "Message",
        "PromptSuggestionMessage",
        "ResultMessage",
        "StreamEvent",
        "SystemMessage",
        "TextBlock",
        "ThinkingBlock",
        "ToolResultBlock",
        "ToolUseBlock",
        "ToolUseSummaryMessage",
        "UserMessage",
    ),
    "codeloop.options": ("Options",),
}


def __getattr__(name: str) -> Any:
    """The public names, imported when first asked for."""
    import importlib

    for module, names in _HOMES.items():
        if name in names:
            value = getattr(importlib.import_module(module), name)
            globals()[name] = value
            return value
    raise AttributeError(f"module 'codeloop' has no attribute {name!r}")
