"""A class made a dataclass with no generated methods, its fields collected the way
`dataclasses` collects them, without its generality where a value class needs none.

`@valueclass` asks `dataclasses.dataclass(cls, init=False, repr=False, eq=False)` only for
the fields (its methods are shared): ~60 µs a class, most of it spent asking of each field's
annotation, a string under `from __future__ import annotations`, whether it names `ClassVar`,
`InitVar` or `KW_ONLY` (three regular-expression matches and module look-ups a field), paid by
~190 classes before a run's first request and ~15 more in its first Bash call. Here an
annotation that does not mention those names is a field, as it is there; a class with one
that does, annotations that are not strings, or a Python whose `dataclasses` lacks what this
relies on, goes to `dataclasses` itself. The result is a dataclass by every public measure
(`fields`, `replace`, `asdict`, `is_dataclass`, `__match_args__`, subclassing with
`dataclasses.dataclass`).
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import itertools
import types
from typing import Any, TypeVar, cast

C = TypeVar("C", bound=type[Any])

_PSEUDO_FIELDS = ("ClassVar", "InitVar", "KW_ONLY")
# A field's kind, as `dataclasses.fields` tells fields from pseudo-fields; absent from a
# `dataclasses` laid out otherwise, and then every class goes there.
_FIELD: object = getattr(dataclasses, "_FIELD", None)
_FIELD_SLOTS: tuple[str, ...] = getattr(dataclasses.Field, "__slots__", ())
_params: list[
    object
] = []  # the `__dataclass_params__` of dataclass(init=False, repr=False, eq=False)


def as_dataclass(cls: C, *, slots: bool, kw_only: bool) -> C:
    """`dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots,
    kw_only=kw_only)`."""
    made: type[Any]
    annotations = inspect.get_annotations(cls)
    if not _collectable(annotations):
        made = dataclasses.dataclass(
            cls, init=False, repr=False, eq=False, slots=slots, kw_only=kw_only
        )
    else:
        made = _collected(cls, annotations, slots=slots, kw_only=kw_only)
    return cast(C, made)


def _collected(
    cls: type[Any], annotations: dict[str, Any], *, slots: bool, kw_only: bool
) -> type[Any]:
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        fields |= getattr(base, "__dataclass_fields__", {})
    for name, annotation in annotations.items():
        fields[name] = _field(cls, name, annotation, kw_only)
    for name, value in cls.__dict__.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    cls.__dataclass_params__ = _dataclass_params()
    cls.__dataclass_fields__ = fields
    if "__match_args__" not in cls.__dict__:
        match_args = tuple(
            f.name for f in fields.values() if _is_field(f) and f.init and not f.kw_only
        )
        cls.__match_args__ = match_args  # type: ignore[misc]
    if slots:
        cls = _with_slots(cls, fields)
    abc.update_abstractmethods(cls)
    return cls


def _collectable(annotations: dict[str, Any]) -> bool:
    """Whether every annotation is a string naming no pseudo-field, on a `dataclasses` as
    expected."""
    if _FIELD is None or "_field_type" not in _FIELD_SLOTS:
        return False
    return all(
        type(a) is str and not any(word in a for word in _PSEUDO_FIELDS)
        for a in annotations.values()
    )


def _is_field(f: dataclasses.Field[Any]) -> bool:
    """A field, not a pseudo-field (`ClassVar`, `InitVar`) a base class collected."""
    return f._field_type is _FIELD  # type: ignore[attr-defined]


def _field(cls: type[Any], name: str, annotation: str, kw_only: bool) -> dataclasses.Field[Any]:
    """The field `name`, as `dataclasses` makes it: its default the class attribute (inherited
    ones too), a `field(...)` given there taken as it is and replaced by its default."""
    default = getattr(cls, name, dataclasses.MISSING)
    if isinstance(default, dataclasses.Field):
        f = default
        if f.default is dataclasses.MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, f.default)
    else:
        if isinstance(default, types.MemberDescriptorType):  # a slot of an earlier make
            default = dataclasses.MISSING
        f = dataclasses.field(default=default)  # type: ignore[arg-type]  # MISSING: none
    f.name = name
    f.type = annotation
    f._field_type = _FIELD  # type: ignore[attr-defined]
    if f.kw_only is dataclasses.MISSING:
        f.kw_only = kw_only
    if f.default.__class__.__hash__ is None:
        raise ValueError(
            f"mutable default {type(f.default)} for field {name} is not allowed: "
            "use default_factory"
        )
    return f


def _dataclass_params() -> object:
    """What `dataclasses` records of the options: the same for every value class (its methods
    are not made there), read once from a class it made."""
    if not _params:
        probe: type[Any] = dataclasses.dataclass(
            type("_Probe", (), {}), init=False, repr=False, eq=False
        )
        _params.append(probe.__dataclass_params__)
    return _params[0]


def _with_slots(cls: type[Any], fields: dict[str, dataclasses.Field[Any]]) -> type[Any]:
    """`cls` remade with a slot for each field its bases have none for, as `dataclasses`
    does (a class's slots are fixed when it is made)."""
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    names = [n for n, f in fields.items() if _is_field(f)]
    inherited = set(itertools.chain.from_iterable(map(_slots_of, cls.__mro__[1:-1])))
    body = dict(cls.__dict__)
    body["__slots__"] = tuple(n for n in names if n not in inherited)
    for name in (*names, "__dict__", "__weakref__"):
        body.pop(name, None)
    metaclass: Any = type(cls)
    remade: type[Any] = metaclass(cls.__name__, cls.__bases__, body)
    remade.__qualname__ = cls.__qualname__
    return remade


def _slots_of(cls: type[Any]) -> tuple[str, ...]:
    slots = cls.__dict__.get("__slots__")
    if slots is None:
        return ()
    if isinstance(slots, str):
        return (slots,)
    if hasattr(slots, "__next__"):
        raise TypeError(f"Slots of '{cls.__name__}' cannot be determined")
    return tuple(slots)
