"""PreModelSwitch and PostModelSwitch, as Claude Code fires them.

A switch someone asks for (`/model`, the SDK's and the Python API's `set_model`) passes the
PreModelSwitch hooks first: exit 2, `decision: "block"` or `permissionDecision: "deny"`
refuses it, and so does a hook that times out; `ask` needs someone to confirm. Every switch,
the automatic ones too (the fallback model), is then told to the PostModelSwitch hooks, whose
context (plain stdout or `additionalContext`) reaches the model with its next request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from codeloop.errors import UsageError
from codeloop.hooks.hook_runner import Hooks
from codeloop.system.valueclass import valueclass

# Asks the person at the terminal to confirm a switch; None where nobody can be asked.
Confirm = Callable[[str], Awaitable[bool]]


class SwitchRefused(UsageError):
    """A PreModelSwitch hook refused the switch (the message says why)."""


@valueclass(slots=True)
class Switched:
    """What the PostModelSwitch hooks said: for the model, and for the user."""

    context: str  # for the model, with its next request ("": none)
    messages: tuple[str, ...]


async def check_switch(
    hooks: Hooks | None, from_model: str, to_model: str, confirm: Confirm | None = None
) -> tuple[str, ...]:
    """Run the PreModelSwitch hooks; raises SwitchRefused when the switch may not happen.
    Returns the hooks' messages for the user."""
    if hooks is None or from_model == to_model:
        return ()
    outcome = await hooks.run("PreModelSwitch", {"from_model": from_model, "to_model": to_model})
    if outcome.blocked or outcome.stop:
        why = outcome.reason or outcome.stop_reason or "a PreModelSwitch hook refused it"
        raise SwitchRefused(f"the switch to {to_model} was refused: {why}")
    if outcome.permission == "ask":
        question = outcome.permission_reason or f"Switch from {from_model} to {to_model}?"
        if confirm is None:
            raise SwitchRefused(
                f"the switch to {to_model} needs confirming ({question}), and nobody here can"
            )
        if not await confirm(question):
            raise SwitchRefused(f"the switch to {to_model} was not confirmed")
    return outcome.system_messages


async def switched(hooks: Hooks | None, from_model: str, to_model: str) -> Switched:
    """Run the PostModelSwitch hooks after a switch, asked for or automatic."""
    if hooks is None or from_model == to_model:
        return Switched("", ())
    outcome = await hooks.run("PostModelSwitch", {"from_model": from_model, "to_model": to_model})
    return Switched("\n\n".join(outcome.additional_context), outcome.system_messages)
