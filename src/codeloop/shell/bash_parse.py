"""Parse a Bash command line into the simple commands bash would run.

Two consumers stand on this module: the read-only check (readonly.py: may this Bash call run
without asking, and in parallel with its siblings?) and the permission system (which rule
covers each subcommand?). Both need the same answer to "what will bash execute?", so
one tree-sitter walk serves both, and anything it does not model makes the result not-ok
instead of being guessed at.

`ParsedCommand.ok` is a promise: `commands` lists every simple command bash would run,
including those inside pipelines, lists, groups, subshells, control flow, `$(...)`, backticks,
`<(...)` and the literal script of `bash -c`. The promise is withdrawn (with a reason) for
parse errors, node types we do not handle, and constructs that run code the walk cannot see:
`eval`/`source`/`exec`/`alias`/`trap`/`hash`/`enable`/`let`, function definitions, a shell
reading its script from stdin, a non-literal `bash -c` script, assignments to variables bash
treats as code or search path (PATH, BASH_ENV, PS4, LD_PRELOAD, ...), and every place bash
evaluates a variable's *value* as arithmetic (`$((x))`, `${s:x}`, `${a[i]}`, `${!x}`,
`[[ $x -eq 1 ]]`, `test -v`, subscripted names given to `read`/`unset`/`declare`/...), since a
value like `a[$(rm -rf ~)]` runs the command inside it.

tree-sitter-bash has gaps (it reads backslash-newline as a blank, drops escaped blanks, misses
backticks in here-documents and in `${x:-...}`), so line continuations are deleted before
parsing, as bash does, and any text or substitution the grammar skipped makes the result
not-ok: a grammar gap costs a permission prompt, never a missed command.
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from codeloop.shell.plain_line import Word, plain_words
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from typing import TypeAlias

    from tree_sitter import Node, Parser

    _Spanned: TypeAlias = "Node | _Extent"  # what a command's place in the line is read from

__all__ = ["Assignment", "ParsedCommand", "Redirect", "SimpleCommand", "parse_command"]


@valueclass
class Redirect:
    """One redirection: `2>/dev/null` is Redirect(">", "/dev/null", 2)."""

    op: str  # as written: > >> < &> &>> >| <> >& <& >&- <&- << <<- <<<
    target: str | None  # resolved word; here-doc delimiter for << ; None for >&- / <&-
    fd: int | None  # explicit descriptor, None when bash picks the default
    target_dynamic: bool = False  # target holds an expansion bash resolves at run time


@valueclass
class Assignment:
    """A `NAME=value` before a command (or alone, as a bare assignment)."""

    name: str  # may include a subscript: a[1]
    value: str
    dynamic: bool  # value holds an expansion, an array, or is appended to (+=)


@valueclass
class SimpleCommand:
    """One command bash would execute, with its words as bash would see them.

    `argv` has quotes and escapes resolved; a word that bash still transforms at run time
    (`$VAR`, `$(...)`, globs, braces, a leading `~`) keeps that part as written and is marked
    in `argv_dynamic`. A bare assignment or a redirection alone (`FOO=1`, `> f`, `$(<f)`) has an
    empty `argv`. `span` is the character range in the parsed string; commands found inside a
    `bash -c` script carry the span of that `bash -c` command. `script` is set on a command that
    runs `bash -c SCRIPT` (also behind a wrapper such as `timeout` or `xargs`); the commands
    parsed from SCRIPT follow it in `ParsedCommand.commands`.
    """

    argv: list[str]
    argv_dynamic: list[bool]
    assignments: list[Assignment]
    redirects: list[Redirect]  # its own, then those of enclosing groups: `{ ls; } > f`
    span: tuple[int, int]
    script: str | None = None


@valueclass
class ParsedCommand:
    """Every simple command of a command line, in source order, and whether that is all."""

    commands: list[SimpleCommand]
    unparsed_reasons: list[str]  # why `ok` is False; empty when it is True
    has_command_substitution: bool
    has_process_substitution: bool
    expanded_names: frozenset[str] = frozenset()  # variables bash expands: `$HOME` → HOME
    # for-loop variable → the words it takes (`for f in a b*` → f: a, b*), every loop's;
    # none known for `for f; do` (it takes the script's arguments)
    loop_words: Mapping[str, tuple[tuple[str, bool], ...]] = field(default_factory=dict)
    # command span → span of the simple command piping into it (None: a compound one or `|&`)
    fed_by: Mapping[tuple[int, int], tuple[int, int] | None] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when `commands` is everything bash would run for this line."""
        return not self.unparsed_reasons


# --- parsing -------------------------------------------------------------------------------

_parse_lock = threading.Lock()  # a tree-sitter Parser is not safe to share across threads


@cache
def _parser() -> Parser:
    """Load the grammar on first use so importing this module stays cheap (a session whose
    lines are all plain never loads it)."""
    from codeloop.shell.bash_grammar import bash_language, parser_types

    types = parser_types()
    parser: Parser = types.Parser(types.Language(bash_language()))
    return parser


