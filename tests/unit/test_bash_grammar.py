"""The Bash grammar and tree-sitter's parser types load from their packages' `_binding`
extensions, without the packages' __init__."""

import subprocess
import sys
from pathlib import Path

import pytest
import tree_sitter

from codeloop.shell import bash_grammar
from codeloop.shell.bash_grammar import bash_language


def printed_by(code: str) -> list[str]:
    """The words `code` prints, run in a fresh interpreter (this one has imported all)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_the_grammar_loads_without_the_package_or_importlib_resources() -> None:
    probe = (
        "import sys, tree_sitter\n"
        "from codeloop.shell.bash_grammar import bash_language\n"
        "language = tree_sitter.Language(bash_language())\n"
        "tree = tree_sitter.Parser(language).parse(b'echo hi | wc -l')\n"
        "print(language.name, tree.root_node.has_error,\n"
        "      'tree_sitter_bash' in sys.modules, 'importlib.resources' in sys.modules)\n"
    )
    assert printed_by(probe) == ["bash", "False", "False", "False"]


def test_the_parser_loads_without_tree_sitters_package_and_shares_its_types_after() -> None:
    probe = (
        "import sys\n"
        "from codeloop.shell.bash_parse import parse_command\n"
        "print(parse_command('echo hi | wc -l').ok, 'tree_sitter' in sys.modules)\n"
        "import tree_sitter\n"
        "from codeloop.shell.bash_grammar import parser_types\n"
        "print(parser_types().Parser is tree_sitter.Parser)\n"
    )
    assert printed_by(probe) == ["True", "False", "True"]


def test_it_is_the_grammar_the_package_hands_out() -> None:
    import tree_sitter_bash

    loaded = tree_sitter.Language(bash_language())
    packaged = tree_sitter.Language(tree_sitter_bash.language())
    assert (loaded.name, loaded.abi_version, loaded.node_kind_count) == (
        packaged.name,
        packaged.abi_version,
        packaged.node_kind_count,
    )


def test_a_package_laid_out_otherwise_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "tree_sitter_bash"
    package.mkdir()
    (package / "__init__.py").write_text("def language():\n    return 'from __init__'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "tree_sitter_bash", None)  # restored after the test
    monkeypatch.delitem(sys.modules, "tree_sitter_bash")
    assert bash_grammar.bash_language() == "from __init__"
