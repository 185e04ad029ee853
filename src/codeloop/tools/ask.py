"""AskUserQuestion: the model asks the user one to four multiple-choice questions.

Answers come from the permission callback (an SDK's canUseTool returns the input with
`answers` filled in), or from the frontend's question dialog (tools/questions.py). Where no
one can answer (`-p`), the call is an error that says so, and the model goes on by itself.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput
from codeloop.tools.questions import Option, Question, QuestionChannel
from codeloop.tools.services import ToolServices


class OptionInput(ToolInput):
    label: Annotated[str, Arg("The choice as shown (1-5 words).")]
    description: Annotated[str, Arg("What choosing it means.")]
    preview: Annotated[str | None, Arg(hidden=True)] = None


class QuestionInput(ToolInput):
    question: Annotated[str, Arg("The question, ending with a question mark.")]
    header: Annotated[str, Arg("A very short label for it (at most 12 characters).")]
    options: Annotated[list[OptionInput], Arg(min_items=2, max_items=4)]
    multiSelect: Annotated[  # Claude Code's field name
        bool, Arg("Whether several options may be chosen.")
    ] = False


class AskUserQuestionInput(ToolInput):
    questions: Annotated[list[QuestionInput], Arg(min_items=1, max_items=4)]
    # Filled in by whoever answered (a permission callback): question text -> answer.
    answers: Annotated[dict[str, str] | None, Arg(hidden=True)] = None
    annotations: Annotated[dict[str, Any] | None, Arg(hidden=True)] = None
    metadata: Annotated[dict[str, Any] | None, Arg(hidden=True)] = None


DESCRIPTION = """\
Ask the user multiple-choice questions when you need their decision: to settle an ambiguous \
request, choose between approaches, or learn a preference.

- One to four questions, each with two to four options; the user may also answer in their \
own words.
- Ask only what you cannot find out yourself; put your recommended option first."""

NO_ONE = (
    "No one can answer questions in this run (it is not interactive). Decide yourself: choose "
    "the most reasonable option, say which you chose and why, and go on."
)


class AskUserQuestionTool(Tool[AskUserQuestionInput]):
    name: ClassVar[str] = "AskUserQuestion"
    description: ClassVar[str] = DESCRIPTION
    input_model = AskUserQuestionInput

    def __init__(self, channel: QuestionChannel | None = None) -> None:
        self.channel = channel or QuestionChannel()

    @classmethod
    def from_services(cls, services: ToolServices) -> AskUserQuestionTool:
        return cls(services.questions)

    def is_read_only(self, args: AskUserQuestionInput) -> bool:
        return True

    def is_concurrency_safe(self, args: AskUserQuestionInput) -> bool:
        return False  # one dialog at a time, in the order asked

    async def call(self, args: AskUserQuestionInput, ctx: ToolContext) -> ToolResult:
        answers = args.answers
        if answers is None and self.channel.ask is not None:
            answers = await self.channel.ask(tuple(_question(q) for q in args.questions))
            if answers is None:
                return ToolResult.error(
                    "The user declined to answer. Go on without it, or ask differently."
                )
        if answers is None:
            return ToolResult.error(NO_ONE)
        lines = [
            f'"{q.question}" = "{answers.get(q.question, "(no answer)")}"' for q in args.questions
        ]
        return ToolResult(
            "The user answered your questions: "
            + "; ".join(lines)
            + ". Go on with these answers in mind."
        )


def _question(q: QuestionInput) -> Question:
    options = tuple(Option(o.label, o.description) for o in q.options)
    return Question(q.question, q.header, options, q.multiSelect)
