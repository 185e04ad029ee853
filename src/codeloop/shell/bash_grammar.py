"""tree-sitter-bash's compiled grammar, loaded without its package's __init__.

`tree_sitter_bash/__init__.py` imports `importlib.resources` (~1.8 ms) for query files
codeloop never reads, and the first Bash call waits for it. The grammar itself is the
package's `_binding` extension, so it is loaded from the package's folder directly; a
package laid out otherwise is imported the ordinary way.
"""

from __future__ import annotations

from importlib.machinery import ExtensionFileLoader, PathFinder

__all__ = ["bash_language"]

_PACKAGE = "tree_sitter_bash"


def bash_language() -> object:
    """The `TSLanguage *` capsule that `tree_sitter.Language` takes."""
    return _binding_language() or _imported_language()


def _binding_language() -> object | None:
    """`tree_sitter_bash._binding.language()`, or None when the package is not as expected."""
    package = PathFinder.find_spec(_PACKAGE)
    if package is None or not package.submodule_search_locations:
        return None
    binding = PathFinder.find_spec(f"{_PACKAGE}._binding", package.submodule_search_locations)
    if binding is None or not isinstance(binding.loader, ExtensionFileLoader):
        return None
    module = binding.loader.create_module(binding)
    binding.loader.exec_module(module)
    language = getattr(module, "language", None)
    return language() if callable(language) else None


def _imported_language() -> object:
    import tree_sitter_bash

    return tree_sitter_bash.language()
