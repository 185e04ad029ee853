"""Which commands only read: the table, each entry reading arguments as its program does.

A command is read-only when it changes nothing (no file, process or shell state), runs nothing
it was not shown, and prints no secret. `READ_ONLY_COMMANDS` maps a program to None (read-only
whatever its arguments) or to a check of its literal arguments that says why they are not
(argv_checks.py, which loads with the first line that runs a program with a check).

Programs are named bare or by an absolute path in a standard system directory (`/usr/bin/grep`
is grep; `./grep` and `~/bin/grep` may be anything). Wrappers that only change how a command
runs (`timeout`, `nice`, `env A=1`, `command`, `xargs`, ...) are looked through
(command_effects.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from codeloop.shell.bash_parse import (
    Assignment,
    ParsedCommand,
    Redirect,
    SimpleCommand,
    parse_command,
)
from codeloop.shell.command_effects import (
    SCHEDULING_WRAPPERS,
    SELF_DESCRIBING,
    WRITE_OPS,
    command_name,
    unwrap,
)
from codeloop.shell.secret_names import SECRET_NAME
from codeloop.system.lazy_pattern import LazyPattern

if TYPE_CHECKING:
    from codeloop.shell.argv_checks import ArgvCheck

__all__ = [
    "ARGUMENTS_NOT_FILES",
    "READ_ONLY_COMMANDS",
    "SAFE_PREFIX_ASSIGNMENTS",
    "argv_problem",
    "command_name",
    "is_read_only_command",
    "is_read_only_simple_command",
    "line_problem",
    "needs_protection",
    "simple_command_problem",
]

_ANY_ARGUMENTS = frozenset(
    {"ls", "dir", "vdir", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo"}
    | {"sleep", "which", "type", "stat", "du", "df", "cut", "tr", "nl", "basename", "dirname"}
    | {"realpath", "readlink", "true", "false", ":", "test", "[", "[[", "diff", "cmp", "comm"}
    | {"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"}
    | {"cksum", "sum", "id", "whoami", "groups", "logname", "uname", "arch", "nproc", "seq"}
    | {"tac", "rev", "paste", "join", "column", "od", "hexdump", "strings", "fold", "fmt"}
    | {"pr", "expand", "unexpand", "expr", "numfmt", "factor", "tsort", "cal", "uptime"}
    | {"tty", "who", "users", "locale", "getconf", "free", "pathchk", "pgrep", "lscpu"}
    | {"whereis"}
)

ARGUMENTS_NOT_FILES = frozenset(
    {"echo", "printf", "seq", "expr", "sleep", "true", "false", ":", "basename", "dirname"}
    | {"pwd", "id", "whoami", "groups", "logname", "uname", "arch", "nproc", "tty", "users"}
    | {"locale", "getconf", "free", "pathchk", "pgrep", "lscpu", "which", "type", "factor"}
    | {"numfmt", "cal", "uptime", "test", "[", "[[", "realpath", "readlink", "whereis"}
)
"""Commands that open no file their arguments name (they print them, test them, or ignore
them): an argument decided at run time cannot make them read a credential."""

# Programs read-only with some arguments only, each judged by its check in argv_checks.py.
_CHECKED = frozenset(
    {"sort", "uniq", "tree", "file", "base64", "base32", "basenc", "sed", "awk", "gawk"}
    | {"mawk", "nawk", "shuf", "date", "printenv", "hostname", "find", "rg", "jq", "printf"}
    | {"ps", "command", "env", "git"}
)


class _ReadOnlyCommands(Mapping[str, "ArgvCheck | None"]):
    """The table: its programs named here, a program's check looked up in argv_checks.py,
    which loads with the first line that runs a program with one."""

    def __getitem__(self, name: str) -> ArgvCheck | None:
        if name in _ANY_ARGUMENTS:
            return None
        if name not in _CHECKED:
            raise KeyError(name)
        from codeloop.shell.argv_checks import CHECKS

        return CHECKS[name]

    def __contains__(self, name: object) -> bool:
        return name in _ANY_ARGUMENTS or name in _CHECKED

    def __iter__(self) -> Iterator[str]:
        return iter(_ANY_ARGUMENTS | _CHECKED)

    def __len__(self) -> int:
        return len(_ANY_ARGUMENTS | _CHECKED)


READ_ONLY_COMMANDS: Mapping[str, ArgvCheck | None] = _ReadOnlyCommands()
"""Program → None (read-only with any arguments) or a check of its literal arguments.

