"""Which commands only read: the table, each entry reading arguments as its program does.

A command is read-only when it changes nothing (no file, process or shell state), runs nothing
it was not shown, and prints no secret. `READ_ONLY_COMMANDS` maps a program to None (read-only
whatever its arguments) or to a check of its literal arguments that says why they are not,
built on the program's own option grammar (argv_spec.py): `--` ends options, values attach the
way the program attaches them, and an option the check does not know is a reason to ask. sed
and awk programs are read (scripts.py); git has its own module (git_check.py).

Programs are named bare or by an absolute path in a standard system directory (`/usr/bin/grep`
is grep; `./grep` and `~/bin/grep` may be anything). Wrappers that only change how a command
runs (`timeout`, `nice`, `env A=1`, `command`, `xargs`, ...) are looked through
(command_effects.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from codeloop.shell.argv_spec import Args, ArgvError, Spec, parse
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
from codeloop.shell.scripts import SECRET_NAME, awk_problem, sed_problem
from codeloop.system.lazy_pattern import LazyPattern

__all__ = [
    "ARGUMENTS_NOT_FILES",
    "READ_ONLY_COMMANDS",
    "SAFE_PREFIX_ASSIGNMENTS",
    "ArgvCheck",
    "argv_problem",
    "command_name",
    "is_read_only_command",
    "is_read_only_simple_command",
    "line_problem",
    "simple_command_problem",
]

ArgvCheck = Callable[[Sequence[str]], "str | None"]
"""Given a command's literal arguments: why this invocation is not read-only, or None."""


def _with(spec: Spec, judge: Callable[[Args], str | None] | None = None) -> ArgvCheck:
    """A check that reads the arguments with `spec`, then lets `judge` look at the result."""

    def check(args: Sequence[str]) -> str | None:
        try:
            parsed = parse(spec, args)
        except ArgvError as exc:
            return str(exc)
        return judge(parsed) if judge is not None else None

    return check


def _refuse(*pairs: tuple[str, str]) -> Callable[[Args], str | None]:
    """A judge refusing options by canonical name: `_refuse(("-o", "writes a file"))`."""
    why = dict(pairs)

    def judge(args: Args) -> str | None:
        for name, _ in args.options:
            if name in why:
                return f"{name} {why[name]}"
        return None

    return judge


def _at_most(count: int, what: str) -> Callable[[Args], str | None]:
    def judge(args: Args) -> str | None:
        if len(args.operands) > count:
            return f"its operand {args.operands[count]!r} is {what}"
        return None

    return judge


# --- specs, from each program's manual (GNU coreutils 9, findutils 4.9, sed 4.9, file 5) ----

