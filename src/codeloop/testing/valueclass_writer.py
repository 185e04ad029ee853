"""Writes codeloop.system.valueclass_templates: the `__init__` template of every shape of value
class codeloop declares, as functions, so that its .pyc carries them compiled and no run
compiles their source (codeloop.system.valueclass). `python -m codeloop.testing.valueclass_writer`
rewrites it; tests/unit/test_valueclass_templates.py fails while it is not what this writes.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import pkgutil
import re
import sys
from pathlib import Path

import codeloop
from codeloop.system import valueclass
from codeloop.system.valueclass import template_key, template_name, template_source

TEMPLATES_FILE = Path(valueclass.__file__).with_name("valueclass_templates.py")
COMMAND = "python -m codeloop.testing.valueclass_writer"

Key = tuple[str, bool, bool]

HEADER = f'''"""The `__init__` templates of codeloop's value classes, one function a shape of fields
(codeloop.system.valueclass takes their code and puts the fields' names in), written out so
that this module's .pyc carries them compiled and no run compiles their source.

Do not edit: `{COMMAND}` writes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for ruff and mypy: valueclass gives each class's __init__ these globals
'''


def declared_keys() -> tuple[set[Key], list[str]]:
    """The template keys of the value classes in every codeloop module, and the modules that
    could not be imported for want of a package not installed (an extra)."""
    missing: list[str] = []
    for found in pkgutil.walk_packages(codeloop.__path__, "codeloop."):
        if found.name.rpartition(".")[2] == "__main__":
            continue
        try:
            importlib.import_module(found.name)
        except ImportError as error:
            if (error.name or "codeloop").partition(".")[0] == "codeloop":
                raise
            missing.append(found.name)
    keys = {
        template_key(cls, dataclasses.fields(cls))
        for cls in gc.get_objects()
        if isinstance(cls, type)
        and "__valueclass_plan__" in cls.__dict__
        and cls.__module__.partition(".")[0] == "codeloop"
    }
    return keys, missing


def module_source(keys: set[Key]) -> str:
    """valueclass_templates.py holding the templates of these keys, in their names' order."""
    named = sorted((template_name(*key), key) for key in keys)
    functions = [template_source(*key) for _, key in named]
    used = sorted(
        set(re.findall(r"\b_vc_(?:put|factory|make_\d+|default_\d+)\b", "".join(functions))),
        key=lambda name: [int(part) if part.isdigit() else part for part in name.split("_")],
    )
    declared = "".join(f"    {name}: Any = None\n" for name in used)
    return HEADER + declared + "".join(f"\n\n{function}" for function in functions)


def write() -> None:
    keys, missing = declared_keys()
    if missing:
        sys.exit(f"not written: {', '.join(missing)} could not be imported (install the extras)")
    TEMPLATES_FILE.write_text(module_source(keys), encoding="utf-8")
    print(f"wrote {TEMPLATES_FILE}", file=sys.stderr)


if __name__ == "__main__":
    write()
