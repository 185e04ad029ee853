"""`as_dataclass` makes the dataclass `dataclasses.dataclass` would (no methods): the same
fields, class attributes, `__match_args__` and slots; what it does not collect itself goes
to `dataclasses`, refusals included."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from codeloop.system.dataclass_fields import as_dataclass

FIELD_ATTRIBUTES = (
    "name",
    "type",
    "default",
    "default_factory",
    "init",
    "repr",
    "hash",
    "compare",
    "metadata",
    "kw_only",
)


def _bodies() -> list[Callable[[], type[Any]]]:
    """Class statements, each run afresh for each maker."""

    def plain() -> type[Any]:
        class Plain:
            a: int
            b: str = "b"
            c: list[int] = dataclasses.field(default_factory=list, repr=False)
            d: int = dataclasses.field(default=4, init=False, metadata={"m": 1})
            e: tuple[int, ...] = dataclasses.field(default=(), kw_only=True)

            def method(self) -> int:
                return 1

        return Plain

    def with_base() -> type[Any]:
        @dataclasses.dataclass
        class Base:
            x: int
            y: str = "y"

        class Child(Base):
            y: str = "z"
            w: float = 1.0

        return Child

    def no_fields() -> type[Any]:
        class Empty:
            """Nothing declared."""

        return Empty

    def shadowed() -> type[Any]:
        class Holder:
            inherited = 3

        class Shadowing(Holder):
            inherited: int
            mine: int = dataclasses.field(compare=False, hash=True)

        return Shadowing

    return [plain, with_base, no_fields, shadowed]


def _described(cls: type[Any]) -> dict[str, Any]:
    fields = dataclasses.fields(cls)
    return {
        "fields": [tuple(getattr(f, a) for a in FIELD_ATTRIBUTES) for f in fields],
        "all": list(cls.__dataclass_fields__),
        "match_args": cls.__match_args__,
        "attributes": {
            name: repr(cls.__dict__.get(name, "absent"))
            for name in (*cls.__dataclass_fields__, "m")
        },
        "slots": cls.__dict__.get("__slots__"),
        "qualname": cls.__qualname__,
        "dict": "__dict__" in dir(cls),
    }


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize("kw_only", [False, True])
def test_the_same_dataclass_as_dataclasses_makes(slots: bool, kw_only: bool) -> None:
    for body in _bodies():
        ours = as_dataclass(body(), slots=slots, kw_only=kw_only)
        theirs = dataclasses.dataclass(
            body(), init=False, repr=False, eq=False, slots=slots, kw_only=kw_only
        )
        assert _described(ours) == _described(theirs), body.__name__
        assert dataclasses.is_dataclass(ours)
        params = [getattr(c, "__dataclass_params__", None) for c in (ours, theirs)]
        assert repr(params[0]) == repr(params[1])


def test_a_dataclass_made_from_one_inherits_its_fields() -> None:
    made = as_dataclass(_bodies()[0](), slots=False, kw_only=False)
    body = {"__annotations__": {"z": "int"}, "z": 0}
    child: type[Any] = dataclasses.dataclass(type("Child", (made,), body))
    assert [f.name for f in dataclasses.fields(child)] == ["a", "b", "c", "d", "e", "z"]


def test_what_it_does_not_collect_goes_to_dataclasses() -> None:
    """A pseudo-field by name and an annotation that is not a string: dataclasses' rules."""

    class WithClassVar:
        a: int
        shared: ClassVar[int] = 3

    made: type[Any] = as_dataclass(WithClassVar, slots=False, kw_only=False)
    assert [f.name for f in dataclasses.fields(made)] == ["a"]
    assert made.shared == 3
    evaluated = type("Evaluated", (), {"__annotations__": {"a": int, "b": str}, "b": "x"})
    assert [
        f.type for f in dataclasses.fields(as_dataclass(evaluated, slots=False, kw_only=False))
    ] == [int, str]


@pytest.mark.parametrize("maker", ["ours", "theirs"])
def test_refusals_are_dataclasses_own(maker: str) -> None:
    def make(cls: type[Any]) -> type[Any]:
        if maker == "ours":
            return as_dataclass(cls, slots=False, kw_only=False)
        return dataclasses.dataclass(cls, init=False, repr=False, eq=False)

    class Mutable:
        items: list[int] = []  # noqa: RUF012

    with pytest.raises(ValueError, match="mutable default <class 'list'> for field items"):
        make(Mutable)

    class Unannotated:
        a: int
        b = dataclasses.field(default=1)

    with pytest.raises(TypeError, match="'b' is a field but has no type annotation"):
        make(Unannotated)
