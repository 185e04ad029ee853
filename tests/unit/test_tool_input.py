"""Tool inputs are checked without pydantic, against the schema the model is shown: what the
schema allows reaches the tool unchanged (defaults filled in), what a tool receives always
fits the schema, and the loose forms models send (and pydantic's lax mode took) still work."""

from __future__ import annotations

import typing
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeloop.tools.base import Tool, ToolInputError
from codeloop.tools.input import ToolInput, annotations_of, fields_of, wire_input
from codeloop.tools.registry import BUILTINS, ON_DEMAND, _construct, declared_specs

TOOLS = {name: _construct(target) for name, target in (*BUILTINS, *ON_DEMAND)}
SPECS = declared_specs()

# Any JSON value, the shapes the specs use among them.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 700_000),
    st.sampled_from([0.0, 1.0, 1.5, -2.0, 600_000.0]),
    st.text(max_size=4),
    st.sampled_from(["5", "true", "no", "content", "pending", "code", "insert", "opus"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


def _fitting(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that fit a schema, and (one time in four) any JSON value."""
    if "enum" in schema:
        good: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
    elif schema.get("type") == "string":
        good = st.text(min_size=schema.get("minLength", 0), max_size=6)
    elif schema.get("type") == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -6) + 1)
        good = st.integers(low - 1, schema.get("maximum", 1_000) + 1)
    elif schema.get("type") == "boolean":
        good = st.booleans()
    elif schema.get("type") == "array":
        items = _fitting(schema["items"])
        good = st.lists(items, max_size=schema.get("maxItems", 3) + 1)
    elif "properties" in schema:
        good = _objects(schema)
    else:  # a map of any values
        good = st.dictionaries(st.text(max_size=3), JSON, max_size=3)
    return st.one_of(good, good, good, JSON)


def _objects(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Any] = schema["properties"]
    required = set(schema.get("required", ()))

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        out = {}
        for name, sub in properties.items():
            if draw(st.integers(0, 9)) < (9 if name in required else 5):
                out[name] = draw(_fitting(sub))
        if draw(st.integers(0, 19)) == 0:
            out[draw(st.sampled_from(["extra", "file", "cmd"]))] = draw(JSON)
        return out

    return build()


def _shown(value: Any) -> Any:
    """What a tool received, as the model would have written it, hidden fields left out."""
    if isinstance(value, ToolInput):
        fields = [f for f in fields_of(type(value)) if not f.arg.hidden]
        given = {f.wire: getattr(value, f.name) for f in fields}
        return {key: _shown(item) for key, item in given.items() if item is not None}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


def _defaults(schema: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """The input with the schema's defaults filled in (None ones are omitted fields)."""
    out = dict(raw)
    for name, sub in schema["properties"].items():
        if name not in out and sub.get("default") is not None:
            out[name] = sub["default"]
        elif name in out and "properties" in sub:
            out[name] = _defaults(sub, out[name])
        elif name in out and sub.get("type") == "array" and "properties" in sub["items"]:
            out[name] = [_defaults(sub["items"], item) for item in out[name]]
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_check_agrees_with_json_schema_over_the_real_specs(
    name: str, data: st.DataObject
) -> None:
    schema = SPECS[name].input_schema
    raw = data.draw(_objects(schema))
    fits = jsonschema.Draft202012Validator(schema).is_valid(raw)
    try:
        args = TOOLS[name].parse(raw)
    except ToolInputError:
        assert not fits, f"{name} refused an input its schema allows: {raw}"
        return
    received = _shown(args)
    assert jsonschema.Draft202012Validator(schema).is_valid(received), (raw, received)
    if fits:
        assert received == _defaults(schema, raw)


def test_what_the_schema_refuses_is_named_for_the_model() -> None:
    def error(tool: str, raw: Any) -> str:
        with pytest.raises(ToolInputError) as caught:
            TOOLS[tool].parse(raw)
        return str(caught.value)

    assert error("Bash", {}) == "InputValidationError: Bash command: Field required"
    assert error("Bash", {"command": 3, "timeout": 0}) == (
        "InputValidationError: Bash command: Input should be a valid string; "
        "timeout: Input should be greater than 0"
    )
    assert error("Read", {"file_path": "a", "path": "b"}) == (
        "InputValidationError: Read path: Extra inputs are not permitted"
    )
    assert error("Grep", {"pattern": "x", "output_mode": "lines"}) == (
        "InputValidationError: Grep output_mode: Input should be 'content', "
        "'files_with_matches' or 'count'"
    )
    assert error("TodoWrite", {"todos": [{"content": "a", "status": "doing"}]}) == (
        "InputValidationError: TodoWrite todos.0.status: Input should be 'pending', "
        "'in_progress' or 'completed'; todos.0.activeForm: Field required"
    )
    assert error("AskUserQuestion", {"questions": []}) == (
        "InputValidationError: AskUserQuestion questions: List should have at least 1 item "
        "after validation, not 0"
    )
    assert error("Bash", ["ls"]) == (
        "InputValidationError: Bash input: Input should be a valid dictionary or instance of "
        "BashInput"
    )
    assert "Input should be a valid integer" in error("Read", {"file_path": "a", "limit": "all"})


def test_the_loose_forms_models_send_are_taken_as_pydantic_took_them() -> None:
    bash = TOOLS["Bash"]
    assert bash.parse({"command": "x", "timeout": "5000"}).timeout == 5000
    assert bash.parse({"command": "x", "timeout": 5000.0}).timeout == 5000
    assert bash.parse({"command": "x", "timeout": " 1_000 "}).timeout == 1000
    for refused in ("5s", "1e3", 1.5, "1.5", [5]):
        with pytest.raises(ToolInputError, match="timeout: Input should be a valid integer"):
            bash.parse({"command": "x", "timeout": refused})
    for said, meant in (("true", True), ("No", False), (1, True), (0.0, False), ("off", False)):
        assert bash.parse({"command": "x", "run_in_background": said}).run_in_background is meant
    wrong: object
    for wrong in (2, "maybe", [], "", {}):
        with pytest.raises(ToolInputError, match="run_in_background"):
            bash.parse({"command": "x", "run_in_background": wrong})
    # null is an omitted field, at any depth
    todo = TOOLS["TodoWrite"].parse(
        {"todos": [{"content": "a", "status": "pending", "activeForm": "A", "x": None}]}
    )
    assert wire_input(todo) == {"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]}


def test_other_names_and_hidden_fields() -> None:
    grep = TOOLS["Grep"].parse({"pattern": "x", "-B": 2, "ignore_case": True})
    assert (grep.before, grep.ignore_case) == (2, True)
    assert wire_input(grep)["-B"] == 2
    with pytest.raises(ToolInputError, match="before: Extra inputs are not permitted"):
        TOOLS["Grep"].parse({"pattern": "x", "-B": 2, "before": 3})
    # BashOutput's names: bash_id answers at once, unless it asks to wait
    output = TOOLS["TaskOutput"]
    assert (output.parse({"bash_id": "b1"}).task_id, output.parse({"bash_id": "b1"}).block) == (
        "b1",
        False,
    )
    assert output.parse({"shell_id": "b1"}).block is True
    # answers filled in by a permission callback are accepted, and not shown to the model
    question = {
        "question": "Which?",
        "header": "H",
        "options": [{"label": "a", "description": "A"}] * 2,
    }
    asked = TOOLS["AskUserQuestion"].parse({"questions": [question], "answers": {"Which?": "a"}})
    assert asked.answers == {"Which?": "a"}
    assert "answers" not in SPECS["AskUserQuestion"].input_schema["properties"]


def test_an_input_behaves_as_a_frozen_keyword_only_dataclass() -> None:
    from codeloop.tools.bash import BashInput

    args = BashInput(command="ls")
    assert (args.command, args.timeout, args.description) == ("ls", 120_000, None)
    assert args == TOOLS["Bash"].parse({"command": "ls"}) and args != BashInput(command="pwd")
    assert hash(args) == hash(BashInput(command="ls"))
    assert repr(args).startswith("BashInput(command='ls', timeout=120000")
    with pytest.raises(AttributeError):
        args.command = "rm"  # type: ignore[misc]
    with pytest.raises(TypeError, match="needs command"):
        BashInput()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no field cmd"):
        BashInput(command="ls", cmd="x")  # type: ignore[call-arg]


def _input_classes() -> set[type[ToolInput]]:
    """Every tool's input class, and the inputs nested in them (their subclasses too)."""
    found: set[type[ToolInput]] = set()
    todo: list[type[ToolInput]] = [
        tool.input_model for tool in TOOLS.values() if isinstance(tool, Tool)
    ]
    while todo:
        cls = todo.pop()
        if cls not in found:
            found.add(cls)
            todo.extend(cls.__subclasses__())
    return found


def test_annotations_are_read_as_typing_reads_them() -> None:
    """annotations_of evaluates a class's annotations in one go: what get_type_hints gives."""
    classes = _input_classes()
    assert len(classes) >= len(TOOLS)
    for cls in classes:
        assert annotations_of(cls) == typing.get_type_hints(cls, include_extras=True), cls
