"""The front door every face drives a session through (conversation.Conversation): nothing
above it touches the session's seams, nothing below it knows a face."""

from codeloop.frontdoor.conversation import MODE_ALIASES, Conversation, Responder

__all__ = ["MODE_ALIASES", "Conversation", "Responder"]
