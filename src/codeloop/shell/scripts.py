"""sed and awk programs, read far enough to know whether they only read and print.

`sed 's/a/b/' f` and `awk '{print $1}' f` are everyday read commands, but the same programs
write files (`w FILE`, `s///w FILE`, `print > FILE`) and run commands (`e`, `s///e`,
`system()`, `print | CMD`, `CMD | getline`). Each function walks the program with the
language's own lexical rules (delimiters, escapes, strings, regular expressions, comments) and
returns None when it only reads, or a short reason. Anything it cannot follow is a reason too:
a program we cannot read is asked about, never guessed at.
"""

from __future__ import annotations

import contextlib
import itertools
import re

from codeloop.shell.secret_names import SECRET_NAME
from codeloop.system.lazy_pattern import LazyPattern

__all__ = ["awk_problem", "script_files", "sed_problem"]

# --- sed (GNU sed 4, whose one-liner extensions are a superset of POSIX) ---------------------

_SED_PLAIN = frozenset("=dDgGhHnNpPxzF")  # commands without arguments
_SED_NUMBER_ARG = frozenset("lLqQ")  # an optional number: `q5`, `l 70`
_SED_TEXT = frozenset("aic")  # text to the end of the line (GNU one-liner form, or `a\`)
_SED_LABEL = frozenset(":btT")
_SED_FILE_READ = frozenset("rR")
_SED_FILE_WRITE = frozenset("wW")
_SED_HARMLESS_FILES = frozenset({"/dev/stdout", "/dev/stderr"})
_LABEL = LazyPattern(r"[^;\s}]*")


class _Stop(Exception):
    """The program does something other than read, or we cannot follow it; args: why."""


class _Sed:
    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0
        self.files: list[str] = []  # read by r/R, written by w/W

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def blanks(self) -> None:
        while self.peek() in (" ", "\t"):
            self.i += 1

    def to_line_end(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i : end], end
        return text

    def delimited(self, delim: str) -> None:
        """Skip to the unescaped `delim` that ends one part of `s` or `y`."""
        while True:
            c = self.peek()
            if not c:
                raise _Stop("an unterminated s or y command")
            self.i += 1
            if c == "\\":
                self.i += 1
            elif c == delim:
                return

    def regex_address(self) -> None:
        delim = "/"
        if self.peek() == "\\":
            self.i += 1
            delim = self.peek()
            if delim in ("", "\n", "\\"):
                raise _Stop("an address the check cannot read")
        self.i += 1
        self.delimited(delim)
        while self.peek() in ("I", "M"):
            self.i += 1

    def address(self) -> bool:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit():
                self.i += 1
            if self.peek() == "~":
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
            return True
        if c == "$":
            self.i += 1
            return True
        if c in ("/", "\\"):
            self.regex_address()
            return True
        return False

    def addresses(self) -> None:
        if not self.address():
            return
        self.blanks()
        if self.peek() == ",":
            self.i += 1
            self.blanks()
            if self.peek() in ("+", "~"):
                self.i += 1
            if not self.address():
                raise _Stop("an address range the check cannot read")
        self.blanks()
        while self.peek() == "!":
            self.i += 1
            self.blanks()

    def substitute(self, command: str) -> None:
        delim = self.peek()
        if delim in ("", "\n", "\\"):
            raise _Stop(f"an {command} command the check cannot read")
        self.i += 1
        self.delimited(delim)
        self.delimited(delim)
        if command == "y":
            return
        while True:
            c = self.peek()
            if c in ("g", "p", "i", "I", "m", "M") or c.isdigit():
                self.i += 1
            elif c == "e":
                raise _Stop("s///e runs the pattern space as a command")
            elif c == "w":
                self.i += 1
                self.written(self.to_line_end())
                return
            else:
                return

    def written(self, raw: str) -> None:
        name = raw.strip()
        self.files.append(name)
        if name not in _SED_HARMLESS_FILES:
            raise _Stop(f"it writes the file {name!r}" if name else "w without a file name")

    def text(self) -> None:
        """`a text`, `a\\` + lines: everything to an unescaped end of line is text."""
        while True:
            line = self.to_line_end()
            if not line.endswith("\\") or not self.peek():
                return
            self.i += 1  # the escaped newline: the text goes on

    def command(self) -> None:
        c = self.peek()
        self.i += 1
        if c in _SED_PLAIN:
            return
        self.blanks()
        if c in _SED_NUMBER_ARG:
            while self.peek().isdigit():
                self.i += 1
        elif c in _SED_TEXT:
            self.text()
        elif c in _SED_LABEL:
            label = _LABEL.match(self.s, self.i)
            assert label is not None
            self.i = label.end()
            if c == ":" and not label.group():
                raise _Stop("a label without a name")
        elif c in _SED_FILE_READ:
            self.files.append(self.to_line_end().strip())
        elif c in _SED_FILE_WRITE:
            self.written(self.to_line_end())
        elif c in ("s", "y"):
            self.substitute(c)
        elif c == "e":
            raise _Stop("e runs a command")
        elif c == "v":
            self.i = _LABEL.match(self.s, self.i).end()  # type: ignore[union-attr]
        else:
            raise _Stop(f"a command the check does not know ({c!r})")

    def run(self) -> None:
        depth = 0
        while True:
            while self.peek() in (" ", "\t", "\n", ";"):
                self.i += 1
            c = self.peek()
            if not c:
                break
            if c == "#":
                self.to_line_end()
                continue
            if c == "}":
                depth -= 1
                self.i += 1
                if depth < 0:
                    raise _Stop("an unmatched }")
                continue
            self.addresses()
            if self.peek() == "{":
                depth += 1
                self.i += 1
                continue
            if not self.peek():
                raise _Stop("an address without a command")
            self.command()
            self.blanks()
            if self.peek() not in ("", "\n", ";", "}", "#"):
                raise _Stop(f"text after a command the check cannot read ({self.peek()!r})")
        if depth:
            raise _Stop("an unmatched {")


