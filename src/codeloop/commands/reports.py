"""What /context, /cost and the UI's footer say about a session: the window's contents by
part, and the tokens and cost by model. Estimates where the API has not counted yet."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from codeloop.context.tokens import estimate_messages, estimate_text
from codeloop.models.catalog import model_info
from codeloop.models.prompt_size import prompt_tokens
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from codeloop.session import Session


@valueclass
class ContextParts:
    system: int
    tools: int
    memory: int
    messages: int
    window: int

    @property
    def used(self) -> int:
        return self.system + self.tools + self.memory + self.messages

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.window if self.window else 0.0


def context_parts(session: Session) -> ContextParts:
    """The window split by what fills it. The messages' share is what the API last counted
    (plus an estimate for what came since) less the estimated rest, when it has counted."""
    specs = tuple(tool.spec() for tool in session.tools.values())
    system = estimate_text(session.config.system)
    # As the client sends them: schemas, or the local model's one-line list.
    tools = prompt_tokens(session.client, session.config.system, specs) - system
    memory = estimate_messages(session.user_context)
    messages = estimate_messages(session.messages)
    manager = session.context
    if manager is not None:
        counted = manager.count(session.messages) + memory
        messages = max(messages, counted - system - tools - memory)
        window = manager.limits.window
    else:
        window = model_info(session.config.model, session.workspace.env).context_window
    return ContextParts(system, tools, memory, messages, window)


def context_line(session: Session) -> str:
    parts = context_parts(session)
    return f"{parts.used:,} of {parts.window:,} tokens ({parts.percent:.0f}%)"


def context_report(session: Session) -> str:
    parts = context_parts(session)
    free = max(0, parts.window - parts.used)
    rows = [
        ("System prompt", parts.system),
        ("Tools", parts.tools),
        ("Memory files", parts.memory),
        (f"Messages ({len(session.messages)})", parts.messages),
        ("Free", free),
    ]
    width = max(len(name) for name, _ in rows)
    bar_cells = 30
    lines = [f"Context: {context_line(session)} — {session.config.model}"]
    if session.context is not None and session.context.limits.source:
        lines.append(f"  Window: {parts.window:,} tokens ({session.context.limits.source})")
    for name, tokens in rows:
        share = tokens / parts.window if parts.window else 0.0
        bar = "█" * round(share * bar_cells)
        lines.append(f"  {name:<{width}}  {tokens:>9,}  {100 * share:5.1f}%  {bar}")
    return "\n".join(lines)


def cost_report(session: Session, started: float | None = None) -> str:
    by_model, costs = session.usage_by_model, session.ledger.cost_by_model
    usage = session.usage
    lines = [
        f"Total cost:  ${session.cost_usd:.4f}",
        f"API time:    {session.api_duration_ms / 1000:.1f} s",
    ]
    if started is not None:
        lines.append(f"Wall time:   {time.monotonic() - started:.1f} s")
    lines.append(
        f"Tokens:      {usage.input_tokens:,} in, {usage.output_tokens:,} out, "
        f"{usage.cache_read_input_tokens:,} cache read, "
        f"{usage.cache_creation_input_tokens:,} cache write"
    )
    for model, used in by_model.items():
        known = "" if model_info(model).known else " (price unknown)"
        lines.append(
            f"  {model}: {used.input_tokens:,} in, {used.output_tokens:,} out — "
            f"${costs.get(model, 0.0):.4f}{known}"
        )
    if not by_model:
        lines.append("  no model calls yet")
    return "\n".join(lines)