_SORT = Spec.of(
    "bdfgiMhnRrVcCmsuz",
    "kotTS",
    long_flags="ignore-leading-blanks dictionary-order ignore-case general-numeric-sort"
    " ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse"
    " version-sort debug merge stable unique zero-terminated help version",
    long_valued="random-source sort batch-size compress-program files0-from key output"
    " buffer-size field-separator temporary-directory parallel",
    long_optional="check",
    aliases={"output": "-o", "compress-program": "--compress-program"},
)
_UNIQ = Spec.of(
    "cdDiuz",
    "fsw",
    long_flags="count repeated ignore-case unique zero-terminated help version",
    long_valued="skip-fields skip-chars check-chars",
    long_optional="all-repeated group",
    numbers=True,
)
_TREE = Spec.of(
    "adlfxRqNQpugshDFvtcUrnACSXJi",
    "LPIoHT",
    long_flags="noreport inodes device dirsfirst filesfirst prune gitignore ignore-case"
    " matchdirs metafirst info du si nolinks fromfile fromtabfile fflinks help version",
    long_valued="charset filelimit timefmt sort infofile hintro houtro",
    abbreviate=False,
)
_FILE = Spec.of(
    "bcCdEhikLlNnprsSvzZ0",
    "eFfmP",
    long_flags="apple brief compile checking-printout exclude-quiet extension no-dereference"
    " mime mime-type mime-encoding keep-going list dereference no-pad no-buffer"
    " preserve-date raw special-files no-sandbox version uncompress uncompress-noreport"
    " print0 help",
    long_valued="exclude separator files-from magic-file parameter",
    aliases={
        "compile": "-C",
        "no-sandbox": "-S",
        "uncompress": "-z",
        "uncompress-noreport": "-Z",
    },
)
_BASE = Spec.of(
    "di",
    "w",
    long_flags="decode ignore-garbage help version base64 base64url base32 base32hex base16"
    " base2msbf base2lsbf z85",
    long_valued="wrap",
)
_DATE = Spec.of(
    "Ru",
    "dfrs",
    optional="I",
    long_flags="debug rfc-email utc universal resolution help version",
    long_valued="date file reference set rfc-3339",
    long_optional="iso-8601",
    aliases={"set": "-s"},
)
_PRINTENV = Spec.of("0", long_flags="null help version")
_HOSTNAME = Spec.of(
    "aAdfiIsyVh",
    long_flags="alias all-fqdns domain fqdn long ip-address all-ip-addresses short"
    " yp nis version help",
    abbreviate=False,
)
_SED = Spec.of(
    "nErsuzb",
    "efl",
    optional="i",
    long_flags="quiet silent debug follow-symlinks posix regexp-extended separate sandbox"
    " unbuffered null-data zero-terminated binary help version",
    long_valued="expression file line-length",
    long_optional="in-place",
    aliases={"expression": "-e", "file": "-f", "in-place": "-i"},
)
_AWK = Spec.of(
    "",
    "Fvfe",
    long_valued="field-separator assign file source",
    permute=False,
    aliases={"field-separator": "-F", "assign": "-v", "file": "-f", "source": "-e"},
)
_SHUF = Spec.of(
    "erz",
    "inoS",
    long_flags="echo repeat zero-terminated help version",
    long_valued="input-range head-count output random-source",
    aliases={"output": "-o"},
)


def _sed(args: Args) -> str | None:
    if args.has("-i"):
        return "-i edits the files in place"
    if args.has("-f"):
        return "-f reads a script the check cannot see"
    scripts = args.values("-e")
    if not scripts:
        if not args.operands:
            return "no script"
        scripts = args.operands[:1]
    return sed_problem("\n".join(scripts))


def _awk(args: Args) -> str | None:
    if args.has("-f"):
        return "-f reads a program the check cannot see"
    programs = args.values("-e") or args.operands[:1]
    if not programs:
        return "no program"
    problems = [p for p in map(awk_problem, programs) if p]
    return problems[0] if problems else None


def _printenv(args: Args) -> str | None:
    if not args.operands:
        return "it prints every environment variable, secrets included"
    secret = next((n for n in args.operands if SECRET_NAME.fullmatch(n)), None)
    return f"{secret} may hold a secret" if secret else None


def _date(args: Args) -> str | None:
    if args.has("-s"):
        return "-s sets the clock"
    setting = next((o for o in args.operands if not o.startswith("+")), None)
    return f"the operand {setting!r} sets the clock" if setting else None


def _hostname(args: Args) -> str | None:
    return f"the operand {args.operands[0]!r} sets the host name" if args.operands else None


