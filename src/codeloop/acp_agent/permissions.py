"""A tool call the rules leave to the user, as `session/request_permission`: the options the
editor shows, and what the chosen one means to the policy ("always" keeps the same rule the
terminal's dialog keeps)."""

from __future__ import annotations

from acp import schema

from codeloop.permissions.policy import Answer, PermissionRequest

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECTED = "The user rejected this tool call in the editor."
CANCELLED = "The user cancelled the permission request; the tool call did not run."


def options_for(request: PermissionRequest) -> list[schema.PermissionOption]:
    """Allow once, allow always (only when there are rules to keep: the ones the TUI's
    dialog offers), reject."""
    options = [schema.PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    rules = request.decision.suggestions
    if rules:
        where = ", ".join(rules)
        options.append(
            schema.PermissionOption(
                option_id=ALLOW_ALWAYS, name=f"Allow always ({where})", kind="allow_always"
            )
        )
    options.append(
        schema.PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once")
    )
    return options


def answer_for(
    outcome: schema.AllowedOutcome | schema.DeniedOutcome, request: PermissionRequest
) -> Answer:
    """The editor's choice for the policy; anything it did not offer is a rejection (never an
    allow by accident)."""
    if isinstance(outcome, schema.DeniedOutcome):
        return Answer("deny", CANCELLED)
    if outcome.option_id == ALLOW_ONCE:
        return Answer("allow_once")
    if outcome.option_id == ALLOW_ALWAYS and request.decision.suggestions:
        return Answer("allow_always")  # the policy keeps its suggestions, as the TUI's dialog
    return Answer("deny", REJECTED)
