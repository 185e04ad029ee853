"""Tool calls a model wrote as text instead of through the API's tool calling.

Small local models, and servers whose chat template does not parse their family's native
format, answer with the call in the text: Qwen and Hermes wrap it in `<tool_call>` tags (Qwen3
Coder writes `<function=NAME><parameter=KEY>` inside), Llama 3.1 starts it with
`<|python_tag|>` or writes `<function=NAME>{...}</function>`, Mistral leads with
`[TOOL_CALLS]`, Gemma and Llama 3.2 write Python calls (in a ```tool_code block, or as a list
`[NAME(key=value)]`), and many write a ```json block (or a bare object) with a name and its
arguments. Those native markers say "this is a call" by themselves; a JSON block or object,
or a Python call, is taken for one only when it names a tool that exists, so an answer that
merely shows some JSON or code stays an answer. A leaf over the standard library and the
lenient JSON reader.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from codeloop.models.lenient_json import loads_lenient
from codeloop.system.valueclass import valueclass

# The keys a call's name and its arguments go by across the formats models copy.
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "input", "parameters", "args", "tool_input")

_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|$)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?</parameter>", re.DOTALL)
_PYTHON_TAG = re.compile(r"<\|python_tag\|>(.*?)(?:<\|eom_id\|>|<\|eot_id\|>|$)", re.DOTALL)
_MISTRAL = re.compile(r"\[TOOL_CALLS\](.*?)(?:</s>|$)", re.DOTALL)
_MISTRAL_NAMED = re.compile(r"\s*([\w.-]+)\[ARGS\]")
_FENCED = re.compile(r"```[\w-]*[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL)  # json, tool_code, …
_CALL_START = re.compile(r"\[?\s*\w+\(")
_QUOTED_NAME = re.compile(r'"(?:name|tool)"\s*:\s*"([^"]+)"')

# The real name of a tool a model wrote (any case, an old name), or None when it is no tool.
Resolve = Callable[[str], str | None]


@valueclass(slots=True)
class WrittenCall:
    name: str
    input: dict[str, Any]
    # Set when the arguments could not be read: the call is refused with this, not dropped.
    input_error: str | None = None


@valueclass(slots=True)
class Found:
    """The calls a text holds, and the text around them."""

    calls: tuple[WrittenCall, ...]
    rest: str


def find_calls(text: str, resolve: Resolve) -> Found | None:
    """The tool calls written in `text`, or None when it holds none. The native markers are
    looked for first; only without them is a JSON block or object read as a call."""
    native = (
        (_TAGGED, _tagged),
        (_FUNCTION, _function_tag),
        (_PYTHON_TAG, _python_tag),
        (_MISTRAL, _mistral),
    )
    for pattern, read in native:
        found = _spans(text, pattern, read)
        if found is not None:
            return found
    found = _spans(text, _FENCED, lambda match: _unmarked_calls(match[1], resolve))
    if found is not None:
        return found
    calls = _unmarked_calls(text, resolve)
    return Found(calls, "") if calls else None


def _spans(
    text: str, pattern: re.Pattern[str], read: Callable[[re.Match[str]], tuple[WrittenCall, ...]]
) -> Found | None:
    """Every match of `pattern` read as calls, cut out of the text."""
    calls: list[WrittenCall] = []
    rest: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        read_here = read(match)
        if not read_here:
            continue
        calls += read_here
        rest.append(text[position : match.start()])
        position = match.end()
    if not calls:
        return None
    rest.append(text[position:])
    return Found(tuple(calls), "".join(rest).strip())


def _tagged(match: re.Match[str]) -> tuple[WrittenCall, ...]:
    """`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, or Qwen3 Coder's
    `<function=NAME>` parameters inside the tags."""
    body = match[1].strip()
    inner = _FUNCTION.search(body)
    if inner is not None:
        return _function_tag(inner)
    return _native_json(body)


def _function_tag(match: re.Match[str]) -> tuple[WrittenCall, ...]:
    """`<function=NAME>` with a JSON object (Llama 3.1) or `<parameter=KEY>VALUE</parameter>`
    elements (Qwen3 Coder) inside."""
    name, body = match[1], match[2].strip()
    parameters = _PARAMETER.findall(body)
    if parameters:
        return (WrittenCall(name, {key: _parameter(value) for key, value in parameters}),)
    return (_with_arguments(name, body or "{}"),)


def _parameter(value: str) -> Any:
    """A parameter's text: JSON when it is a JSON value other than a string, else the text."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    return value if isinstance(parsed, str) else parsed


def _python_tag(match: re.Match[str]) -> tuple[WrittenCall, ...]:
    """Llama 3.1's `<|python_tag|>{"name": ..., "parameters": {...}}`, several joined by `;`."""
    body = match[1].strip()
    calls = _native_json(body)
    if calls or ";" not in body:
        return calls
    return tuple(call for part in body.split(";") for call in _native_json(part.strip()))


def _mistral(match: re.Match[str]) -> tuple[WrittenCall, ...]:
    """`[TOOL_CALLS] [{"name": ..., "arguments": {...}}]`, or the newer
    `[TOOL_CALLS]NAME[ARGS]{...}`."""
    body = match[1]
    named = _MISTRAL_NAMED.match(body)
    if named is None:
        return _native_json(body.strip())
    return (_with_arguments(named[1], body[named.end() :].strip()),)


def _native_json(body: str) -> tuple[WrittenCall, ...]:
    """A native marker's JSON: whatever name it gives is a call (the executor refuses a tool
    that does not exist, naming those that do); unreadable JSON with a name is a call whose
    input is refused, so the model learns why."""
    try:
        value = loads_lenient(body)
    except ValueError as exc:
        name = _QUOTED_NAME.search(body)
        if name is None:
            return ()
        return (WrittenCall(name[1], {}, f"the tool call is not valid JSON ({exc}): {body[:200]}"),)
    return tuple(_calls_in(value))


def _unmarked_calls(text: str, resolve: Resolve) -> tuple[WrittenCall, ...]:
    """Calls written without a marker, as JSON or as Python, every one naming a tool that
    exists: anything else is left as text."""
    stripped = text.strip()
    calls = _json_calls(stripped) or _python_calls(stripped)
    if any(resolve(call.name) is None for call in calls):
        return ()
    return calls


def _json_calls(text: str) -> tuple[WrittenCall, ...]:
    """A JSON object, or a list of them, each shaped like a call."""
    if not text.startswith(("{", "[")):
        return ()
    try:
        value = loads_lenient(text)
    except ValueError:
        return ()
    calls = tuple(_calls_in(value))
    if isinstance(value, list) and len(calls) != len(value):
        return ()
    return calls


def _python_calls(text: str) -> tuple[WrittenCall, ...]:
    """`NAME(key=value, ...)`, a list of them (Llama 3.2), or one inside `print(...)` (Gemma's
    tool_code), with literal values only: nothing is evaluated."""
    if not _CALL_START.match(text):
        return ()
    try:
        body = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return ()
    nodes = body.elts if isinstance(body, ast.List) else [body]
    calls = []
    for node in nodes:
        if isinstance(node, ast.Call) and _called(node) == "print" and len(node.args) == 1:
            node = node.args[0]
        name = _called(node)
        if name is None or not isinstance(node, ast.Call) or node.args:
            return ()
        try:
            arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        except ValueError:
            return ()
        if len(arguments) != len(node.keywords):
            return ()  # a `**mapping`
        calls.append(WrittenCall(name, arguments))
    return tuple(calls)


def _called(node: ast.expr) -> str | None:
    """The name a call expression calls, if it is one of a plain name."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _calls_in(value: Any) -> Iterator[WrittenCall]:
    for item in value if isinstance(value, list) else [value]:
        call = _call(item)
        if call is not None:
            yield call


def _call(item: Any) -> WrittenCall | None:
    """One call object in any of the shapes models write, or None when it is not one."""
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):  # OpenAI's {"type": "function", "function": {...}}
        item = function
    name = next((item[key] for key in _NAME_KEYS if isinstance(item.get(key), str)), None)
    if not name or set(item) - {*_NAME_KEYS, *_ARGUMENT_KEYS, "type", "id"}:
        return None  # other keys: some JSON that happens to have a name, not a call
    arguments: Any = next((item[key] for key in _ARGUMENT_KEYS if key in item), {})
    if isinstance(arguments, str):
        return _with_arguments(name, arguments)
    if not isinstance(arguments, dict):
        return WrittenCall(name, {}, f"tool input must be a JSON object, got {arguments!r:.200}")
    return WrittenCall(name, arguments)


def _with_arguments(name: str, raw: str) -> WrittenCall:
    """A call whose arguments are JSON text (OpenAI's string, a native format's body)."""
    try:
        arguments = loads_lenient(raw)
    except ValueError as exc:
        return WrittenCall(name, {}, f"tool input is not valid JSON ({exc}): {raw[:200]}")
    if not isinstance(arguments, dict):
        return WrittenCall(name, {}, f"tool input must be a JSON object, got {raw[:200]}")
    return WrittenCall(name, arguments)
