"""Tool inputs without pydantic: a tool's input is a `ToolInput` subclass, declared as a frozen
keyword-only dataclass is, whose fields say in `Annotated[..., Arg(...)]` what the model is told
of them:

    class GlobInput(ToolInput):
        pattern: Annotated[str, Arg("Glob pattern to match")]
        path: Annotated[str | None, Arg("Directory to search in")] = None

One declaration gives both the JSON Schema the model sees (`input_schema`, stored in
specs.json) and the check of a call's input against it (`parse_input`). Importing pydantic and
building its models cost ~130 ms, which the first tool call of a run waited for.

The schema subset is what the tools need: string, integer, boolean, enums of strings, arrays,
nested objects; bounds (minimum, maximum, exclusiveMinimum, minLength, minItems, maxItems);
defaults; unknown fields refused. Inputs are taken as pydantic's lax mode took them, so a
model's input that worked before still works: `null` counts as an omitted field (local runtimes
send it), integers may come as integral floats or numeric strings, booleans as 0/1 or
"true"/"false". Errors keep pydantic's wording, one per wrong field ("timeout: Input should be
greater than 0"), without its per-union-member repetitions.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, Union

from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass


class ToolInputError(Exception):
    """Input that does not fit the tool's schema; the message is written for the model."""


@valueclass(slots=True)
class Arg:
    """What the model is told of one field (its description, bounds) and the names it goes by:
    `alias` on the wire (Grep's "-B"), `accepts` older names also taken (BashOutput's
    "bash_id"); a `hidden` field is accepted but not shown (filled in by an SDK callback)."""

    description: str | None = None
    alias: str | None = None
    accepts: tuple[str, ...] = ()
    hidden: bool = False
    minimum: int | None = None
    maximum: int | None = None
    exclusive_minimum: int | None = None
    min_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None

    def bounds(self) -> dict[str, int]:
        """The bounds as JSON Schema keywords."""
        named = {
            "minimum": self.minimum,
            "maximum": self.maximum,
            "exclusiveMinimum": self.exclusive_minimum,
            "minLength": self.min_length,
            "minItems": self.min_items,
            "maxItems": self.max_items,
        }
        return {key: value for key, value in named.items() if value is not None}


