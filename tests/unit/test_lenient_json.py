"""Tool arguments as weak models write them: read when the slip is a common one, refused with
the strict parser's words when the text is not JSON at all."""

from __future__ import annotations

import json

import pytest

from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import BlockDelta, BlockStart, BlockStop
from codeloop.models.lenient_json import loads_lenient
from codeloop.types import ToolUseBlock


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"command": "ls",}', {"command": "ls"}),
        ('{"paths": ["a", "b",],}', {"paths": ["a", "b"]}),
        ('```json\n{"command": "ls"}\n```', {"command": "ls"}),
        ("```\n{'command': 'ls'}\n```", {"command": "ls"}),
        ("{'command': 'echo \"hi\"'}", {"command": 'echo "hi"'}),
        (r"{'command': 'it\'s'}", {"command": "it's"}),
        (r'{"command": "it\'s"}', {"command": "it's"}),
        ('{command: "ls", run_in_background: True}', {"command": "ls", "run_in_background": True}),
        ('{"x": None, "y": False}', {"x": None, "y": False}),
        # what looks like a slip inside a string is the string's
        ('{"text": "a, } and \'b\', True",}', {"text": "a, } and 'b', True"}),
        ('{"content": "line one\nline two"}', {"content": "line one\nline two"}),
    ],
)
def test_common_slips_are_read(raw: str, expected: object) -> None:
    assert loads_lenient(raw) == expected


@pytest.mark.parametrize("raw", ['{"command": "ls"', '{"command": "ls"}}', "ls -la", ""])
def test_what_is_not_json_is_refused_with_the_strict_message(raw: str) -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        loads_lenient(raw)
    with pytest.raises(json.JSONDecodeError) as strict:
        json.loads(raw)
    assert str(caught.value) == str(strict.value)


def tool_input(raw: str) -> ToolUseBlock:
    assembler = MessageAssembler()
    assembler.feed(BlockStart(0, ToolUseBlock("t1", "Bash", {})))
    assembler.feed(BlockDelta(0, "input_json", raw))
    block = assembler.feed(BlockStop(0))
    assert isinstance(block, ToolUseBlock)
    return block


def test_every_providers_tool_input_is_read_leniently() -> None:
    """The assembler is where every provider's streamed arguments become a call's input."""
    assert tool_input('{"command": "ls",}').input == {"command": "ls"}
    cut = tool_input('{"command": "echo unfinished')
    assert cut.input == {} and cut.input_error is not None
    assert "not valid JSON" in cut.input_error
