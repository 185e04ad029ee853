"""The `__init__` templates stored compiled (codeloop/system/valueclass_templates.py) are those
codeloop's value classes need, as the writer writes them; a class of another shape compiles
its own."""

from __future__ import annotations

import dataclasses
import types
from dataclasses import field

import pytest

from codeloop.system import valueclass_templates
from codeloop.system.valueclass import template_key, template_name, valueclass
from codeloop.testing.valueclass_writer import (
    COMMAND,
    TEMPLATES_FILE,
    declared_keys,
    module_source,
)


def test_the_stored_templates_are_those_codeloop_s_value_classes_need() -> None:
    keys, unimportable = declared_keys()
    stored = {
        name
        for name, value in vars(valueclass_templates).items()
        if isinstance(value, types.FunctionType)
    }
    needed = {template_name(*key) for key in keys}
    assert sorted(needed - stored) == [], f"templates missing: run `{COMMAND}`"
    if unimportable:
        pytest.skip(f"the value classes of {unimportable} are unknown without their extras")
    assert sorted(stored - needed) == [], f"templates no class uses: run `{COMMAND}`"
    written = TEMPLATES_FILE.read_text(encoding="utf-8")
    assert written == module_source(keys), f"not what the writer writes: run `{COMMAND}`"


@valueclass(frozen=False)
class Odd:
    """A shape none of codeloop's classes has: mutable, a field set outside the signature, a
    keyword-only one, a `__post_init__`."""

    first: int
    later: list[int] = field(init=False, default_factory=list)
    tag: str = field(default="t", kw_only=True)

    def __post_init__(self) -> None:
        self.later.append(self.first)


@valueclass
class Plain:
    """A shape codeloop's classes have: two positional fields, frozen."""

    a: int
    b: str = "b"


def test_a_class_of_a_shape_not_stored_compiles_its_own_template() -> None:

    key = template_key(Odd, dataclasses.fields(Odd))
    assert not hasattr(valueclass_templates, template_name(*key))
    odd = Odd(1, tag="x")
    assert (odd.first, odd.later, odd.tag, Odd(2).tag, Odd(3).later) == (1, [1], "x", "t", [3])
    with pytest.raises(TypeError, match="'first'"):
        Odd()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        Odd(1, [])  # type: ignore[call-arg, arg-type]
    assert Odd.__init__.__code__.co_filename == "<valueclass>"
    assert (Odd.__init__.__name__, Odd.__init__.__qualname__) == ("__init__", "Odd.__init__")


def test_a_class_of_a_stored_shape_takes_the_stored_code() -> None:
    assert Plain(1) == Plain(1, "b") and Plain(2, b="c").b == "c"
    code = Plain.__init__.__code__
    assert code.co_filename == valueclass_templates.__file__
    assert (code.co_name, code.co_qualname) == ("__init__", "Plain.__init__")
    assert code.co_varnames[:3] == ("_vc_self", "a", "b")
