"""The front door every face drives a session through (conversation.Conversation): nothing
above it touches the session's seams, nothing below it knows a face. Its names load on first
use, so that a face's parser (flags.py) comes without the session's modules: `codeloop
--version` and `--help` load none of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeloop.frontdoor.conversation import Conversation, Responder

__all__ = ["Conversation", "Responder"]


def __getattr__(name: str) -> Any:
    """The conversation's names, imported when first asked for."""
    if name not in __all__:
        raise AttributeError(f"module 'codeloop.frontdoor' has no attribute {name!r}")
    from codeloop.frontdoor import conversation

    value = getattr(conversation, name)
    globals()[name] = value
    return value
