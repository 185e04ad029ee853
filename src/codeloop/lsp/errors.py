"""What can go wrong asking a language server, each with a message for the model. A module of
its own, free of the protocol library, so that catching them loads nothing."""

from __future__ import annotations


class LspError(Exception):
    """A question a server could not answer; the message says why."""


class NoServer(LspError):
    """No configured server handles the file; the message names the files there are servers
    for."""


class ServerFailed(LspError):
    """The server could not start, crashed, or did not answer; the message says which, with
    the last of what it said."""


class Unsupported(LspError):
    """The server does not do this operation."""


class PositionError(LspError):
    """The line or column is not in the file (or the file cannot be read)."""