@lru_cache(maxsize=16)
def parse_command(command: str) -> ParsedCommand:
    """Decompose `command` into the simple commands bash would run.

    One Bash call's line is asked about three times (its permission, whether it only reads,
    whether git runs in it), so the last few answers are kept: the result is shared and must
    not be changed by its readers."""
    return _parse(command, depth=0)


_MAX_SHELL_DEPTH = 8
_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&"})
# Statement containers, and the anonymous tokens each may hold; any other token (`;;` at top
# level, a stray `)`) means the grammar accepted something bash would reject.
_CONTAINERS: Mapping[str, frozenset[str]] = {
    "program": _SEPARATORS,
    "list": _SEPARATORS,
    "pipeline": _SEPARATORS,
    "negated_command": frozenset({"!"}),
    "subshell": _SEPARATORS | {"(", ")"},
    "compound_statement": _SEPARATORS | {"{", "}"},
    "do_group": _SEPARATORS | {"do", "done"},
    "if_statement": _SEPARATORS | {"if", "then", "fi"},
    "elif_clause": _SEPARATORS | {"elif", "then"},
    "else_clause": _SEPARATORS | {"else"},
    "while_statement": _SEPARATORS | {"while", "until"},
    "for_statement": _SEPARATORS | {"for", "select", "in"},
    "case_statement": _SEPARATORS | {"case", "in", "esac"},
    "case_item": _SEPARATORS | {"(", ")", "|", ";;", ";&", ";;&"},
}
_STATEMENTS = frozenset(_CONTAINERS) | {"command", "redirected_statement", "test_command"}
_STATEMENTS |= {"declaration_command", "unset_command", "function_definition"}
_STATEMENTS |= {"c_style_for_statement", "variable_assignments"}
_WHOLE_TEXT = frozenset({"string", "translated_string", "heredoc_body"})  # text between tokens
_LEAVES = frozenset({"word", "string_content", "regex", "extglob_pattern"})
_EXPANSION_START = LazyPattern(rb"[A-Za-z0-9_{(@*#?$!-]")  # after a `$`
_SUBSTITUTION_START = LazyPattern(r"`|\$[({\[]", needs="`$")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_TEST_EXPRESSIONS = frozenset(
    {"binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression"}
)
_LITERAL_ARITHMETIC = _TEST_EXPRESSIONS  # plus `number`, checked by value
_RUN_TIME_WORDS = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "extglob_pattern",
        "regex",
        "array",
    }
)
# Commands whose effect the walk cannot see: they run code from strings, files or tables.
_OPAQUE = frozenset({"eval", "source", ".", "exec", "alias", "trap", "hash", "enable", "let"})
# Prefixes that still run their argument as a shell builtin or keyword: `command eval ...`.
_BUILTIN_PREFIXES = frozenset({"command", "builtin", "time"})
# Builtins that take variable names; bash evaluates a subscript in a name as arithmetic.
_NAME_BUILTINS = frozenset(
    {"read", "mapfile", "readarray", "unset", "export", "declare", "typeset", "local"}
    | {"readonly", "getopts", "wait"}
)
_DECLARE_EVALUATING_FLAGS = LazyPattern(r"-[a-zA-Z]*[in]")  # -i: values are arithmetic; -n: refs
_CODE_VARIABLES = frozenset(
    {"PATH", "BASH_ENV", "ENV", "PS0", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "SHELLOPTS"}
    | {"BASHOPTS", "BASH_LOADABLES_PATH", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH"}
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# Commands that run another program from their arguments, so `timeout 5 sh -c '...'` is found.
_WRAPPERS = frozenset(
    {"command", "builtin", "time", "env", "nice", "nohup", "timeout", "stdbuf", "sudo", "doas"}
    | {"xargs", "setsid", "ionice", "find", "flock", "chrt", "taskset", "busybox"}
)
# `watch CMD ARGS` and `flock FILE -c CMD` hand their words to `sh -c`.
_WATCH_FLAGS = frozenset(
    {"-b", "--beep", "-c", "--color", "-C", "--no-color", "-d", "--differences", "-e"}
    | {"--errexit", "-g", "--chgexit", "-p", "--precise", "-t", "--no-title", "-w", "--no-wrap"}
    | {"-r", "--no-rerun"}
)
_WATCH_VALUED = frozenset({"-n", "--interval", "-q", "--equexit"})
_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_INTEGER = LazyPattern(r"[+-]?[0-9]+")
_NUMBER = LazyPattern(r"0[xX][0-9a-fA-F]+|[0-9]+")
_NAME = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")
_SAFE_NAME = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?")
_ESCAPE = LazyPattern(r"\\(.)", re.DOTALL, needs="\\")
_DQ_ESCAPE = LazyPattern(r'\\([$`"\\])', needs="\\")
_GLOB_OR_TILDE = LazyPattern(r"[*?]|\[.*\]|(^|[=:])~", needs="*?[~")
_BRACE_EXPANSION = LazyPattern(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}", needs="{")
# `${name}` and the operators that neither assign nor evaluate arithmetic. Of the `@`
# transformations, `@P` is left out: prompt expansion runs the `$(...)` inside the value.
_PLAIN_EXPANSION = LazyPattern(
    r"\$\{(#?[A-Za-z_][A-Za-z0-9_]*|#?[0-9]+|[@*#?$!-])"
    r"(\}|:?[-+?]|%%?|##?|/[/#%]?|\^\^?|,,?|@[QEAaULuKk]\})"
)
_ANSI_C_ESCAPE = LazyPattern(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL
)
_ANSI_C_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n"}
_ANSI_C_SIMPLE |= {"r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}

_Word = tuple[str, bool]  # resolved text, dynamic


def _unescape(raw: str) -> str:
    """Unquoted word: a backslash keeps the next character."""
    return _ESCAPE.sub(r"\1", raw)


def _unescape_double_quoted(raw: str) -> str:
    """Inside "...", a backslash only escapes $ ` " and \\."""
    return _DQ_ESCAPE.sub(r"\1", raw)


def _decode_ansi_c(body: str) -> str:
    """$'...' escapes, as bash decodes them (a NUL ends the string)."""

    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] in "xuU" and len(e) > 1:
            code = int(e[1:], 16)
            return chr(code) if code <= 0x10FFFF else m.group(0)
        if e[0] in "01234567":
            return chr(int(e, 8) & 0xFF)
        if e[0] == "c" and len(e) == 2:
            return chr(ord(e[1]) & 0x1F)
        return _ANSI_C_SIMPLE.get(e, m.group(0))

    return _ANSI_C_ESCAPE.sub(one, body).split("\0", 1)[0]


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _shell_script_operand(args: Sequence[str]) -> tuple[bool, int | None]:
    """For a shell's arguments: (runs a -c script, index of that script or of a script file).

    The index is None when the shell reads its commands from stdin (no operand, or -s)."""
    has_c = has_s = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--", "-"):
            i += 1
            break
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
        elif arg.startswith("--"):
            i += 1
        elif arg[:1] in ("-", "+") and len(arg) > 1:
            has_c = has_c or (arg[0] == "-" and "c" in arg)
            has_s = has_s or (arg[0] == "-" and "s" in arg)
            i += 1
        else:
            break
    if i >= len(args) or (has_s and not has_c):
        return has_c, None
    return has_c, i


def _line_continuations(src: bytes, root: Node) -> list[int]:
    """Offsets of the backslash-newline pairs bash deletes before it even splits words.

    The grammar treats them as blanks, so `x=\\<newline> rm y` reads as `x=rm` running `y`;
    bash runs `rm y`. They stay only where text is literal: '...', $'...', comments and the
    bodies of quoted here-documents.
    """
    if b"\\\n" not in src:
        return []
    literal: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("raw_string", "ansi_c_string", "comment"):
            literal.append((node.start_byte, node.end_byte))
        elif node.type == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            if start is not None and re.search(rb"['\"\\]", src[start.start_byte : start.end_byte]):
                bodies = [c for c in node.children if c.type == "heredoc_body"]
                literal += [(c.start_byte, c.end_byte) for c in bodies]
        stack += node.children
    literal.sort()
    cuts: list[int] = []
    i = j = 0
    while i < len(src) - 1:
        while j < len(literal) and literal[j][1] <= i:
            j += 1
        if j < len(literal) and literal[j][0] <= i:
            i = literal[j][1]
        elif src[i] == 0x5C:  # a backslash and the byte after it are one unit
            if src[i + 1] == 0x0A:
                cuts.append(i)
            i += 2
        else:
            i += 1
    return cuts


def _first_skipped(src: bytes, root: Node) -> int | None:
    """Offset of the first non-blank byte no token covers: `echo \\ a` loses its `\\ `."""
    masked = bytearray(src)
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0 or node.type in _WHOLE_TEXT:
            masked[node.start_byte : node.end_byte] = b" " * (node.end_byte - node.start_byte)
        else:
            stack += node.children
    rest = masked.lstrip()  # bytes strip what `\s` matches in a bytes pattern
    return len(masked) - len(rest) if rest else None


class _Extent:
    """Where a plain line's command lies, as the walk reads it of a grammar node."""

    __slots__ = ("end_byte", "start_byte")

    def __init__(self, start_byte: int, end_byte: int) -> None:
        self.start_byte = start_byte
        self.end_byte = end_byte


class _Walker:
    """One pass over a tree, collecting simple commands and reasons the result is incomplete."""

    def __init__(self, source: bytes, parsed: bytes, cuts: list[int], depth: int) -> None:
        self.source = source  # as given; spans are character offsets into it
        self.src = parsed  # with line continuations removed; what the tree describes
        self.shifts = [cut - 2 * k for k, cut in enumerate(cuts)]  # where each cut lands in src
        self.ascii = source.isascii()
        self.depth = depth
        self.commands: list[SimpleCommand] = []
        self.reasons: list[str] = []
        self.command_substitution = False
        self.process_substitution = False
        self.expanded: set[str] = set()
        self.loop_words: dict[str, list[_Word]] = {}
        self.fed_by: dict[tuple[int, int], tuple[int, int] | None] = {}

    def result(self) -> ParsedCommand:
        return ParsedCommand(
            commands=sorted(self.commands, key=lambda c: c.span[0]),
            unparsed_reasons=list(dict.fromkeys(self.reasons)),
            has_command_substitution=self.command_substitution,
            has_process_substitution=self.process_substitution,
            expanded_names=frozenset(self.expanded),
            loop_words={name: tuple(words) for name, words in self.loop_words.items()},
            fed_by=self.fed_by,
        )

    # helpers

    def raw(self, node: _Spanned) -> str:
        return self.src[node.start_byte : node.end_byte].decode(errors="replace")

    def pos(self, byte: int) -> int:
        """Character offset in the original text of a byte offset in the parsed text."""
        byte += 2 * bisect.bisect_right(self.shifts, byte)
        return byte if self.ascii else len(self.source[:byte].decode(errors="replace"))

    def span(self, node: _Spanned) -> tuple[int, int]:
        return self.pos(node.start_byte), self.pos(node.end_byte)

    def reject(self, node: _Spanned, why: str) -> None:
        snippet = self.raw(node)
        snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
        self.reasons.append(f"{why}: {snippet!r}")

    # statements

    def statement(self, node: Node, redirects: tuple[Redirect, ...]) -> None:
        kind = node.type
        if kind == "compound_statement" and node.child_count and node.children[0].type == "((":
            self.arithmetic(node)
        elif kind in _CONTAINERS:
            self.container(node, redirects)
        elif kind == "command":
            self.command(node, redirects, (), [], node)
        elif kind == "redirected_statement":
            self.redirected(node, redirects)
        elif kind in ("variable_assignment", "variable_assignments"):
            nodes = [node] if kind == "variable_assignment" else node.named_children
            assignments = [self.assignment(n) for n in nodes if n.type == "variable_assignment"]
            self.commands.append(
                SimpleCommand([], [], assignments, list(redirects), self.span(node))
            )
        elif kind in ("declaration_command", "unset_command"):
            keyword = node.children[0]
            words = [(self.raw(keyword), False), *self.words(node.children[1:])]
            self.finish(words, [], list(redirects), node)
        elif kind == "test_command":
            self.finish(self.test_words(node), [], list(redirects), node)
        elif kind == "c_style_for_statement":
            for i, child in enumerate(node.children):
                if node.field_name_for_child(i) in ("initializer", "condition", "update"):
                    self.arithmetic(child)
                elif child.type == "do_group":
                    self.statement(child, redirects)
        elif kind == "function_definition":
            self.reject(node, "defines a function")
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, redirects)
        elif kind not in ("comment", "ERROR"):  # ERROR: already reported as a syntax error
            self.reject(node, f"unsupported shell construct {kind}")

    def container(self, node: Node, redirects: tuple[Redirect, ...]) -> None:
        tokens = _CONTAINERS[node.type]
        if node.type == "pipeline":
            self.pipes(node)
        variable = node.child_by_field_name("variable") if node.type == "for_statement" else None
        if variable is not None:  # `for f; do` takes "$@": a variable with no words known
            self.loop_words.setdefault(self.raw(variable), [])
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if not child.is_named:
                if child.type not in tokens:
                    self.reject(child, f"unexpected {child.type!r}")
                elif child.type == "!" and self.src[child.end_byte : child.end_byte + 1].strip():
                    self.reject(node, "`!` joined to a word is a command name, not negation")
            elif field == "value":  # for-loop words, case subject and patterns
                words = self.words([child])
                if variable is not None:
                    self.loop_words.setdefault(self.raw(variable), []).extend(words)
            elif field != "variable":  # the for-loop variable is only a name
                self.statement(child, redirects)

    def pipes(self, node: Node) -> None:
        """Which simple command feeds each stage of the pipeline its input."""
        stages = [c for c in node.children if c.is_named and c.type != "comment"]
        joints = [c.type for c in node.children if not c.is_named]
        for i, (before, after) in enumerate(itertools.pairwise(stages)):
            simple = before.type in ("command", "redirected_statement")
            stdout_only = i < len(joints) and joints[i] == "|"
            self.fed_by[self.span(after)] = self.span(before) if simple and stdout_only else None

    def redirected(self, node: Node, outer: tuple[Redirect, ...]) -> None:
        body = node.child_by_field_name("body")
        own: list[Redirect] = []
        extra: list[_Word] = []
        trailing: list[Node] = []
        for child in node.children:
            if child.type in _REDIRECTS:
                own += self.redirect(child, extra, trailing)
            elif body is None or child.id != body.id:
                self.reject(child, "unexpected part of a redirected statement")
        if body is None:
            self.commands.append(SimpleCommand([], [], [], [*outer, *own], self.span(node)))
        elif body.type == "command":
            self.command(body, outer, tuple(own), extra, node)
        else:
            if extra:
                self.reject(node, "words after a redirect of a compound command")
            self.statement(body, (*outer, *own))
        for statement in trailing:
            self.statement(statement, outer)

    def command(
        self,
        node: Node,
        outer: tuple[Redirect, ...],
        own: tuple[Redirect, ...],
        extra: list[_Word],
        span_node: Node,
    ) -> None:
        assignments: list[Assignment] = []
        word_nodes: list[Node] = []
        redirects = [*own]
        trailing: list[Node] = []
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field == "name":
                word_nodes += child.children
            elif field == "argument":
                word_nodes.append(child)
            elif field == "redirect" and child.type in _REDIRECTS:
                redirects += self.redirect(child, extra, trailing)
            elif child.type == "variable_assignment" and not word_nodes:
                assignments.append(self.assignment(child))
            elif child.type != "comment":
                self.reject(child, "unexpected part of a command")
        self.finish([*self.words(word_nodes), *extra], assignments, [*outer, *redirects], span_node)
        for statement in trailing:
            self.statement(statement, outer)

    def finish(
        self,
        words: list[_Word],
        assignments: list[Assignment],
        redirects: list[Redirect],
        span_node: _Spanned,
    ) -> None:
        """Record one simple command, then look inside it for code the walk cannot see."""
        argv = [w for w, _ in words]
        dynamic = [d for _, d in words]
        span = self.span(span_node)
        shell_at, script = self.shell_script(argv, dynamic, span_node)
        self.commands.append(SimpleCommand(argv, dynamic, assignments, redirects, span, script))
        if argv and not dynamic[0]:
            self.check_builtins(argv, dynamic, span_node)
        if script is not None and shell_at is not None:
            if self.depth >= _MAX_SHELL_DEPTH:
                self.reject(span_node, "shell -c nested too deeply")
                return
            inner = _parse(script, self.depth + 1)
            self.commands += [replace(c, span=span) for c in inner.commands]
            self.reasons += [f"in {argv[shell_at]} -c: {r}" for r in inner.unparsed_reasons]
            self.command_substitution |= inner.has_command_substitution
            self.process_substitution |= inner.has_process_substitution
            self.expanded |= inner.expanded_names
            for name, taken in inner.loop_words.items():
                self.loop_words.setdefault(name, []).extend(taken)

    def shell_script(
        self, argv: list[str], dynamic: list[bool], node: _Spanned
    ) -> tuple[int | None, str | None]:
        """Find `sh -c SCRIPT` (directly or behind a wrapper); return (shell index, script)."""
        if not argv or dynamic[0]:
            return None, None
        if _basename(argv[0]) in ("watch", "flock", "su", "script", "runuser", "eval"):
            return self.joined_script(argv, dynamic, node)
        if _basename(argv[0]) in _SHELLS:
            at = 0
        elif argv[0] in _WRAPPERS:
            found = [i for i in range(1, len(argv)) if _basename(argv[i]) in _SHELLS]
            if not found or dynamic[found[0]]:
                return None, None
            at = found[0]
        else:
            return None, None
        has_c, operand = _shell_script_operand(argv[at + 1 :])
        if has_c and operand is not None:
            index = at + 1 + operand
            if dynamic[index]:
                self.reject(node, f"{argv[at]} -c script is not a literal")
                return None, None
            return at, argv[index]
        if not has_c and operand is None and at == 0:
            self.reject(node, f"{argv[0]} reads its commands from stdin")
        return None, None

    def joined_script(
        self, argv: list[str], dynamic: list[bool], node: _Spanned
    ) -> tuple[int | None, str | None]:
        """`watch [opts] CMD...` runs `sh -c "CMD..."`; `flock FILE -c CMD`, `su -c CMD`,
        `script -c CMD` run CMD in a shell; literal `eval WORDS` parses them joined. The
        commands are found so rules see them; eval and su stay refused as such."""
        if _basename(argv[0]) == "eval":  # eval parses its words, joined, as shell text
            if len(argv) < 2 or any(dynamic[1:]):
                return None, None
            return 0, " ".join(argv[1:])
        if _basename(argv[0]) != "watch":  # flock, su, script, runuser: `-c CMD`
            for i, word in enumerate(argv):
                attached = word.startswith("--command=")
                if not attached and not re.fullmatch(r"-[A-Za-z]*c|--command", word):
                    continue
                at = i if attached else i + 1
                if at >= len(argv) or dynamic[at]:
                    self.reject(node, f"{argv[0]} -c command is not a literal")
                    return None, None
                return 0, argv[at].split("=", 1)[1] if attached else argv[at]
            return None, None
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            word = argv[i]
            if word in ("-x", "--exec"):
                return None, None  # runs the words as a command, no shell
            if word in _WATCH_VALUED:
                i += 2
            elif word in _WATCH_FLAGS or word.split("=", 1)[0] in _WATCH_VALUED | _WATCH_FLAGS:
                i += 1
            else:
                self.reject(node, f"watch option {word} is not understood")
                return None, None
        if i >= len(argv):
            return None, None
        if any(dynamic[i:]):
            self.reject(node, "the command watch runs is not a literal")
            return None, None
        return 0, " ".join(argv[i:])

    def check_builtins(self, argv: list[str], dynamic: list[bool], node: _Spanned) -> None:
        """Flag builtins that run strings as code or evaluate names as arithmetic."""
        head = 0
        while head < len(argv) - 1 and argv[head] in _BUILTIN_PREFIXES and not dynamic[head + 1]:
            head += 1
            while head < len(argv) - 1 and argv[head] in ("-p", "--"):
                head += 1
            if argv[head] in ("-v", "-V"):  # `command -v x` only describes x
                return
        name, args = argv[head], argv[head + 1 :]
        if name in _OPAQUE:
            self.reject(node, f"{name} runs code the parser cannot see")
        if name in ("test", "[", "[["):
            for i, arg in enumerate(args):
                if arg in ("-v", "-R") and i + 1 < len(args):
                    if not _SAFE_NAME.fullmatch(args[i + 1]) or dynamic[head + 2 + i]:
                        self.reject(node, f"{arg} evaluates a variable name as code")
                elif name == "[[" and arg in _ARITH_TEST_OPS and 0 < i < len(args) - 1:
                    operands = ((args[i - 1], head + i), (args[i + 1], head + i + 2))
                    if any(not _INTEGER.fullmatch(w) or dynamic[j] for w, j in operands):
                        self.reject(node, f"{arg} evaluates its operands as arithmetic")
        if name in ("declare", "typeset", "local") and any(
            _DECLARE_EVALUATING_FLAGS.match(a) for a in args
        ):
            self.reject(node, f"{name} -i/-n evaluates values as code")
        targets = [a for a in args if not a.startswith("-")] if name in _NAME_BUILTINS else []
        if name == "printf":
            targets = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-v"]
        for target in targets:
            var = target.split("=", 1)[0]
            if any(c in var for c in "[$`") and not _SAFE_NAME.fullmatch(var):
                self.reject(node, f"{name} evaluates the subscript of {var!r} as code")

    # redirects

    def redirect(self, node: Node, extra: list[_Word], trailing: list[Node]) -> list[Redirect]:
        """Parse one redirect node; words the grammar hung on it go to `extra`/`trailing`."""
        kind = node.type
        op = ""
        fd: int | None = None
        targets: list[Node] = []
        found: list[Redirect] = []
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if field == "descriptor" and child.type == "file_descriptor":
                fd = int(self.raw(child)) if self.raw(child).isdigit() else None
                if fd is None:
                    self.reject(child, "unsupported file descriptor")
            elif not child.is_named and field in (None, "operator") and not op:
                op = child.type
            elif kind == "heredoc_redirect":
                if child.type == "heredoc_start":
                    targets.append(child)
                elif child.type == "heredoc_body":
                    if targets and not re.search(r"['\"\\]", self.raw(targets[0])):
                        self.heredoc_body(child)  # <<EOF expands its body; <<'EOF' does not
                elif child.type in _REDIRECTS:
                    found += self.redirect(child, extra, trailing)
                elif child.is_named and child.type != "heredoc_end":
                    trailing.append(child)  # `cat <<EOF | grep x`: the grammar nests the rest
                elif not child.is_named and child.type not in _SEPARATORS:
                    self.reject(child, "unexpected token in a here-document")
            elif field == "destination" or (kind == "herestring_redirect" and child.is_named):
                targets.append(child)
            else:
                self.reject(child, "unexpected part of a redirect")
        if kind == "heredoc_redirect":
            delimiter = re.sub(r"[\"'\\]", "", self.raw(targets[0])) if targets else None
            ends = [self.raw(c).lstrip("\t") for c in node.children if c.type == "heredoc_end"]
            if ends != [delimiter]:  # bash then reads the body to the end of the input
                self.reject(node, "here-document without its delimiter line")
            return [Redirect(op, delimiter, fd), *found]
        words = self.words(targets)
        extra += words[1:]  # `ls > out more`: bash passes `more` to ls
        target, dynamic = words[0] if words else (None, False)
        return [Redirect(op, target, fd, dynamic)]

    def check_leaf(self, node: Node) -> None:
        """A leaf holding `...` or $( means the grammar missed a substitution: `${x:-`cmd`}`."""
        if _SUBSTITUTION_START.search(_ESCAPE.sub("", self.raw(node))):
            self.reject(node, "substitution the grammar did not parse")

    def heredoc_body(self, node: Node) -> None:
        """The grammar misses backticks, and all of a <<- body: reject what it did not parse."""
        parsed = [c for c in node.named_children if c.type != "heredoc_content"]
        for child in parsed:
            self.visit(child)
        body = self.src[node.start_byte : node.end_byte]
        i = 0
        while i < len(body):
            if body[i : i + 1] == b"\\":
                i += 2
                continue
            if body[i : i + 1] == b"`" or body[i : i + 2] in (b"$(", b"${", b"$["):
                at = node.start_byte + i
                if not any(c.start_byte <= at < c.end_byte for c in parsed):
                    self.reject(node, "here-document expansion the grammar did not parse")
                    return
            i += 1

    # words

    def words(self, nodes: Sequence[Node]) -> list[_Word]:
        """Group sibling nodes into words: bash joins pieces with no blank between them."""
        groups: list[list[Node]] = []
        end = 0
        for node in nodes:
            if node.type == "comment":
                continue
            if groups and end == node.start_byte:
                groups[-1].append(node)
            else:
                groups.append([node])
            end = node.end_byte
        return [self.pieces(group) for group in groups]

    def pieces(self, nodes: Sequence[Node]) -> _Word:
        parts: list[str] = []
        unquoted: list[str] = []  # literal unquoted text, for brace-expansion detection
        dynamic = False
        for i, node in enumerate(nodes):
            if node.type == "$" and i + 1 < len(nodes) and nodes[i + 1].type == "string":
                dynamic = True  # $"..." is translated through the locale
                continue
            text, piece_dynamic = self.piece(node)
            parts.append(text)
            dynamic = dynamic or piece_dynamic
            if node.type in ("word", "number"):
                unquoted.append(_ESCAPE.sub("", self.raw(node)))
            else:
                unquoted.append("\0")
        if _BRACE_EXPANSION.search("".join(unquoted)):
            dynamic = True
        return "".join(parts), dynamic

    def piece(self, node: Node) -> _Word:
        kind = node.type
        raw = self.raw(node)
        if kind in ("word", "$") and any(map(str.isspace, _ESCAPE.sub("", raw))):  # `\s`
            self.reject(node, "blank inside a word")  # `ls\n\\rm x` or `} }`: a grammar slip
        if kind == "word":
            self.check_leaf(node)
            return _unescape(raw), bool(_GLOB_OR_TILDE.search(_ESCAPE.sub("", raw)))
        if kind == "$" and raw == "$" and _EXPANSION_START.match(self.src, node.end_byte):
            self.reject(node, "`$` the grammar did not expand")
        if kind in ("number", "variable_name", "$"):
            return _unescape(raw), False  # the grammar spells a literal `\$` as a `$` token
        if kind == "raw_string":
            return raw[1:-1], False
        if kind == "ansi_c_string":
            return _decode_ansi_c(raw[2:-1]), False
        if kind in ("string", "translated_string"):
            return self.string(node)
        if kind == "concatenation":
            return self.pieces(node.children)
        if kind == "variable_assignment":
            assignment = self.assignment(node)
            return f"{assignment.name}={assignment.value}", assignment.dynamic
        if kind == "subscript":
            self.subscript(node)
            return raw, True
        if kind in _RUN_TIME_WORDS:
            self.visit(node)
            return raw, True
        self.reject(node, f"unsupported word {kind}")
        return raw, True

    def string(self, node: Node) -> _Word:
        parts: list[str] = []
        dynamic = node.type == "translated_string"
        end = node.start_byte
        for child in node.children:
            gap = self.src[end : child.start_byte].decode(errors="replace")
            parts.append(_unescape_double_quoted(gap))  # the grammar skips bare newlines
            end = child.end_byte
            if child.type == "string_content":
                self.check_leaf(child)
                parts.append(_unescape_double_quoted(self.raw(child)))
            elif child.is_named or child.type == "$":
                text, child_dynamic = self.piece(child)
                parts.append(text)
                dynamic = dynamic or child_dynamic
            elif child.type == '"' and self.raw(child).endswith('"'):
                # `"\\ "`: the grammar folds a trailing escaped blank into the closing quote
                parts.append(_unescape_double_quoted(self.raw(child)[:-1]))
            elif child.type != '$"':
                self.reject(child, "unexpected token in a string")
        return "".join(parts), dynamic

    def assignment(self, node: Node) -> Assignment:
        name_node = node.child_by_field_name("name")
        values = node.children_by_field_name("value")
        if name_node is not None and name_node.type == "subscript":
            self.subscript(name_node)
        value, dynamic = self.pieces(values) if values else ("", False)
        appends = any(c.type == "+=" for c in node.children)
        name = self.raw(name_node) if name_node is not None else ""
        if not _NAME.fullmatch(name.split("[", 1)[0]):  # bash runs `*x=1` as a command
            self.reject(node, "not a valid assignment")
        if name.split("[", 1)[0] in _CODE_VARIABLES:
            self.reject(node, f"assigns {name}, which changes what later commands run")
        return Assignment(name, value, dynamic or appends)

    def subscript(self, node: Node) -> None:
        index = node.child_by_field_name("index")
        if index is not None:
            self.visit(index)
            if not _NUMBER.fullmatch(self.raw(index)):
                self.reject(node, "array subscript is evaluated as arithmetic")

    def test_words(self, node: Node) -> list[_Word]:
        """`[ ... ]` / `[[ ... ]]` flattened back into the words the test sees."""
        words: list[_Word] = []
        stack = list(reversed(node.children))
        while stack:
            child = stack.pop()
            if child.type in _TEST_EXPRESSIONS:
                stack += reversed(child.children)
            elif not child.is_named or child.type == "test_operator":
                words.append((self.raw(child), False))
            else:
                words += self.words([child])
        return words

    # expansions nested anywhere in a word

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind in ("command_substitution", "process_substitution"):
            if kind == "command_substitution":
                self.command_substitution = True
            else:
                self.process_substitution = True
            for child in node.named_children:
                if child.type == "file_redirect":  # $(< file)
                    redirects = self.redirect(child, [], [])
                    self.commands.append(SimpleCommand([], [], [], redirects, self.span(child)))
                else:
                    self.statement(child, ())
            for child in node.children:
                if not child.is_named and child.type not in ("$(", "`", "<(", ">(", ")", ";"):
                    self.reject(child, f"unexpected {child.type!r} in a substitution")
            if self.raw(node).startswith("`") and re.search(r"\\[`$\\]", self.raw(node)):
                self.reject(node, "backticks with escapes are parsed twice by bash")
        elif kind == "arithmetic_expansion":
            self.arithmetic(node)
        elif kind == "variable_name":
            self.expanded.add(self.raw(node))
        elif kind in _STATEMENTS:  # commands only ever nest in words through substitutions
            self.reject(node, f"unexpected {kind} inside a word")
        elif kind in _LEAVES:
            self.check_leaf(node)
        else:
            if kind == "expansion" and not _PLAIN_EXPANSION.match(self.raw(node)):
                self.reject(node, "expansion may assign or evaluate a value as arithmetic")
            for child in node.named_children:
                self.visit(child)

    def arithmetic(self, node: Node) -> None:
        """Arithmetic is only modeled when it is all literals: variables may hold code."""
        literal = True
        for child in node.named_children:
            if child.type in _LITERAL_ARITHMETIC:
                self.arithmetic(child)
            elif child.type == "number" and _NUMBER.fullmatch(self.raw(child)):
                continue
            else:
                literal = False
                self.visit(child)
        if not literal:
            self.reject(node, "arithmetic on a non-literal")


def _first_error(node: Node) -> Node:
    for child in node.children:
        if child.is_error or child.is_missing:
            return child
        if child.has_error:
            return _first_error(child)
    return node


def _parse(command: str, depth: int) -> ParsedCommand:
    if (words := plain_words(command)) is not None:
        return _parse_plain(command, words, depth)
    return _parse_tree(command, depth)


def _parse_tree(command: str, depth: int) -> ParsedCommand:
    """The line as tree-sitter's grammar reads it, walked."""
    source = parsed = command.encode()
    with _parse_lock:
        root = _parser().parse(source).root_node
        cuts = _line_continuations(source, root)
        if cuts:
            kept = zip([-2, *cuts], [*cuts, len(source)], strict=True)
            parsed = b"".join(source[a + 2 : b] for a, b in kept)
            root = _parser().parse(parsed).root_node
    walker = _Walker(source, parsed, cuts, depth)
    skipped = _first_skipped(parsed, root)
    if skipped is not None and not root.has_error:
        walker.reasons.append(f"text the grammar skipped at offset {walker.pos(skipped)}")
    if root.has_error:
        error = _first_error(root)
        at = walker.pos(error.start_byte)
        line = command.count("\n", 0, at) + 1
        column = at - (command.rfind("\n", 0, at) + 1) + 1
        walker.reject(error, f"syntax error at line {line}, column {column}")
    try:
        walker.statement(root, ())
    except RecursionError:
        walker.reasons.append("command is nested too deeply to analyse")
    return walker.result()


def _parse_plain(command: str, words: list[Word], depth: int) -> ParsedCommand:
    """A line of plain words (plain_line.py) is one simple command: bash splits it and takes
    the quotes off. What the command then runs (`bash -c`, `eval`, a wrapper) is looked into
    as for a parsed one."""
    source = command.encode()  # ASCII: byte offsets are character offsets
    walker = _Walker(source, source, [], depth)
    extent = _Extent(words[0][0], words[-1][1])
    walker.finish([(text, False) for _, _, text in words], [], [], extent)
    return walker.result()
