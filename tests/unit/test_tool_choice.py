"""`ModelRequest.tool_choice = "none"` in each API's words, as the bytes each client sends:
the tools still go (the prompt's cached prefix holds), the answer may call none of them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeloop.models import anthropic, openai, responses
from codeloop.models.base import ModelRequest, ToolSpec
from codeloop.models.local import LocalModel
from codeloop.types import Message

SCHEMA = {
    "type": "object",
    "properties": {"file_path": {"type": "string"}},
    "required": ["file_path"],
}
TOOLS = (ToolSpec("Read", "Read a file.", SCHEMA),)
ENCODERS: dict[str, tuple[Callable[[ModelRequest], bytes], Any]] = {
    "anthropic": (anthropic.encode_body, {"type": "none"}),
    "openai": (openai.encode_body, "none"),
    "responses": (responses.encode_body, "none"),
}


def request(**fields: Any) -> ModelRequest:
    return ModelRequest("m", (Message.user("hi"),), system="Be brief.", tools=TOOLS, **fields)


@pytest.mark.parametrize("api", sorted(ENCODERS))
def test_none_is_said_in_each_apis_words_with_the_tools_kept(api: str) -> None:
    encode, none = ENCODERS[api]
    body = json.loads(encode(request(tool_choice="none")))
    assert body["tool_choice"] == none
    assert [t.get("name") or t["function"]["name"] for t in body["tools"]] == ["Read"]
    assert "tool_choice" not in json.loads(encode(request()))  # auto: the APIs' default


@pytest.mark.parametrize("api", sorted(ENCODERS))
def test_without_tools_no_tool_choice_is_sent(api: str) -> None:
    """Chat Completions refuses a tool_choice without tools (the fake server does too)."""
    encode, _ = ENCODERS[api]
    bare = ModelRequest("m", (Message.user("hi"),), tool_choice="none")
    assert "tool_choice" not in json.loads(encode(bare))


@pytest.mark.parametrize("api", sorted(ENCODERS))
def test_request_overrides_have_the_last_word(api: str) -> None:
    encode, _ = ENCODERS[api]
    body = json.loads(encode(request(tool_choice="none", extra={"tool_choice": "auto"})))
    assert body["tool_choice"] == "auto"


def test_the_local_model_may_only_answer_and_still_lists_the_tools() -> None:
    model = LocalModel(Path("unused.gguf"))
    body = model._body(request(tool_choice="none"))
    assert [list(v["properties"]) for v in body["json_schema"]["oneOf"]] == [["answer"]]
    assert body["messages"][0] == model._body(request())["messages"][0]
