"""`--json-schema` (the Agent SDK's `output_format`): the run's answer as JSON valid for a
schema, in the result's `structured_output`.

As Claude Code does it, the model gets one more tool, StructuredOutput, whose input schema is
the schema: its input is the answer. A call that does not validate comes back as an error
naming the problems, which the model corrects in its next turn; a run that would end without a
valid call is sent back by a Stop hook, at most `MAX_CORRECTIONS` times, after which it ends
and the result says the output is missing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from codeloop.errors import UsageError
from codeloop.hooks.hook_config import HookCommand, HookMatcher, HooksConfig
from codeloop.models.base import ToolSpec
from codeloop.tools.base import ToolContext, ToolInputError, ToolResult

NAME = "StructuredOutput"
MAX_CORRECTIONS = 3
DESCRIPTION = (
    "Return your final answer in the structured format the caller asked for. Call this tool "
    "exactly once, at the end, with the complete answer as its input (it must match the "
    "input schema); then stop."
)
MISSING = (
    f"You have not given the structured answer yet. Call the {NAME} tool now, with your "
    "complete answer as its input, matching its input schema."
)


def parse_schema(text: str) -> dict[str, Any]:
    """A --json-schema value: inline JSON, checked to be a JSON Schema."""
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--json-schema: not valid JSON: {exc.msg}") from None
    return checked_schema(schema)


def checked_schema(schema: Any) -> dict[str, Any]:
    import jsonschema  # with its format checkers: only when a schema is given

    if not isinstance(schema, dict):
        raise UsageError("--json-schema: a schema is a JSON object")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise UsageError(f"--json-schema: not a valid JSON Schema: {exc.message}") from None
    return schema


class StructuredOutput:
    """The answer one prompt gave (`value`), or why there is none (`failed`)."""

    def __init__(
        self,
        schema: dict[str, Any],
        max_corrections: int = MAX_CORRECTIONS,
        check: Callable[[Any], list[str]] | None = None,
    ) -> None:
        """`check`: the caller's own problems with an answer the schema takes (blocking: run
        in a thread), sent back to the model like the schema's."""
        self.schema = schema
        self.check = check
        self.max_corrections = max_corrections
        self.value: Any = None
        self.failed: str | None = None
        self._corrections = 0

    def reset(self) -> None:
        """Before each prompt: its answer is its own."""
        self.value, self.failed, self._corrections = None, None, 0

    def tool(self) -> _OutputTool:
        return _OutputTool(self)

    def hooks(self) -> HooksConfig:
        stop = HookCommand(type="callback", command=f"{NAME} check", callback=self._on_stop)
        return {"Stop": (HookMatcher("", (stop,)),)}

    async def _on_stop(self, _: dict[str, Any]) -> dict[str, Any]:
        if self.value is not None:
            return {}
        if self._corrections >= self.max_corrections:
            self.failed = (
                f"the model did not call {NAME} with valid output after "
                f"{self._corrections} reminders"
            )
            return {}
        self._corrections += 1
        return {"decision": "block", "reason": MISSING}

    def attach(self, session: Any) -> None:
        """Give the session the tool and the Stop check."""
        session.builtin_tools[NAME] = self.tool()
        if session.hooks is not None:
            session.hooks.add(self.hooks())


class _OutputTool:
    name = NAME
    description = DESCRIPTION

    def __init__(self, owner: StructuredOutput) -> None:
        self.owner = owner

    def spec(self) -> ToolSpec:
        return ToolSpec(NAME, DESCRIPTION, self.owner.schema)

    def parse(self, raw: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise ToolInputError(f"InputValidationError: {NAME} takes a JSON object")
        return raw

    def is_read_only(self, args: Any) -> bool:
        return True

    def is_concurrency_safe(self, args: Any) -> bool:
        return False

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        import jsonschema

        validator = jsonschema.validators.validator_for(self.owner.schema)(self.owner.schema)
        problems = [
            f"{'/'.join(str(p) for p in error.absolute_path) or '(top level)'}: {error.message}"
            for error in validator.iter_errors(args)
        ]
        wrong = "does not match the schema"
        if not problems and self.owner.check is not None:
            problems, wrong = await asyncio.to_thread(self.owner.check, args), "is not right"
        if problems:
            listed = "\n".join(f"- {p}" for p in problems[:20])
            return ToolResult.error(
                f"The output {wrong}:\n{listed}\nCall {NAME} again with corrected output."
            )
        self.owner.value = args
        return ToolResult("Structured output provided successfully.")
