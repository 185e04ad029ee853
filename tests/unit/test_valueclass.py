"""A value class behaves as the dataclass it replaces: construction, defaults, equality,
hashing, freezing, pickling, copying, `replace` and pattern matching."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import field

import pytest

from codeloop.system.valueclass import valueclass


@valueclass
class Point:
    x: int
    label: str = "p"
    tags: tuple[str, ...] = ()


@valueclass(slots=True)
class Bag:
    size: int
    items: list[int] = field(default_factory=list)
    _cache: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)


@valueclass(frozen=False)
class Counter:
    count: int = 0


@valueclass(kw_only=True)
class Labelled(Point):
    weight: int = 1


@valueclass
class Doubled:
    base: int
    twice: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "twice", self.base * 2)


def test_construction_defaults_and_factories_are_the_dataclass_ones() -> None:
    assert Point(1) == Point(1, "p", ()) == Point(x=1)
    bag, other = Bag(2), Bag(2)
    assert bag.items == [] and bag.items is not other.items and bag._cache is None
    assert Doubled(3).twice == 6
    assert Labelled(1, "q", weight=5) == Labelled(x=1, label="q", weight=5)


def test_wrong_arguments_fail_as_a_dataclass_s_do() -> None:
    with pytest.raises(TypeError, match="positional"):
        Point(1, "a", (), 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values"):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword"):
        Point(1, colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="non-default argument"):

        @valueclass
        class Wrong:
            a: int = 0
            b: str  # type: ignore[misc]


@valueclass
class Pair:
    """Point's shape (a field, then two with defaults), other names and defaults."""

    left: int
    right: str = "r"
    rest: tuple[str, ...] = ("more",)


@valueclass
class Triple:
    """Pair's code (defaults are the function's): three fields, none defaulted."""

    a: int
    b: str
    c: tuple[str, ...]


@valueclass(frozen=False, kw_only=True)
class Loose:
    """Keyword-only, mutable: the template sets attributes by the fields' names."""

    first: int
    seen: list[str] = field(default_factory=list)


def test_classes_of_one_shape_keep_their_own_names_and_defaults() -> None:
    assert (Pair(1).right, Pair(1).rest, Point(1).label) == ("r", ("more",), "p")
    assert Pair(right="s", left=2) == Pair(2, "s")
    with pytest.raises(TypeError, match="'left'"):
        Pair()  # type: ignore[call-arg]
    assert Pair.__init__.__qualname__ == "Pair.__init__"
    with pytest.raises(TypeError, match="'b' and 'c'"):
        Triple(1)  # type: ignore[call-arg]
    assert Triple(1, "b", ()).b == "b" and Pair(3).right == "r"
    loose = Loose(first=1)
    loose.seen.append("a")
    assert (loose.first, loose.seen, Loose(first=2).seen) == (1, ["a"], [])
    with pytest.raises(TypeError, match="'first'"):
        Loose()  # type: ignore[call-arg]


def test_equality_hash_repr_follow_the_fields() -> None:
    assert Point(1) != Point(2) and Point(1).__eq__((1, "p", ())) is NotImplemented
    assert hash(Point(1, "a")) == hash(Point(1, "a"))
    assert repr(Labelled(1)) == "Labelled(x=1, label='p', tags=(), weight=1)"
    assert repr(Bag(1)) == "Bag(size=1, items=[])"


def test_frozen_ones_refuse_assignment_and_mutable_ones_are_unhashable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del Bag(1).size
    counter = Counter()
    counter.count += 1
    assert counter == Counter(1)
    with pytest.raises(TypeError):
        hash(counter)


def test_it_is_still_a_dataclass_and_survives_pickle_and_copy() -> None:
    bag = Bag(3, [1, 2])
    assert dataclasses.is_dataclass(bag) and not hasattr(bag, "__dict__")
    assert dataclasses.asdict(Point(1)) == {"x": 1, "label": "p", "tags": ()}
    assert dataclasses.replace(Point(1), label="q") == Point(1, "q")
    for value in (bag, Point(1, "a", ("t",)), Labelled(2, weight=3)):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value == copy.copy(value)
    match Point(4, "z"):
        case Point(x, label):
            assert (x, label) == (4, "z")


def test_a_class_without_a_docstring_is_documented_by_its_name_and_keeps_its_own() -> None:
    """Not by its signature, which `dataclass` would compute (parsing a text signature)."""

    @valueclass
    class Described:
        """Says why."""

        x: int

    assert (Point.__doc__, Bag.__doc__, Described.__doc__) == ("Point", "Bag", "Says why.")


def test_codeloop_s_value_types_are_value_classes() -> None:
    """A `@dataclass` costs every run that imports it ~0.7 ms (its methods compiled at import);
    system/, where `@valueclass` is defined, keeps them (shell/ uses it too)."""
    import ast
    from pathlib import Path

    import codeloop

    root = Path(codeloop.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "system":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if ast.unparse(target) in ("dataclass", "dataclasses.dataclass"):
                        found.append(f"{path.relative_to(root)}: {node.name}")
    assert found == [], "use codeloop.system.valueclass instead"


@valueclass
class Tally:
    """Fields set though not in the signature: from a factory, from a default, and one left
    unset; a keyword-only field with a factory."""

    name: str
    seen: list[str] = field(init=False, default_factory=list)
    limit: int = field(init=False, default=3)
    later: int = field(init=False)
    extra: dict[str, int] = field(default_factory=dict, kw_only=True)


def test_fields_outside_the_signature_are_set_as_a_dataclass_sets_them() -> None:
    one, two = Tally("a"), Tally("b", extra={"x": 1})
    assert (one.seen, one.limit, one.extra, two.extra) == ([], 3, {}, {"x": 1})
    assert one.seen is not two.seen and not hasattr(one, "later")
    with pytest.raises(TypeError, match="positional"):
        Tally("a", [])  # type: ignore[call-arg, arg-type]
    with pytest.raises(TypeError, match="unexpected keyword"):
        Tally("a", seen=[])  # type: ignore[call-arg]
