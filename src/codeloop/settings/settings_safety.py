"""Which settings restrict, and what a problem in one means: a session never runs with a
restriction its files ask for silently dropped.

A value codeloop cannot read is skipped with a warning when skipping it can only make the session
stricter or change nothing for safety (an allow rule, additionalDirectories, the model). Where
the value restricts (deny and ask rules, the permission mode, the sandbox, the managed-policy
keys, hooks on events that can block) a problem is an error instead, and the session does not
start until the file is fixed: running without the restriction could allow what it forbids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import field

from codeloop.errors import UnsafeSettingsError
from codeloop.hooks.hook_events import EVENTS
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

# Settings paths (dotted, as problems name them) whose values restrict what a session may do.
RESTRICTING: frozenset[str] = frozenset(
    {
        "permissions",  # not an object: its deny and ask rules are unreadable
        "permissions.deny",
        "permissions.ask",
        "permissions.defaultMode",  # `plan` or `dontAsk` misspelt would run in default mode
        "permissions.disableBypassPermissionsMode",
        "permissions.disableAutoMode",
        "disableBypassPermissionsMode",
        "disableAutoMode",
        "sandbox",
        "sandbox.enabled",
        "sandbox.failIfUnavailable",
        "allowManagedHooksOnly",
        "allowManagedPermissionRulesOnly",
        "allowManagedMcpServersOnly",
        "allowedMcpServers",
        "deniedMcpServers",
        "disabledMcpjsonServers",
        "blockedMarketplaces",
        "strictKnownMarketplaces",
        "allowedMarketplaces",
        "allowedHttpHookUrls",
        "httpHookAllowedEnvVars",
        "disableSkillShellExecution",
        "autoMode",
        "autoMode.soft_deny",
        "autoMode.hard_deny",
        "hooks",  # not an object: its blocking hooks are unreadable
    }
)
# Parts of restricting objects that only widen: their problems are warnings.
_WIDENING = frozenset(
    {
        "permissions.allow",
        "permissions.additionalDirectories",
        "sandbox.allowNetwork",
        "autoMode.allow",
        "autoMode.environment",
    }
)
# A hook event that can stop something: its hooks are restrictions too (PermissionRequest's
# hooks answer permission prompts, so they deny as well).
_BLOCKING_EVENTS = frozenset(
    name for name, spec in EVENTS.items() if spec.blocks or name == "PermissionRequest"
)
# Objects that hold restrictions among other things: the names of what is in them tell.
_HOLDERS = frozenset({"permissions", "sandbox", "autoMode", "hooks"})
# The names an unreadable file must not mention to be skipped with only a warning.
_NAMES = (
    frozenset(path.rsplit(".", 1)[-1] for path in RESTRICTING if path not in _HOLDERS)
    | _BLOCKING_EVENTS
)
_INDEX = LazyPattern(r"\[\d+\]")


def restricts(where: str) -> bool:
    """Whether a problem at `where` (`permissions.deny[2]`, `hooks.PreToolUse[0].matcher`)
    drops a restriction."""
    parts = _INDEX.sub("", where).split(".")
    if parts[0] == "hooks" and len(parts) > 1:
        return blocking_event(parts[1])
    return parts[0] in RESTRICTING and ".".join(parts[:2]) not in _WIDENING


def misspelt(name: str, known: Iterable[str]) -> str | None:
    """The restricting key `name` looks like a misspelling of (`permission`, `Deny`), if any."""
    import difflib

    folded = {key.casefold(): key for key in known}
    close = difflib.get_close_matches(name.casefold(), folded, n=1, cutoff=0.8)
    return folded[close[0]] if close else None


def blocking_event(name: str) -> bool:
    """An event whose hooks can block, or a misspelling of one (`pretooluse`, `PreToolUSe`)."""
    event = name if name in EVENTS else misspelt(name, EVENTS)
    return event in _BLOCKING_EVENTS


def may_restrict(text: str) -> bool:
    """Whether the text of a settings file that cannot be parsed names a restricting key,
    quoted or not (so skipping the file could drop a restriction)."""
    return _NAMED.search(text) is not None


_NAMED = LazyPattern(r"\b(?:" + "|".join(sorted(_NAMES)) + r")\b", re.IGNORECASE)


@valueclass(frozen=False)
class Problems:
    """What loading the settings found: warnings (the session starts) and errors (it does not)."""

    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def found(self, source: str, where: str, problem: str) -> None:
        """A value that cannot be used: an error when it restricts, else skipped."""
        if restricts(where):
            self.errors.append(f"{source}: {where}: {problem}")
        else:
            self.warnings.append(f"{source}: {where}: {problem}; ignored")

    def unreadable(
        self, source: str, problem: str, text: str | None, *, then: str = "skipped"
    ) -> None:
        """A file that cannot be read as written: an error unless its text shows it restricts
        nothing (None: the text itself could not be read); else `then` says what was done."""
        if text is None or may_restrict(text):
            self.errors.append(f"{source}: {problem}")
        else:
            self.warnings.append(f"{source}: {problem}; {then}")

    def check(self) -> None:
        """Refuse to go on when a restriction could not be read."""
        if self.errors:
            lines = "\n".join(f"  {error}" for error in self.errors)
            raise UnsafeSettingsError(
                "settings that restrict (or may restrict) what codeloop may do cannot be "
                f"read, and running without them could allow what they forbid:\n{lines}\n"
                "Fix the file (or move it aside) and start again."
            )
