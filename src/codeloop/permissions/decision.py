"""A permission decision (allow, deny or ask, why, which rule made it) and what it is made in."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from codeloop.permissions.rules import Rule, RuleBook
from codeloop.system.valueclass import valueclass

Behavior = Literal["allow", "deny", "ask"]


@valueclass
class Decision:
    behavior: Behavior
    reason: str  # one sentence for the model and the user
    rule: Rule | None = None  # the rule that decided, when one did
    # Rules that would allow this next time ("allow always"), most specific first.
    suggestions: tuple[str, ...] = ()
    # How a person allows it, in flags: "--allowedTools 'Edit(out)' or --permission-mode
    # acceptEdits". Empty: the suggestions (as --allowedTools) are the way.
    fix: str = ""

    def how_to_allow(self) -> str:
        if self.fix:
            return self.fix
        if self.suggestions:
            return " or ".join(f"--allowedTools {shlex.quote(s)}" for s in self.suggestions[:2])
        return "--permission-mode bypassPermissions"

    def explain(self) -> str:
        return f"{self.reason} [rule {self.rule.describe()}]" if self.rule else self.reason

    def suggested_updates(self, destination: str) -> list[dict[str, Any]]:
        """The suggestions as Claude Code's permission update objects (a PermissionRequest
        hook's and the Agent SDK's `permission_suggestions`), to be saved in `destination`."""
        if not self.suggestions:
            return []
        rules = [_update_rule(text) for text in self.suggestions]
        update = {"type": "addRules", "rules": rules, "behavior": "allow"}
        return [{**update, "destination": destination}]


def _update_rule(text: str) -> dict[str, str]:
    """`Bash(npm test)` as {"toolName": "Bash", "ruleContent": "npm test"}."""
    tool, _, rest = text.partition("(")
    entry = {"toolName": tool}
    if rest.endswith(")"):
        entry["ruleContent"] = rest[:-1]
    return entry


@valueclass
class Scope:
    """What a decision needs besides the request itself."""

    mode: str
    book: RuleBook
    roots: list[Path]
    home: Path


def combine(decisions: Sequence[Decision]) -> Decision:
    """Several parts (the subcommands of a line): one deny denies, one ask asks, else allow."""
    for behavior in ("deny", "ask"):
        found = [d for d in decisions if d.behavior == behavior]
        if found:
            reason = "; ".join(dict.fromkeys(d.reason for d in found))
            suggestions = tuple(dict.fromkeys(s for d in found for s in d.suggestions))
            fix = " and ".join(dict.fromkeys(d.how_to_allow() for d in found))
            return Decision(found[0].behavior, reason, found[0].rule, suggestions, fix)
    ruled = next((d for d in decisions if d.rule is not None), None)
    if ruled is not None:
        return ruled
    return decisions[0] if decisions else Decision("allow", "nothing to run")
