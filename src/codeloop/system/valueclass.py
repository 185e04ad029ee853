"""`@valueclass`: a dataclass whose methods are shared, not generated for each class.

`dataclasses` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__` and, frozen,
`__setattr__` and `__delattr__` as source text and compiles it: ~0.7 ms a class, paid at
import by every value type on start-up's path (about 180 of them before a headless run's first
request). A value class is still a dataclass (`dataclasses.fields`, `replace`, `asdict` and
`__match_args__` work; mypy checks it as one through `dataclass_transform`), but its fields
are collected without generating anything (dataclass_fields.py), and the methods are the
generic ones below, reading a plan made once per class; its `__init__` is made with its first
instance, from a template stored compiled (valueclass_templates.py). Frozen by default, as
codeloop's value types are; `frozen=False` for mutable ones.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

from codeloop.system.dataclass_fields import as_dataclass

C = TypeVar("C", bound=type[Any])


class _Plan:
    """What the shared methods need of one class (a plain class: a dataclass would compile
    its own methods at import, what this module is for avoiding)."""

    __slots__ = ("compared", "frozen", "hashed", "name", "shown")

    def __init__(
        self,
        name: str,
        shown: tuple[str, ...],
        compared: Callable[[Any], Any],  # the compared fields' values, read in C (attrgetter)
        hashed: Callable[[Any], Any],
        frozen: bool,
    ) -> None:
        self.name = name
        self.shown = shown
        self.compared = compared
        self.hashed = hashed
        self.frozen = frozen


@overload
def valueclass(cls: C, /) -> C: ...


@overload
def valueclass(
    *, frozen: bool = True, slots: bool = False, kw_only: bool = False, eq: bool = True
) -> Callable[[C], C]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def valueclass(
    cls: C | None = None,
    /,
    *,
    frozen: bool = True,
    slots: bool = False,
    kw_only: bool = False,
    eq: bool = True,
) -> C | Callable[[C], C]:
    """Make `cls` a dataclass with shared methods; the options mean what `dataclass`'s do."""

    def make(target: C) -> C:
        return _make(target, frozen=frozen, slots=slots, kw_only=kw_only, eq=eq)

    return make if cls is None else make(cls)


def _make(cls: C, *, frozen: bool, slots: bool, kw_only: bool, eq: bool) -> C:
    if not cls.__doc__:
        # Else `dataclass` writes one from the class's signature, which it gets by parsing the
        # text signature of object's `__init__` (~30 µs a class, for a string nobody reads).
        cls.__doc__ = cls.__name__
    own = dict(cls.__dict__)
    made = as_dataclass(cls, slots=slots, kw_only=kw_only)
    fields = dataclasses.fields(made)
    _check_order(made, fields)
    made.__valueclass_plan__ = _Plan(
        name=made.__qualname__,
        shown=tuple(f.name for f in fields if f.repr),
        compared=_values([f.name for f in fields if f.compare]),
        hashed=_values([f.name for f in fields if (f.compare if f.hash is None else f.hash)]),
        frozen=frozen,
    )
    methods: dict[str, Any] = {"__init__": _first_init(made), "__repr__": _repr}
    if eq:
        methods["__eq__"] = _eq
        body_hash = own.get("__hash__", dataclasses.MISSING)
        if body_hash is dataclasses.MISSING or (body_hash is None and "__eq__" in own):
            methods["__hash__"] = _hash if frozen else None
    if frozen:
        methods |= {"__setattr__": _frozen_set, "__delattr__": _frozen_delete}
        if slots:
            methods |= {"__getstate__": _slot_state, "__setstate__": _set_slot_state}
    for name, method in methods.items():
        if name == "__hash__" or name not in own:  # __hash__ is in `methods` only when due
            setattr(made, name, method)
    return made


def _values(names: list[str]) -> Callable[[Any], Any]:
    return operator.attrgetter(*names) if names else lambda _: ()


