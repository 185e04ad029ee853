"""The errors a user can cause and fix, as one family; each knows its CLI exit status.

Raised with a message written for the user (what is wrong, what to do). A frontend reports
them in one line; any other exception reaching a frontend is a bug in codeloop, reported as
such (exit 1, the traceback in a log file), never as the user's mistake.
"""

from __future__ import annotations


class CodeloopError(Exception):
    """Something the user can fix; `exit_status` is what the CLI exits with."""

    exit_status = 1


class UsageError(CodeloopError, ValueError):
    """A mistake in how codeloop was called (a flag, a file or session id it names, a missing
    prompt). A ValueError too, as bad arguments are in Python."""

    exit_status = 2


class ConfigError(CodeloopError, ValueError):
    """The model, the environment or the settings cannot work as configured."""


class NoCredentials(ConfigError):
    """The model needs a key that is not set: one of `variables` would do (an editor offers
    to set it)."""

    def __init__(self, message: str, variables: tuple[str, ...]) -> None:
        super().__init__(message)
        self.variables = variables


class SettingsError(ConfigError):
    """What the settings forbid or need, in a sentence for the user."""


class UnsafeSettingsError(SettingsError):
    """A settings file restricts something in a way codeloop cannot read: the session does not
    start (exit 2, as for a bad flag) rather than run without the restriction."""

    exit_status = 2


class SessionError(CodeloopError):
    """A saved session cannot be found, read or written."""


class SessionNotFound(SessionError):
    """No session fits what the user asked to resume; the message says what to do instead."""