def sed_problem(script: str) -> str | None:
    """None when the sed program only reads and prints; else why it is not read-only."""
    try:
        _Sed(script).run()
    except _Stop as stop:
        return str(stop.args[0])
    return None


# --- awk (POSIX awk, with gawk's and mawk's extensions) --------------------------------------

_AWK_TOKEN = LazyPattern(
    r"""(?P<space>[ \t\r]+|\\\n)
      |(?P<newline>\n)
      |(?P<comment>\#[^\n]*)
      |(?P<string>"(?:[^"\\\n]|\\.)*")
      |(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
      |(?P<name>[A-Za-z_][A-Za-z0-9_]*)
      |(?P<op>\|\||\|&|&&|>>|>=|<=|==|!=|!~|\+\+|--|[-+*/%^]=|\*\*=?|[|<>=!~+\-*/%^?:,;{}()\[\]$@&])
    """,
    re.VERBOSE,
)
_REGEX = LazyPattern(r"/(?:[^/\\\n\[]|\\.|\[(?:\^?\]?)(?:[^\]\\\n]|\\.)*\])*/")
_AWK_KEYWORDS = frozenset(
    {"BEGIN", "END", "BEGINFILE", "ENDFILE", "function", "func", "if", "else", "while", "for"}
    | {"do", "break", "continue", "next", "nextfile", "exit", "return", "delete", "in"}
    | {"getline", "print", "printf"}
)
_AWK_OUTPUT_STATEMENTS = frozenset({"print", "printf"})
_AWK_STATEMENT_END = frozenset({";", "\n", "}", "{"})
_AWK_CONTINUES = frozenset({",", "&&", "||", "{", "do", "else"})
_HARMLESS = frozenset({'"/dev/stdout"', '"/dev/stderr"', '"-"'})


def _awk_tokens(program: str) -> list[tuple[str, str]]:
    """(kind, text) pairs; regular expressions where awk reads one (where an operand may start)."""
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(program):
        prev_kind, prev = tokens[-1] if tokens else ("", "")
        operand_ended = prev_kind in ("string", "number", "regex") or (
            prev_kind == "name" and prev not in _AWK_KEYWORDS
        )
        operand_ended = operand_ended or prev in (")", "]", "++", "--")
        if program[i] == "/" and not operand_ended:
            found = _REGEX.match(program, i)
            if found is None:
                raise _Stop("a regular expression the check cannot read")
            if re.search(r"\[[^\]]*/", found.group()):
                raise _Stop("a slash inside a bracket expression, which awks read differently")
            tokens.append(("regex", found.group()))
            i = found.end()
            continue
        found = _AWK_TOKEN.match(program, i)
        if found is None:
            raise _Stop(f"text the check cannot read ({program[i]!r})")
        kind = found.lastgroup or ""
        if kind not in ("space", "comment"):
            tokens.append((kind, "\n" if kind == "newline" else found.group()))
        i = found.end()
    return tokens


def _awk_check(tokens: list[tuple[str, str]]) -> None:
    in_output = False
    depth = 0
    for n, (kind, text) in enumerate(tokens):
        following = tokens[n + 1][1] if n + 1 < len(tokens) else ""
        if kind == "name" and text == "system":
            raise _Stop("system() runs a command")
        if kind == "name" and text == "ENVIRON":
            key = tokens[n + 2] if n + 2 < len(tokens) else ("", "")
            closed = tokens[n + 3][1] if n + 3 < len(tokens) else ""
            if following != "[" or key[0] != "string" or closed != "]":
                raise _Stop("it reads the environment, which may hold secrets")
            if SECRET_NAME.fullmatch(key[1][1:-1]):
                raise _Stop(f"it reads {key[1]} from the environment, which may be a secret")
        if kind == "string" and text.startswith(('"/inet', '"/dev/tcp', '"/dev/udp')):
            raise _Stop("it opens a network connection")
        if text in ("|", "|&"):
            raise _Stop("a pipe to or from a command runs that command")
        if text == "@":
            raise _Stop("a gawk directive (@include, @load) loads code the check cannot see")
        if kind == "name" and text in _AWK_OUTPUT_STATEMENTS:
            in_output, depth = True, 0
        elif text == "\n" and n and tokens[n - 1][1] in _AWK_CONTINUES:
            continue  # `print a,` + newline: the statement goes on
        elif text in _AWK_STATEMENT_END:
            in_output = False
        elif text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        elif in_output and depth <= 0 and text in (">", ">>") and following not in _HARMLESS:
            raise _Stop("print > FILE writes a file")


def awk_problem(program: str) -> str | None:
    """None when the awk program only reads and prints; else why it is not read-only."""
    try:
        _awk_check(_awk_tokens(program))
    except _Stop as stop:
        return str(stop.args[0])
    return None


def script_files(language: str, program: str) -> list[str]:
    """Files a sed or awk program names (`r FILE`, `getline < "FILE"`), for path rules and
    the credential check; as far as the program could be read."""
    if language == "sed":
        reader = _Sed(program)
        with contextlib.suppress(_Stop):
            reader.run()
        return [f for f in reader.files if f]
    try:
        tokens = _awk_tokens(program)
    except _Stop:
        return []
    pairs = itertools.pairwise(tokens)
    return [b[1][1:-1] for a, b in pairs if a[1] in ("<", ">", ">>") and b[0] == "string"]