_FIND_ONE_ARG = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"}
    | {"-lname", "-ilname", "-type", "-xtype", "-size", "-perm", "-user", "-group", "-uid"}
    | {"-gid", "-newer", "-anewer", "-cnewer", "-mtime", "-atime", "-ctime", "-mmin", "-amin"}
    | {"-cmin", "-links", "-inum", "-samefile", "-used", "-fstype", "-context", "-maxdepth"}
    | {"-mindepth", "-regextype", "-files0-from", "-printf"}
)
_FIND_NO_ARG = frozenset(
    {"-empty", "-executable", "-readable", "-writable", "-nouser", "-nogroup", "-true"}
    | {"-false", "-print", "-print0", "-ls", "-prune", "-quit", "-depth", "-d", "-mount"}
    | {"-xdev", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-daystart"}
    | {"-follow", "-warn", "-nowarn", "-help", "-version", "-not", "-a", "-and", "-o", "-or"}
    | {"(", ")", "!", ","}
)
_FIND_EFFECTS = {
    "-delete": "deletes what it finds",
    "-exec": "runs a command",
    "-execdir": "runs a command",
    "-ok": "runs a command",
    "-okdir": "runs a command",
    "-fprint": "writes a file",
    "-fprint0": "writes a file",
    "-fprintf": "writes a file",
    "-fls": "writes a file",
}
_FIND_NEWER_XY = LazyPattern(r"-newer[aBcmt][aBcmt]")


def _find(args: Sequence[str]) -> str | None:
    """findutils' grammar: global options, starting points, then an expression."""
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P", "-D") or re.fullmatch(r"-O\d", args[i])):
        i += 2 if args[i] == "-D" else 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("(", "!"):
        i += 1  # starting points
    while i < len(args):
        word = args[i]
        if word in _FIND_EFFECTS:
            return f"{word} {_FIND_EFFECTS[word]}"
        if word in _FIND_ONE_ARG or _FIND_NEWER_XY.fullmatch(word):
            i += 2
        elif word in _FIND_NO_ARG:
            i += 1
        else:
            return f"{word!r} is not a find primary the check knows"
    return None


def _rg(args: Sequence[str]) -> str | None:
    from codeloop.shell import ripgrep  # loads with the first rg line, not the first Bash call

    try:
        return ripgrep.search(args).problem
    except ArgvError as exc:
        return str(exc)


def _jq(args: Sequence[str]) -> str | None:
    if any(a in ("-f", "--from-file") or a.startswith("--from-file=") for a in args):
        return "-f reads a filter the check cannot see"
    if any(re.search(r"\$ENV\b|\benv\b", a) for a in args):
        return "it reads the environment, which may hold secrets"
    return None


def _ps(args: Sequence[str]) -> str | None:
    """BSD-style `ps e` (`ps auxe`, `ps eww`) prints every process's environment."""
    bsd = args[0] if args and not args[0].startswith("-") else ""
    return "e prints the environment of processes, secrets included" if "e" in bsd else None


def _printf(args: Sequence[str]) -> str | None:
    return "-v assigns a shell variable" if args and args[0].startswith("-v") else None


def _command(args: Sequence[str]) -> str | None:
    return None if args and args[0] in ("-v", "-V") else "it runs a command"


def _env(args: Sequence[str]) -> str | None:
    return "it prints every environment variable, secrets included"


def _git(args: Sequence[str]) -> str | None:
    from codeloop.shell.git_check import git_problem  # loads with the first git line

    return git_problem(args)


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

READ_ONLY_COMMANDS: Mapping[str, ArgvCheck | None] = {
    **dict.fromkeys(_ANY_ARGUMENTS),
    "sort": _with(
        _SORT,
        _refuse(
            ("-o", "writes its output to a file"),
            ("--compress-program", "runs a program"),
            ("--files0-from", "reads every file the list names, whatever they are"),
        ),
    ),
    "uniq": _with(_UNIQ, _at_most(1, "the file it writes")),
    "tree": _with(_TREE, _refuse(("-o", "writes a file"), ("-R", "writes 00Tree.html files"))),
    "file": _with(
        _FILE,
        _refuse(
            ("-C", "writes a compiled magic file"),
            ("-S", "turns file's sandbox off"),
            ("-z", "runs decompression programs"),
            ("-Z", "runs decompression programs"),
        ),
    ),
    **dict.fromkeys(("base64", "base32", "basenc"), _with(_BASE, _at_most(1, "not a file"))),
    "sed": _with(_SED, _sed),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _with(_AWK, _awk)),
    "shuf": _with(_SHUF, _refuse(("-o", "writes its output to a file"))),
    "date": _with(_DATE, _date),
    "printenv": _with(_PRINTENV, _printenv),
    "hostname": _with(_HOSTNAME, _hostname),
    "find": _find,
    "rg": _rg,
    "jq": _jq,
    "printf": _printf,
    "ps": _ps,
    "command": _command,
    "env": _env,
    "git": _git,
}
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
