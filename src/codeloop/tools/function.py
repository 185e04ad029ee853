"""A Python function as a tool (the API's `@tool`): its parameters' type hints are the input
schema, its docstring the description. The function may be sync or async; it returns a
string, content blocks in the SDK's `{"content": [...], "is_error": ...}` shape, or anything
JSON can say. An exception is an error result the model reads, never the session's end.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from codeloop.models.base import ToolSpec
from codeloop.tools.base import ToolContext, ToolResult
from codeloop.tools.input import input_error
from codeloop.types import TextBlock

if TYPE_CHECKING:
    from pydantic import BaseModel


class FunctionTool:
    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
    ) -> None:
        from pydantic import ConfigDict, create_model

        self.function = function
        self.name = name or function.__name__
        self.description = description or inspect.getdoc(function) or self.name
        self.read_only = read_only
        hints = get_type_hints(function)
        fields: dict[str, Any] = {}
        for param in inspect.signature(function).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"tool {self.name}: *args and **kwargs cannot be a schema")
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (hints.get(param.name, Any), default)
        self.model = create_model(
            f"{self.name}_input", __config__=ConfigDict(extra="forbid"), **fields
        )

    def spec(self) -> ToolSpec:
        return spec_of(self.name, self.description, self.model)

    def parse(self, raw: dict[str, Any]) -> Any:
        return validated(self.name, self.model, raw)

    def is_read_only(self, args: Any) -> bool:
        return self.read_only

    def is_concurrency_safe(self, args: Any) -> bool:
        return self.read_only

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        kwargs = {name: getattr(args, name) for name in type(args).model_fields}
        try:
            if inspect.iscoroutinefunction(self.function):
                value = await self.function(**kwargs)
            else:
                value = await asyncio.to_thread(self.function, **kwargs)
        except Exception as exc:
            return ToolResult.error(f"{type(exc).__name__}: {exc}")
        return as_result(value)


M = TypeVar("M", bound="BaseModel")


def validated(name: str, model: type[M], raw: dict[str, Any]) -> M:
    """A function's input checked against its pydantic model (any type hint may be a
    parameter's, so these keep pydantic); ToolInputError says what is wrong."""
    from pydantic import ValidationError

    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = [(".".join(str(p) for p in err["loc"]), err["msg"]) for err in exc.errors()]
        raise input_error(name, problems) from None


def spec_of(name: str, description: str, model: type[BaseModel]) -> ToolSpec:
    """What the model is told of a tool: its input model's JSON schema."""
    schema = model.model_json_schema(by_alias=True)
    definitions = schema.pop("$defs", {})
    return ToolSpec(name, description, _plain(schema, definitions))


def _plain(schema: Any, definitions: dict[str, Any]) -> Any:
    """A schema as Claude Code's tools send theirs: nested models written out in place (no
    `$defs`/`$ref`, which some servers' grammars do not follow), no generated titles."""
    if isinstance(schema, list):
        return [_plain(item, definitions) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return _plain({**definitions[ref.removeprefix("#/$defs/")], **rest}, definitions)
    plain: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            plain[key] = {name: _plain(prop, definitions) for name, prop in value.items()}
        else:
            plain[key] = _plain(value, definitions)
    return plain


def as_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        texts = [
            TextBlock(str(block.get("text", "")))
            for block in value["content"]
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        return ToolResult(tuple(texts), is_error=value.get("is_error") is True)
    return ToolResult(json.dumps(value, default=str, ensure_ascii=False))