A check never sees a dynamic word: a command with a check and a `$VAR`/glob/substitution
argument is not read-only (`find $X` could be `find -delete`).
"""

SAFE_PREFIX_ASSIGNMENTS: Mapping[str, frozenset[str] | None] = {
    **dict.fromkeys(
        {"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC"}
        | {"LC_TIME", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "TERM", "COLUMNS", "LINES"}
        | {"GIT_TERMINAL_PROMPT"}
    ),
    **dict.fromkeys(["PAGER", "GIT_PAGER", "MANPAGER"], frozenset({"", "cat"})),
}
"""`NAME=value cmd` prefixes allowed on a read-only command: name → None (any literal value)
or the allowed values. Others (PATH, LD_PRELOAD, GIT_EXTERNAL_DIFF, ...) can make a listed
command run something else."""

_DISCARD_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


def argv_problem(argv: Sequence[str]) -> str | None:
    """Why this literal argv (no expansions) is not read-only per the table, or None."""
    if not argv:
        return "no command"
    name = command_name(argv[0])
    if name is None:
        return f"{argv[0]} is a path, not a standard program"
    known = name in READ_ONLY_COMMANDS or name in SCHEDULING_WRAPPERS
    if known and list(argv[1:]) in SELF_DESCRIBING:
        return None  # it prints its usage or version (or refuses an option it lacks)
    if name not in READ_ONLY_COMMANDS:
        return f"{name} is not a command known to only read"
    check = READ_ONLY_COMMANDS[name]
    return check(argv[1:]) if check is not None else None


def _any_arguments_ok(word: str) -> bool:
    name = command_name(word)
    return name is not None and name in _ANY_ARGUMENTS


def redirect_problem(r: Redirect) -> str | None:
    """Why a redirection is not read-only: it writes (or opens a socket, or is not literal)."""
    if r.op in ("<<", "<<-", "<<<", ">&-", "<&-"):
        return None  # here-doc/-string text is data; nested substitutions are commands
    if r.target is None or r.target_dynamic:
        return f"the redirection {r.op} goes to a target decided at run time"
    if r.target.startswith(("/dev/tcp/", "/dev/udp/")):
        return f"{r.target} opens a network connection"
    if r.op == "<":
        return None
    if r.op in (">&", "<&") and (r.target.isdigit() or r.target == "-"):
        return None  # fd duplication; `>& file` (a word) is `&> file`
    if r.op in (">", ">>", "&>", "&>>", ">|", ">&") and r.target in _DISCARD_TARGETS:
        return None
    return f"{r.op} {r.target} writes a file"


RISKY_VARIABLE = LazyPattern(
    r"PATH|IFS|HOME|SHELL|ENV|CDPATH|GLOBIGNORE|PS[0-9]|PROMPT_COMMAND|VISUAL|"
    r"(BASH|LD|DYLD|GIT|XDG)_.*|.*(PATH|LIB|OPT|OPTS|OPTIONS|EDITOR|PAGER|STARTUP|RC|CONFIG)|"
    r".*_(COMMAND|CMD|PROGRAM|BIN|EXEC|HOOK|SHELL|PRELOAD)",
    re.IGNORECASE,
)
"""Variables that change which program runs or what it loads: a rule about `git` must not cover
`GIT_SSH_COMMAND=... git fetch`. A heuristic over names; harmless ones (NODE_ENV, CI) pass."""
# What else a variable set on its own line can change: bash's own state (where `cd ..` and
# `cd -` go, which programs a search skips, POSIX mode, the locale it parses in) and, when the
# name is already exported, what later programs trust or run (askpass, proxies, certificates).
_SHELL_STATE = LazyPattern(
    r"PWD|OLDPWD|POSIXLY_CORRECT|EXECIGNORE|FIGNORE|TMPDIR|HISTFILE|HOSTFILE|INPUTRC|LANG|"
    r"LANGUAGE|LC_[A-Z]+|.*(ASKPASS|BROWSER|WRAPPER|HOME|FLAGS|CERTS?|BUNDLE)|(?i:.*_proxy)"
)


def bare_assignment_problem(a: Assignment) -> str | None:
    """`FOO=bar` alone sets a shell variable and nothing else, unless bash or a later
    program gives the name a meaning (whether a later command expands it is the line's
    concern: `line_problem`)."""
    name = a.name.split("[", 1)[0]
    if RISKY_VARIABLE.fullmatch(name) or _SHELL_STATE.fullmatch(name):
        return f"setting {name} changes what later commands do"
    return None


def line_problem(parsed: ParsedCommand) -> str | None:
    """What the line does that none of its commands shows alone: it expands a secret, or a
    variable it sets itself (a `$X` is judged as any word, so `X=/etc/shadow; cat $X` would
    read what the check never saw)."""
    expanded = sorted(parsed.expanded_names)
    if secret := next((n for n in expanded if SECRET_NAME.fullmatch(n)), None):
        return f"the line expands ${secret}, which may hold a secret"
    for name in parsed.loop_words:  # `for PATH in /tmp; do ls; done` sets PATH
        if problem := bare_assignment_problem(Assignment(name, "", dynamic=True)):
            return problem
    own = {a.name.split("[", 1)[0] for c in parsed.commands if not c.argv for a in c.assignments}
    if found := next((n for n in expanded if n in own), None):
        return f"the line sets ${found} and expands it, so what it names cannot be judged"
    return None


def assignment_problem(a: Assignment) -> str | None:
    if a.dynamic or a.name not in SAFE_PREFIX_ASSIGNMENTS:
        return f"setting {a.name} can change what the command does"
    allowed = SAFE_PREFIX_ASSIGNMENTS[a.name]
    return None if allowed is None or a.value in allowed else f"{a.name}={a.value} runs a program"


def _plain_shell_c(argv: Sequence[str]) -> bool:
    """`bash -c SCRIPT [args]` with harmless options: the script's commands are checked apart."""
    i = 1
    while i < len(argv) and argv[i].startswith(("-", "+")):
        if argv[i] in ("-o", "+o"):
            i += 2
        elif re.fullmatch(r"-[ceuxl]+|--norc|--noprofile|--login", argv[i]):
            i += 1
        else:
            return False
    return True


