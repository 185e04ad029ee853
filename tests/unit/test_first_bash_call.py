"""What the first Bash call loads: the checker and the grammar, and git's grammar only with
the first line that runs git (each module costs the first call's user ~1 ms)."""

import subprocess
import sys

PROBE = """
import sys
import codeloop.permissions.bash_check
from codeloop.shell.git_protection import needs_protection
from codeloop.shell.readonly import is_read_only_command

for line in sys.argv[1:]:
    print(is_read_only_command(line), needs_protection(line),
          "codeloop.shell.git_check" in sys.modules)
"""


def probe(*lines: str) -> list[list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *lines], capture_output=True, text=True, check=True
    ).stdout
    return [row.split() for row in out.splitlines()]


def test_a_line_without_git_loads_no_git_grammar_and_a_git_line_is_judged_with_it() -> None:
    assert probe("echo 1 | wc -l", "git log -1", "g'i't log --ext-diff") == [
        ["True", "False", "False"],
        ["True", "True", "True"],
        ["False", "False", "True"],
    ]