@typing.dataclass_transform(kw_only_default=True, frozen_default=True)
class ToolInput:
    """The base of every tool's input: each subclass behaves as a frozen, keyword-only
    dataclass, with the base's methods rather than ones generated per class (`dataclasses`
    compiles each class's own: ~0.5-1 ms a class, paid when a tool first loads)."""

    __slots__ = ()

    def __init__(self, **values: Any) -> None:
        for field in fields_of(type(self)):
            if field.name in values:
                value = values.pop(field.name)
            elif field.required:
                raise TypeError(f"{type(self).__name__} needs {field.name}")
            else:
                value = field.default
            object.__setattr__(self, field.name, value)
        if values:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(values)}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field.name) for field in fields_of(type(self)))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ToolInput)
            and type(other) is type(self)
            and (self._values() == other._values())
        )

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        given = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields_of(type(self)))
        return f"{type(self).__name__}({given})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    @classmethod
    def prepared(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """The raw input as checked: a tool whose older callers sent another shape adapts it."""
        return raw


In = TypeVar("In", bound=ToolInput)
Problem = tuple[str, str]  # where (dotted path, "" for the input itself), what is wrong


@valueclass(slots=True)
class Kind:
    """One value's expected type: `name` is its JSON Schema type, `enum` its allowed strings,
    `items` an array's items or a map's values, `shape` a nested input's fields."""

    name: Literal["string", "integer", "boolean", "array", "object", "any"]
    enum: tuple[str, ...] = ()
    items: Kind | None = None
    shape: type[ToolInput] | None = None


@valueclass(slots=True)
class Field:
    name: str
    kind: Kind
    arg: Arg
    required: bool
    default: Any

    @property
    def wire(self) -> str:
        return self.arg.alias or self.name

    @property
    def names(self) -> tuple[str, ...]:
        """The keys this field is read from, in order of preference."""
        own = (self.wire, self.name) if self.arg.alias else (self.name,)
        return (*own, *self.arg.accepts)


_FIELDS: dict[type[ToolInput], tuple[Field, ...]] = {}


def fields_of(cls: type[ToolInput]) -> tuple[Field, ...]:
    """The declared fields of an input dataclass, read once per class (two threads reading
    it at once both get the same)."""
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = _declared(cls)
    return known


def _declared(cls: type[ToolInput]) -> tuple[Field, ...]:
    out = []
    for name, hint in annotations_of(cls).items():
        arg = Arg()
        if typing.get_origin(hint) is typing.Annotated:
            hint, *extras = typing.get_args(hint)
            arg = next((e for e in extras if isinstance(e, Arg)), arg)
        default = getattr(cls, name, _REQUIRED)
        out.append(Field(name, _kind(hint), arg, default is _REQUIRED, default))
    return tuple(out)


_REQUIRED = object()


def annotations_of(cls: type) -> dict[str, Any]:
    """`typing.get_type_hints(cls, include_extras=True)` for a tool input: each class's string
    annotations evaluated as one expression, in the same namespaces (its module's first, then
    its own), where get_type_hints compiles each on its own (~0.1 ms a field: half a
    millisecond of the first Bash call)."""
    hints: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        own = inspect.get_annotations(base)
        written = [name for name, value in own.items() if isinstance(value, str)]
        values: tuple[Any, ...] = ()
        if written:
            module = getattr(sys.modules.get(base.__module__), "__dict__", {})
            source = "(" + "".join(f"({own[name]}),\n" for name in written) + ")"
            values = eval(source, dict(vars(base)), module)  # its own annotations, as written
        evaluated = dict(zip(written, values, strict=True))
        for name, value in own.items():
            hint = evaluated.get(name, value)
            hints[name] = type(None) if hint is None else hint
    return hints


def _kind(hint: Any) -> Kind:
    origin, params = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        rest = [p for p in params if p is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"a tool input field is one type or that type or None: {hint}")
        return _kind(rest[0])
    if origin is Literal:
        if not all(isinstance(p, str) for p in params):
            raise TypeError(f"tool input enums are strings: {hint}")
        return Kind("string", enum=params)
    if origin is list:
        return Kind("array", items=_kind(params[0]))
    if origin is dict:
        return Kind("object", items=_kind(params[1]))
    if isinstance(hint, type) and issubclass(hint, ToolInput):
        return Kind("object", shape=hint)
    simple = {str: "string", int: "integer", bool: "boolean"}
    if hint in simple:
        return Kind(simple[hint])  # type: ignore[arg-type]
    if hint is Any:
        return Kind("any")
    raise TypeError(f"no JSON Schema for a tool input of type {hint}")


# --- the schema the model sees ---------------------------------------------------------------


def input_schema(cls: type[ToolInput]) -> dict[str, Any]:
    """The JSON Schema of an input, as Claude Code's tools send theirs: nested objects written
    in place, keys sorted, no titles; hidden fields left out."""
    properties = {}
    required = []
    for field in fields_of(cls):
        if field.arg.hidden:
            continue
        schema = {**_schema(field.kind), **field.arg.bounds()}
        if field.arg.description is not None:
            schema["description"] = field.arg.description
        if field.required:
            required.append(field.wire)
        else:
            schema["default"] = field.default
        properties[field.wire] = dict(sorted(schema.items()))
    schema = {"additionalProperties": False, "properties": properties, "type": "object"}
    if required:
        schema["required"] = required
    return dict(sorted(schema.items()))


def _schema(kind: Kind) -> dict[str, Any]:
    if kind.shape is not None:
        return input_schema(kind.shape)
    if kind.name == "any":
        return {}
    schema: dict[str, Any] = {"type": kind.name}
    if kind.enum:
        schema["enum"] = list(kind.enum)
    if kind.name == "array" and kind.items is not None:
        schema["items"] = _schema(kind.items)
    elif kind.items is not None:  # a map: any values, or values of one kind
        schema["additionalProperties"] = _schema(kind.items) if kind.items.name != "any" else True
    return schema


# --- checking a call's input -----------------------------------------------------------------


def parse_input(tool: str, cls: type[In], raw: Any) -> In:
    """A call's input checked against its declaration; ToolInputError says, for the model,
    every field that is wrong and how."""
    problems: list[Problem] = []
    value = _object(cls, raw, "", problems)
    if problems:
        raise input_error(tool, problems)
    return typing.cast(In, value)


def input_error(tool: str, problems: list[Problem]) -> ToolInputError:
    """The one wording of a bad input (FunctionTool's pydantic errors use it too)."""
    said = "; ".join(f"{where or 'input'}: {what}" for where, what in problems)
    return ToolInputError(f"InputValidationError: {tool} {said}")


def _object(cls: type[ToolInput], raw: Any, where: str, problems: list[Problem]) -> Any:
    if not isinstance(raw, dict):
        expected = f"Input should be a valid dictionary or instance of {cls.__name__}"
        problems.append((where, expected))
        return None
    data = cls.prepared({key: value for key, value in raw.items() if value is not None})
    values: dict[str, Any] = {}
    taken: set[str] = set()
    before = len(problems)
    for field in fields_of(cls):
        key = next((name for name in field.names if name in data), None)
        taken.add(key or field.wire)  # a second name of the same field is refused
        if key is None:
            if field.required:
                problems.append((_at(where, field.wire), "Field required"))
            continue
        values[field.name] = _value(field.kind, field.arg, data[key], _at(where, key), problems)
    for key in data:
        if key not in taken:
            problems.append((_at(where, key), "Extra inputs are not permitted"))
    return cls(**values) if len(problems) == before else None


def _at(where: str, key: str | int) -> str:
    return f"{where}.{key}" if where else str(key)


def _value(kind: Kind, arg: Arg, raw: Any, where: str, problems: list[Problem]) -> Any:
    if kind.shape is not None:
        return _object(kind.shape, raw, where, problems)
    check = _CHECKS[kind.name]
    value, wrong = check(kind, raw, where, problems)
    if wrong is not None:
        problems.append((where, wrong))
        return None
    wrong = _out_of_bounds(arg, value)
    if wrong is not None:
        problems.append((where, wrong))
    return value


Checked = tuple[Any, str | None]  # the value as the tool gets it, or what is wrong with it
_INTEGER = LazyPattern(r"\s*[+-]?[0-9]+(?:_[0-9]+)*(?:\.0*)?\s*")
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _string(kind: Kind, raw: Any, where: str, problems: list[Problem]) -> Checked:
    if kind.enum:
        if raw in kind.enum:
            return raw, None
        quoted = [f"'{option}'" for option in kind.enum]
        said = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        return None, f"Input should be {said}"
    if isinstance(raw, str):
        return raw, None
    return None, "Input should be a valid string"


def _integer(kind: Kind, raw: Any, where: str, problems: list[Problem]) -> Checked:
    if isinstance(raw, int):
        return int(raw), None
    if isinstance(raw, float):
        if not math.isfinite(raw):
            return None, "Input should be a finite number"
        if raw.is_integer():
            return int(raw), None
        return None, "Input should be a valid integer, got a number with a fractional part"
    if isinstance(raw, str):
        if _INTEGER.fullmatch(raw):
            return int(raw.strip().partition(".")[0]), None
        return None, "Input should be a valid integer, unable to parse string as an integer"
    return None, "Input should be a valid integer"


def _boolean(kind: Kind, raw: Any, where: str, problems: list[Problem]) -> Checked:
    if isinstance(raw, bool):
        return raw, None
    if isinstance(raw, int | float) and raw in (0, 1):
        return bool(raw), None
    if isinstance(raw, str) and raw.lower() in _TRUE | _FALSE:
        return raw.lower() in _TRUE, None
    if isinstance(raw, int | float | str):
        return None, "Input should be a valid boolean, unable to interpret input"
    return None, "Input should be a valid boolean"


def _array(kind: Kind, raw: Any, where: str, problems: list[Problem]) -> Checked:
    if not isinstance(raw, list):
        return None, "Input should be a valid list"
    assert kind.items is not None
    items = [_value(kind.items, Arg(), item, _at(where, i), problems) for i, item in enumerate(raw)]
    return items, None


def _map(kind: Kind, raw: Any, where: str, problems: list[Problem]) -> Checked:
    if not isinstance(raw, dict):
        return None, "Input should be a valid dictionary"
    assert kind.items is not None
    return {k: _value(kind.items, Arg(), v, _at(where, k), problems) for k, v in raw.items()}, None


def _any(kind: Kind, raw: Any, where: str, problems: list[Problem]) -> Checked:
    return raw, None


_CHECKS: Mapping[str, Callable[[Kind, Any, str, list[Problem]], Checked]] = {
    "string": _string,
    "integer": _integer,
    "boolean": _boolean,
    "array": _array,
    "object": _map,
    "any": _any,
}


def _out_of_bounds(arg: Arg, value: Any) -> str | None:
    if isinstance(value, str) and arg.min_length is not None and len(value) < arg.min_length:
        unit = "character" if arg.min_length == 1 else "characters"
        return f"String should have at least {arg.min_length} {unit}"
    if isinstance(value, list):
        for limit, short in ((arg.min_items, True), (arg.max_items, False)):
            if limit is not None and (len(value) < limit if short else len(value) > limit):
                unit = "item" if limit == 1 else "items"
                side = "at least" if short else "at most"
                return f"List should have {side} {limit} {unit} after validation, not {len(value)}"
    if isinstance(value, int) and not isinstance(value, bool):
        if arg.exclusive_minimum is not None and value <= arg.exclusive_minimum:
            return f"Input should be greater than {arg.exclusive_minimum}"
        if arg.minimum is not None and value < arg.minimum:
            return f"Input should be greater than or equal to {arg.minimum}"
        if arg.maximum is not None and value > arg.maximum:
            return f"Input should be less than or equal to {arg.maximum}"
    return None


def wire_input(args: ToolInput) -> dict[str, Any]:
    """An input as the model would have sent it (wire names, nested inputs as objects, omitted
    fields left out): what permission callbacks and rules see."""
    out: dict[str, Any] = {}
    for field in fields_of(type(args)):
        value = getattr(args, field.name)
        if value is not None:
            out[field.wire] = _wire(value)
    return out


def _wire(value: Any) -> Any:
    if isinstance(value, ToolInput):
        return wire_input(value)
    if isinstance(value, list):
        return [_wire(item) for item in value]
    return value
