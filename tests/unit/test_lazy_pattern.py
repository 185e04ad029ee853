"""Regular expressions compiled on first use: a `LazyPattern` answers as the compiled pattern,
and the Bash checker's modules compile none at import (their import is the first Bash call's
cost, which the user waits for)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from codeloop.system.lazy_pattern import LazyPattern


def test_a_pattern_is_compiled_when_first_used() -> None:
    broken = LazyPattern("(")  # re.compile would raise here
    with pytest.raises(re.error):
        broken.search("x")


def _span(found: re.Match[str] | re.Match[bytes] | None) -> tuple[int, int] | None:
    return None if found is None else found.span()


def test_it_answers_as_the_compiled_pattern() -> None:
    source = r"(\w+)=(\d+)"
    lazy, compiled = LazyPattern(source), re.compile(source)
    for text in ("a=1", " bb=22 c=3", "x", "a=1x"):
        assert _span(lazy.match(text)) == _span(compiled.match(text))
        assert _span(lazy.match(text, 1)) == _span(compiled.match(text, 1))
        assert _span(lazy.fullmatch(text)) == _span(compiled.fullmatch(text))
        assert _span(lazy.search(text, 2)) == _span(compiled.search(text, 2))
        assert [m.span() for m in lazy.finditer(text)] == [
            m.span() for m in compiled.finditer(text)
        ]
        assert lazy.sub(r"\2=\1", text) == compiled.sub(r"\2=\1", text)
        assert lazy.sub(lambda m: m[1].upper(), text, 1) == compiled.sub(
            lambda m: m[1].upper(), text, 1
        )
    binary = LazyPattern(rb"[a-z]+", re.IGNORECASE)
    assert _span(binary.search(b"12 AbC")) == (3, 6)


def test_a_pattern_whose_matches_need_a_character_compiles_only_for_a_string_holding_one() -> None:
    source = r"[*?]|\[.*\]|(^|[=:])~"
    lazy, compiled = LazyPattern(source, needs="*?[~"), re.compile(source)
    for text in ("src/main.py", "a=b", "README"):  # none of them: answered without compiling
        assert _span(lazy.search(text)) is None
        assert lazy.match(text) is None and lazy.fullmatch(text) is None
        assert list(lazy.finditer(text)) == [] and lazy.sub("!", text) == text
    for text in ("*.py", "a=~/x", "f[12]", "x?", "~"):
        assert _span(lazy.search(text)) == _span(compiled.search(text))
        assert _span(lazy.match(text)) == _span(compiled.match(text))
        assert _span(lazy.fullmatch(text)) == _span(compiled.fullmatch(text))
        assert lazy.sub("!", text) == compiled.sub("!", text)
    escape = LazyPattern(rb"\\(.)", needs=b"\\")
    assert escape.sub(rb"\1", b"plain") == b"plain"
    assert escape.sub(rb"\1", b"a\\ b") == b"a b"
    broken = LazyPattern("(*", needs="*")  # compiling it raises: only a string with `*` does
    assert broken.search("no star") is None
    with pytest.raises(re.error):
        broken.search("a star: *")


# Records every compile made by a module body of the shell analysis, the permission checks or
# the lenient reading of tool arguments (all load with the first tool call).
PROBE = """
import re, sys
compiled = []
real = re._compile
def spy(pattern, flags):
    caller = sys._getframe(2)
    name = caller.f_code.co_filename
    ours = any(part in name for part in ("codeloop/shell/", "codeloop/permissions/",
                                         "codeloop/models/lenient_json"))
    if caller.f_code.co_name == "<module>" and ours:
        compiled.append(f"{name}:{caller.f_lineno}")
    return real(pattern, flags)
re._compile = spy
import codeloop.permissions.bash_check, codeloop.shell.git_check, codeloop.tools.bash
import codeloop.models.lenient_json
print("\\n".join(compiled))
"""


def test_what_the_first_bash_call_loads_compiles_no_pattern_at_import() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == []
