"""A tool call the rules leave to the user, as `session/request_permission`: the options the
editor shows, and what the chosen one means to the policy ("always" keeps the same rules the
terminal's dialog keeps: the policy's suggestions, as allow or deny rules)."""

from __future__ import annotations

from acp import schema

from codeloop.permissions.policy import Answer, PermissionRequest

ALLOW_ONCE: schema.PermissionOptionKind = "allow_once"
ALLOW_ALWAYS: schema.PermissionOptionKind = "allow_always"
REJECT_ONCE: schema.PermissionOptionKind = "reject_once"
REJECT_ALWAYS: schema.PermissionOptionKind = "reject_always"
REJECTED = "The user rejected this tool call in the editor."
CANCELLED = "The user cancelled the permission request; the tool call did not run."


def options_for(request: PermissionRequest) -> list[schema.PermissionOption]:
    """Allow once, reject, and with a rule to keep (the ones the TUI's dialog offers) allow
    always and reject always."""
    rules = ", ".join(request.decision.suggestions)
    offered: list[tuple[schema.PermissionOptionKind, str]] = [(ALLOW_ONCE, "Allow once")]
    if rules:
        offered.append((ALLOW_ALWAYS, f"Allow always ({rules})"))
    offered.append((REJECT_ONCE, "Reject"))
    if rules:
        offered.append((REJECT_ALWAYS, f"Reject always ({rules})"))
    return [schema.PermissionOption(option_id=i, name=name, kind=i) for i, name in offered]


def answer_for(
    outcome: schema.AllowedOutcome | schema.DeniedOutcome, request: PermissionRequest
) -> Answer:
    """The editor's choice for the policy; anything it did not offer is a rejection (never an
    allow by accident). A rejection may carry the user's words for the model (`_meta.message`,
    what the web page's reject box sends)."""
    if isinstance(outcome, schema.DeniedOutcome):
        return Answer("deny", CANCELLED)
    if outcome.option_id == ALLOW_ONCE:
        return Answer("allow_once")
    said = (outcome.field_meta or {}).get("message")
    rejected = (
        f"{REJECTED} They said: {said.strip()}"
        if isinstance(said, str) and said.strip()
        else REJECTED
    )
    if not request.decision.suggestions:
        return Answer("deny", rejected)
    if outcome.option_id == ALLOW_ALWAYS:
        return Answer("allow_always")
    if outcome.option_id == REJECT_ALWAYS:
        return Answer("deny_always", rejected)
    return Answer("deny", rejected)
