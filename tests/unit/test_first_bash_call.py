"""What the first Bash call loads: the checker and the grammar, and git's grammar only with
the first line that runs git, the checks of programs' arguments only with the first line that
runs a program with one (each module costs the first call's user ~1 ms)."""

import subprocess
import sys

PROBE = """
import sys
import codeloop.permissions.bash_check
from codeloop.shell.readonly import is_read_only_command, needs_protection

modules = sys.argv[1].split(",")
for line in sys.argv[2:]:
    print(is_read_only_command(line), needs_protection(line),
          *(name in sys.modules for name in modules))
"""


def probe(*lines: str, modules: tuple[str, ...] = ("codeloop.shell.git_check",)) -> list[list[str]]:
    """For each line, after judging it: read-only, run under protection, each module loaded."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(modules), *lines],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [row.split() for row in out.splitlines()]


def test_a_line_without_git_loads_no_git_grammar_and_a_git_line_is_judged_with_it() -> None:
    assert probe("echo 1 | wc -l", "git log -1", "g'i't log --ext-diff") == [
        ["True", "False", "False"],
        ["True", "True", "True"],
        ["False", "False", "True"],
    ]


def test_argument_checks_and_the_sed_reader_load_with_the_first_line_that_needs_them() -> None:
    loaded = (
        "codeloop.shell.git_check",
        "codeloop.shell.argv_checks",
        "codeloop.shell.argv_spec",
        "codeloop.shell.scripts",
    )
    assert probe("echo 1 | wc -l", "git status", "sort f", "sed -n 1p f", modules=loaded) == [
        ["True", "False", "False", "False", "False", "False"],
        ["True", "True", "True", "True", "True", "False"],
        ["True", "False", "True", "True", "True", "False"],
        ["True", "False", "True", "True", "True", "True"],
    ]


def test_plain_lines_are_judged_without_the_grammar_and_the_first_other_line_loads_it() -> None:
    grammar = ("codeloop.shell.bash_grammar", "tree_sitter._binding")
    assert probe("ls -la src", 'git commit -m "x y"', "echo 1 | wc -l", modules=grammar) == [
        ["True", "False", "False", "False"],
        ["False", "False", "False", "False"],
        ["True", "False", "True", "True"],
    ]