def _check_order(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """What `dataclass` checks when it writes `__init__`, checked here at once."""
    defaulted = False
    for f in fields:
        if not f.init or f.kw_only:
            continue
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            defaulted = True
        elif defaulted:
            raise TypeError(f"{cls.__qualname__}: non-default argument {f.name!r} follows default")


def _first_init(cls: type[Any]) -> Callable[..., None]:
    """An `__init__` that writes the class's own the first time one is made, then steps aside:
    a class no run instantiates never pays for it, and instances are made at dataclass speed.
    (Binding the first instances generically and compiling later was measured: ~5 µs more an
    instance, and a class made every round only compiled a round later, the five gaps of a
    6-turn session summed 58 ms against 55.5 compiling at once.)"""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init = _compiled_init(cls)
        cls.__init__ = init
        init(self, *args, **kwargs)

    return __init__


_FACTORY = object()  # the default of a parameter whose field has a default factory


def _compiled_init(cls: type[Any]) -> Callable[..., None]:
    """The class's `__init__`, from the compiled template of its fields' shape with the fields'
    names put in, not source compiled for each class (~0.1 ms a compile; a one-turn run meets
    26 shapes, which valueclass_templates.py holds compiled)."""
    fields = dataclasses.fields(cls)
    template = _template(*template_key(cls, fields))
    names = {f"_vc_f{i}": f.name for i, f in enumerate(fields)}
    code = template.replace(
        co_varnames=tuple(names.get(n, n) for n in template.co_varnames),
        co_names=tuple(names.get(n, n) for n in template.co_names),
        co_consts=tuple(names.get(c, c) if type(c) is str else c for c in template.co_consts),
        co_name="__init__",
        co_qualname=f"{cls.__qualname__}.__init__",
    )
    scope: dict[str, Any] = {"_vc_put": object.__setattr__, "_vc_factory": _FACTORY}
    defaults: list[Any] = []
    keyword_defaults: dict[str, Any] = {}
    for i, f in enumerate(fields):
        has_factory = f.default_factory is not dataclasses.MISSING
        default = _FACTORY if has_factory else f.default
        scope[f"_vc_default_{i}"] = default
        scope[f"_vc_make_{i}"] = f.default_factory
        if not f.init or default is dataclasses.MISSING:
            continue
        if f.kw_only:
            keyword_defaults[f.name] = default
        else:
            defaults.append(default)
    init = types.FunctionType(code, scope, "__init__", tuple(defaults) or None)
    init.__kwdefaults__ = keyword_defaults or None
    return init


def template_key(
    cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]
) -> tuple[str, bool, bool]:
    """Which template a value class's `__init__` is made from: its fields' kinds, whether it is
    frozen, whether it has a `__post_init__`."""
    frozen: bool = cls.__valueclass_plan__.frozen
    return "".join(map(_kind, fields)), frozen, hasattr(cls, "__post_init__")


def _kind(f: dataclasses.Field[Any]) -> str:
    """What the template needs of one field: positional (p) or keyword-only (k) in the
    signature, set from its default or factory though not in it (d), or left unset (u). A
    default is the function's, a factory the same test for every field: classes of many
    kinds of defaults share one template (87 templates for 293 classes became 39)."""
    if f.init:
        return "k" if f.kw_only is True else "p"
    has_default = f.default is not dataclasses.MISSING
    return "d" if has_default or f.default_factory is not dataclasses.MISSING else "u"


@functools.cache
def _template(kinds: str, frozen: bool, post_init: bool) -> types.CodeType:
    """The template's code: compiled with valueclass_templates.py's .pyc for the shapes of
    codeloop's own value classes (that module is loaded with the first one wanted), compiled
    here for another's (picked by name: a newer Python compiles annotations on their own)."""
    from codeloop.system import valueclass_templates

    name = template_name(kinds, frozen, post_init)
    stored = getattr(valueclass_templates, name, None)
    if stored is not None:
        code: types.CodeType = stored.__code__
        return code
    module = compile(template_source(kinds, frozen, post_init), "<valueclass>", "exec")
    return next(c for c in module.co_consts if type(c) is types.CodeType and c.co_name == name)


def template_name(kinds: str, frozen: bool, post_init: bool) -> str:
    """The template's function name in valueclass_templates.py, e.g. `frozen_ppk_post_init`."""
    state = "frozen" if frozen else "mutable"
    return f"{state}_{kinds or 'none'}{'_post_init' if post_init else ''}"


def template_source(kinds: str, frozen: bool, post_init: bool) -> str:
    """The source of `__init__` for fields of these kinds, field i named `_vc_f{i}`: a
    parameter whose value is the marker of a factory takes the global `_vc_make_{i}()`, a field
    set though not in the signature the global `_vc_default_{i}` (or its factory's value).
    Written as `ruff format` writes it, since valueclass_templates.py is made of these."""
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for i, kind in enumerate(kinds):
        name = f"_vc_f{i}"
        if kind in "pk":
            (keyword if kind == "k" else positional).append(name)
            value = f"_vc_make_{i}() if {name} is _vc_factory else {name}"
        elif kind == "d":
            value = f"_vc_make_{i}() if _vc_default_{i} is _vc_factory else _vc_default_{i}"
        else:
            continue
        body.append(
            f'_vc_put(_vc_self, "{name}", {value})' if frozen else f"_vc_self.{name} = {value}"
        )
    if post_init:
        body.append("_vc_self.__post_init__()")
    params = ["_vc_self", *positional, *(["*", *keyword] if keyword else [])]
    signature = "".join(f"    {p},\n" if p == "*" else f"    {p}: Any,\n" for p in params)
    lines = "".join(f"    {line}\n" for line in body or ["pass"])
    return f"def {template_name(kinds, frozen, post_init)}(\n{signature}) -> None:\n{lines}"


def _repr(self: Any) -> str:
    plan: _Plan = self.__valueclass_plan__
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in plan.shown)
    return f"{plan.name}({shown})"


def _eq(self: Any, other: Any) -> Any:  # a bool, or NotImplemented for another class
    if other.__class__ is not self.__class__:
        return NotImplemented
    values = self.__valueclass_plan__.compared
    return values(self) == values(other)


def _hash(self: Any) -> int:
    return hash(self.__valueclass_plan__.hashed(self))


def _frozen_set(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delete(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _slot_state(self: Any) -> list[Any]:
    """A frozen value class with slots, pickled or copied: its values in field order."""
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _set_slot_state(self: Any, state: list[Any]) -> None:
    for field, value in zip(dataclasses.fields(self), state, strict=True):
        object.__setattr__(self, field.name, value)
