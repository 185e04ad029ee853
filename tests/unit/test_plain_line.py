"""Plain lines read without the grammar: the same parse as the grammar's walk, or no answer."""

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeloop.permissions.bash_check import decide_bash
from codeloop.permissions.decision import Scope
from codeloop.permissions.rules import Rule, RuleBook
from codeloop.shell import bash_parse
from codeloop.shell.bash_parse import parse_command
from codeloop.shell.command_effects import path_uses, unwrap
from codeloop.shell.plain_line import plain_words
from codeloop.shell.readonly import is_read_only_command, needs_protection
from tests.unit.test_bash_parse import AGAINST_BASH, NOT_READ_ONLY, READ_ONLY

PRINTABLE = [chr(c) for c in range(32, 127)]
PLAIN_RUN = st.text(alphabet=st.sampled_from(list("abz09_./:@%+,=-")), min_size=1, max_size=6)
SINGLE_QUOTED = st.text(alphabet=st.sampled_from([c for c in PRINTABLE if c != "'"]), max_size=6)
DOUBLE_QUOTED = st.text(alphabet=st.sampled_from([c for c in PRINTABLE if c != '"']), max_size=6)
PART = st.one_of(
    PLAIN_RUN,
    SINGLE_QUOTED.map(lambda body: f"'{body}'"),
    DOUBLE_QUOTED.map(lambda body: f'"{body}"'),
    st.sampled_from(["$x", "*", "~", "#", "\\ ", "|", ";", "&&", ">f", "{a,b}", "\t", "é"]),
)
WORD = st.lists(PART, min_size=1, max_size=3).map("".join)
# Heads that make the walk look further: shells, wrappers, eval, builtins that take names,
# reserved words, assignments.
HEAD = st.one_of(
    st.sampled_from(
        [
            "ls",
            "echo",
            "git",
            "bash",
            "sh",
            "eval",
            "timeout",
            "xargs",
            "env",
            "watch",
            "flock",
            "command",
            "builtin",
            "read",
            "declare",
            "test",
            "printf",
            "export",
            "if",
            "for",
            "done",
            "time",
            "function",
            "a=1",
            "'ls'",
            "l's'",
            "-c",
            "in",
        ]
    ),
    WORD,
)
ARGUMENT = st.one_of(st.sampled_from(["-c", "-v", "-i", "-n", "--", "-s", "5"]), WORD)


@st.composite
def lines(draw: st.DrawFn) -> str:
    words = [draw(HEAD), *draw(st.lists(ARGUMENT, max_size=5))]
    blanks = [draw(st.sampled_from([" ", "  "])) for _ in words]
    edges = draw(st.sampled_from(["", " "])), draw(st.sampled_from(["", " ", "  "]))
    return edges[0] + "".join(w + b for w, b in zip(words, blanks, strict=True))[:-1] + edges[1]


def words_bash_passes(lines: list[str]) -> list[list[str]]:
    """For each line, the words bash makes of it (plain words expand to nothing else, so
    `set -- LINE` takes exactly the words a command would)."""
    script = "".join(f"set -- {line}\nprintf '%s\\0' \"$@\"; printf '\\1'\n" for line in lines)
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    return [chunk.decode().split("\0")[:-1] for chunk in out.split(b"\1")[:-1]]


@settings(max_examples=150, deadline=None)
@given(st.lists(lines(), min_size=1, max_size=40))
def test_a_plain_line_has_the_words_bash_gives_it(batch: list[str]) -> None:
    plain = [(line, words) for line in batch if (words := plain_words(line)) is not None]
    expected = words_bash_passes([line for line, _ in plain])
    assert [[text for _, _, text in words] for _, words in plain] == expected


@settings(max_examples=3000, deadline=None)
@given(lines())
def test_where_the_grammar_reads_a_plain_line_right_the_parses_agree(line: str) -> None:
    """Everything the walk adds (a shell's -c script, eval, builtins) comes out the same; lines
    the grammar misreads (`ls ==` loses its `==`) are compared with bash above."""
    words = plain_words(line)
    if words is None:
        return
    tree = bash_parse._parse_tree(line, 0)
    if tree.ok and tree.commands and tree.commands[0].argv == [text for _, _, text in words]:
        assert bash_parse._parse_plain(line, words, 0) == tree


@pytest.mark.parametrize("line", [*READ_ONLY, *NOT_READ_ONLY, *AGAINST_BASH])
def test_the_parser_tests_lines_parse_alike_both_ways(line: str) -> None:
    words = plain_words(line)
    if words is not None:
        assert bash_parse._parse_plain(line, words, 0) == bash_parse._parse_tree(line, 0)


@pytest.mark.parametrize(
    "line",
    [
        "a=1 ls",  # an assignment first
        "if true",  # a reserved word
        "'ls' -la",  # a quoted command name is never a keyword: left to the grammar
        "ls *",  # a glob
        "ls ~",  # a tilde
        "echo $HOME",  # an expansion
        'echo "a$b"',  # one in double quotes
        'echo "a\\"b"',  # an escape in double quotes
        "echo `id`",  # a substitution
        "ls # comment",
        "ls\tx",  # a tab
        "ls\nrm x",  # a newline
        "echo é",  # outside ASCII
        "ls|wc",
        "ls > f",
        "echo 'open",  # an unterminated quote
        "echo {a,b}",
        "",
        "   ",
    ],
)
def test_lines_with_anything_but_plain_words_are_left_to_the_grammar(line: str) -> None:
    assert plain_words(line) is None


def test_words_keep_their_places_and_lose_their_quotes() -> None:
    line = """ git commit -m "fix: the 'x' case" --author='A <a@b>' """
    words = plain_words(line)
    assert words is not None
    assert [line[start:end] for start, end, _ in words] == [
        "git",
        "commit",
        "-m",
        "\"fix: the 'x' case\"",
        "--author='A <a@b>'",
    ]
    assert [text for _, _, text in words] == [
        "git",
        "commit",
        "-m",
        "fix: the 'x' case",
        "--author=A <a@b>",
    ]


def test_a_line_is_parsed_once_for_all_its_questions_and_they_leave_it_as_it_was(
    tmp_path: Path,
) -> None:
    """parse_command keeps its last answers; the readers share them, so none may change one."""
    book = RuleBook([Rule.parse("Bash(git:*)")], [], [], project=tmp_path, home=tmp_path)
    scope = Scope("default", book, [tmp_path], tmp_path)
    for line in [*READ_ONLY, *NOT_READ_ONLY, *AGAINST_BASH]:
        parsed = parse_command(line)
        assert parse_command(line) is parsed
        decide_bash(line, tmp_path, scope)
        is_read_only_command(line)
        needs_protection(line)
        for command in parsed.commands:
            path_uses(unwrap(command))
        assert parsed == bash_parse._parse(line, 0), line
