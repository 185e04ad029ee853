"""tree-sitter-bash's compiled grammar and tree-sitter's parser types, each loaded without its
package's __init__.

`tree_sitter_bash/__init__.py` imports `importlib.resources` (~1.8 ms) for query files
codeloop never reads, and `tree_sitter/__init__.py` builds a `typing.Protocol` class (~0.8 M
instructions) for query predicates codeloop never writes; the first Bash call waits for both.
What codeloop uses of each is the package's `_binding` extension, so it is loaded from the
package's folder directly; a package laid out otherwise is imported the ordinary way.
"""

from __future__ import annotations

import sys
from importlib.machinery import ExtensionFileLoader, PathFinder
from types import ModuleType

__all__ = ["bash_language", "parser_types"]

_PACKAGE = "tree_sitter_bash"
_TYPES = "tree_sitter"


def bash_language() -> object:
    """The `TSLanguage *` capsule that `tree_sitter.Language` takes."""
    language = getattr(_binding(_PACKAGE), "language", None)
    return language() if callable(language) else _imported_language()


def parser_types() -> ModuleType:
    """What holds tree-sitter's `Language` and `Parser`: its `_binding` extension, registered
    as `tree_sitter._binding` so that importing `tree_sitter` later finds the same types."""
    name = f"{_TYPES}._binding"
    binding = sys.modules.get(name) or _binding(_TYPES)
    if binding is None or not hasattr(binding, "Parser"):
        import tree_sitter

        return tree_sitter
    sys.modules.setdefault(name, binding)
    return binding


def _binding(package_name: str) -> ModuleType | None:
    """`<package_name>._binding`, or None when the package is not laid out as expected."""
    package = PathFinder.find_spec(package_name)
    if package is None or not package.submodule_search_locations:
        return None
    binding = PathFinder.find_spec(f"{package_name}._binding", package.submodule_search_locations)
    if binding is None or not isinstance(binding.loader, ExtensionFileLoader):
        return None
    module = binding.loader.create_module(binding)
    binding.loader.exec_module(module)
    return module


def _imported_language() -> object:
    import tree_sitter_bash

    return tree_sitter_bash.language()