def simple_command_problem(cmd: SimpleCommand, *, redirects: bool = True) -> str | None:
    """Why this one command is not read-only (changes files, processes or shell state, runs
    what it does not show, or prints a secret), or None. `redirects=False` leaves its
    redirections to the caller, which judges them as writes of their own.

    A bare assignment (`FOO=1` with no command) only sets a shell variable, unless its name
    means something to bash or to programs (`bare_assignment_problem`).
    """
    judged = cmd.redirects if redirects else [r for r in cmd.redirects if r.op not in WRITE_OPS]
    if found := next(filter(None, map(redirect_problem, judged)), None):
        return found
    inv = unwrap(cmd)
    if inv.problem:
        return inv.problem
    for wrapper in inv.wrappers:
        if wrapper not in SCHEDULING_WRAPPERS:
            return f"{wrapper} is not a command known to only read"
    if not inv.argv:
        return next(filter(None, map(bare_assignment_problem, inv.assignments)), None)
    if found := next(filter(None, map(assignment_problem, inv.assignments)), None):
        return found
    if inv.dynamic[0]:
        return "the command name is decided at run time"
    if cmd.script is not None and command_name(inv.argv[0]) in ("bash", "sh", "zsh", "dash"):
        return None if _plain_shell_c(inv.argv) else "a shell option the check does not know"
    if inv.open_args or any(inv.dynamic[1:]):
        if _any_arguments_ok(inv.argv[0]):
            return None
        why = "words from its input" if inv.open_args else "words decided at run time"
        return f"{inv.argv[0]} is given {why}, which could be any option"
    return argv_problem(inv.argv)


def is_read_only_simple_command(cmd: SimpleCommand) -> bool:
    return simple_command_problem(cmd) is None


def command_problem(command: str) -> str | None:
    """Why the line is not read-only, or None when every command it runs only reads."""
    parsed = parse_command(command)
    if not parsed.ok:
        return parsed.unparsed_reasons[0]
    if not parsed.commands:
        return "nothing to run"
    return line_problem(parsed) or next(
        filter(None, map(simple_command_problem, parsed.commands)), None
    )


def is_read_only_command(command: str) -> bool:
    """True only if every command the line would run is read-only; when in doubt, False."""
    return command_problem(command) is None


def needs_protection(command: str) -> bool:
    """Does this line run git only read-only? Then it runs under git_env.py's `protective_env`
    (a line that also commits keeps its hooks: that git command was approved as a writer)."""
    gits = []
    for cmd in parse_command(command).commands:
        inv = unwrap(cmd)
        if inv.argv and command_name(inv.argv[0]) == "git":
            gits.append(inv)
    if not gits:
        return False
    from codeloop.shell.git_check import git_problem  # loads with the first git line

    return all(not any(g.dynamic) and git_problem(g.argv[1:]) is None for g in gits)
