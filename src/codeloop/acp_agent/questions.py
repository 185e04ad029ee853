"""The model's multiple-choice questions (AskUserQuestion) as permission requests: ACP has no
question of its own, and every editor shows a permission request's options as buttons. One
request a question; each choice an option, and "Skip" declines."""

from __future__ import annotations

from acp import schema
from acp.helpers import text_block, tool_content

from codeloop.tools.questions import Question

SKIP = "skip"


def question_options(question: Question) -> list[schema.PermissionOption]:
    choices = [
        schema.PermissionOption(option_id=f"choice-{i}", name=option.label, kind="allow_once")
        for i, option in enumerate(question.options)
    ]
    return [*choices, schema.PermissionOption(option_id=SKIP, name="Skip", kind="reject_once")]


def question_call(call_id: str, question: Question) -> schema.ToolCallUpdate:
    """The question as the request shows it: its text, and what each choice means."""
    lines = [question.question, *(f"- {o.label}: {o.description}" for o in question.options)]
    if question.multi_select:
        lines.append("(one choice here; say more in your next prompt)")
    return schema.ToolCallUpdate(
        tool_call_id=call_id,
        title=question.header or question.question,
        kind="other",
        content=[tool_content(text_block("\n".join(lines)))],
    )


def chosen(
    outcome: schema.AllowedOutcome | schema.DeniedOutcome | None, question: Question
) -> str | None:
    """The label picked; None when the user skipped or cancelled."""
    if not isinstance(outcome, schema.AllowedOutcome):
        return None
    labels = {f"choice-{i}": option.label for i, option in enumerate(question.options)}
    return labels.get(outcome.option_id)
