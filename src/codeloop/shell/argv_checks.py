"""The read-only table's checks of a program's literal arguments (readonly.py), each built on
the program's own option grammar (argv_spec.py): `--` ends options, values attach the way the
program attaches them, and an option the check does not know is a reason to ask. sed and awk
programs are read (scripts.py); git has its own module (git_check.py).

Apart from readonly.py, which names the programs, so that this module loads with the first line
that runs one of these programs (a line of programs read-only whatever their arguments, `echo`,
`ls`, `cat`, needs none of it), a program's spec is made with its check's first use, and the sed
and awk readers load with the first sed or awk line.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence

from codeloop.shell.argv_spec import Args, ArgvError, Spec, parse
from codeloop.shell.secret_names import SECRET_NAME
from codeloop.system.lazy_pattern import LazyPattern

__all__ = ["CHECKS", "ArgvCheck"]

ArgvCheck = Callable[[Sequence[str]], "str | None"]
"""Given a command's literal arguments: why this invocation is not read-only, or None."""


def _with(spec: Callable[[], Spec], judge: Callable[[Args], str | None] | None = None) -> ArgvCheck:
    """A check that reads the arguments with the program's spec, made by `spec` on the check's
    first use (a session runs few of these programs), then lets `judge` look at the result."""
    made = functools.cache(spec)

    def check(args: Sequence[str]) -> str | None:
        try:
            parsed = parse(made(), args)
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


def _sort_spec() -> Spec:
    return Spec.of(
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


def _uniq_spec() -> Spec:
    return Spec.of(
        "cdDiuz",
        "fsw",
        long_flags="count repeated ignore-case unique zero-terminated help version",
        long_valued="skip-fields skip-chars check-chars",
        long_optional="all-repeated group",
        numbers=True,
    )


def _tree_spec() -> Spec:
    return Spec.of(
        "adlfxRqNQpugshDFvtcUrnACSXJi",
        "LPIoHT",
        long_flags="noreport inodes device dirsfirst filesfirst prune gitignore ignore-case"
        " matchdirs metafirst info du si nolinks fromfile fromtabfile fflinks help version",
        long_valued="charset filelimit timefmt sort infofile hintro houtro",
        abbreviate=False,
    )


def _file_spec() -> Spec:
    return Spec.of(
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


def _base_spec() -> Spec:
    return Spec.of(
        "di",
        "w",
        long_flags="decode ignore-garbage help version base64 base64url base32 base32hex base16"
        " base2msbf base2lsbf z85",
        long_valued="wrap",
    )


def _date_spec() -> Spec:
    return Spec.of(
        "Ru",
        "dfrs",
        optional="I",
        long_flags="debug rfc-email utc universal resolution help version",
        long_valued="date file reference set rfc-3339",
        long_optional="iso-8601",
        aliases={"set": "-s"},
    )


def _printenv_spec() -> Spec:
    return Spec.of("0", long_flags="null help version")


def _hostname_spec() -> Spec:
    return Spec.of(
        "aAdfiIsyVh",
        long_flags="alias all-fqdns domain fqdn long ip-address all-ip-addresses short"
        " yp nis version help",
        abbreviate=False,
    )


def _sed_spec() -> Spec:
    return Spec.of(
        "nErsuzb",
        "efl",
        optional="i",
        long_flags="quiet silent debug follow-symlinks posix regexp-extended separate sandbox"
        " unbuffered null-data zero-terminated binary help version",
        long_valued="expression file line-length",
        long_optional="in-place",
        aliases={"expression": "-e", "file": "-f", "in-place": "-i"},
    )


def _awk_spec() -> Spec:
    return Spec.of(
        "",
        "Fvfe",
        long_valued="field-separator assign file source",
        permute=False,
        aliases={"field-separator": "-F", "assign": "-v", "file": "-f", "source": "-e"},
    )


def _shuf_spec() -> Spec:
    return Spec.of(
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
    from codeloop.shell.scripts import sed_problem  # loads with the first sed line

    return sed_problem("\n".join(scripts))


def _awk(args: Args) -> str | None:
    if args.has("-f"):
        return "-f reads a program the check cannot see"
    programs = args.values("-e") or args.operands[:1]
    if not programs:
        return "no program"
    from codeloop.shell.scripts import awk_problem  # loads with the first awk line

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


CHECKS: Mapping[str, ArgvCheck] = {
    "sort": _with(
        _sort_spec,
        _refuse(
            ("-o", "writes its output to a file"),
            ("--compress-program", "runs a program"),
            ("--files0-from", "reads every file the list names, whatever they are"),
        ),
    ),
    "uniq": _with(_uniq_spec, _at_most(1, "the file it writes")),
    "tree": _with(_tree_spec, _refuse(("-o", "writes a file"), ("-R", "writes 00Tree.html files"))),
    "file": _with(
        _file_spec,
        _refuse(
            ("-C", "writes a compiled magic file"),
            ("-S", "turns file's sandbox off"),
            ("-z", "runs decompression programs"),
            ("-Z", "runs decompression programs"),
        ),
    ),
    **dict.fromkeys(("base64", "base32", "basenc"), _with(_base_spec, _at_most(1, "not a file"))),
    "sed": _with(_sed_spec, _sed),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), _with(_awk_spec, _awk)),
    "shuf": _with(_shuf_spec, _refuse(("-o", "writes its output to a file"))),
    "date": _with(_date_spec, _date),
    "printenv": _with(_printenv_spec, _printenv),
    "hostname": _with(_hostname_spec, _hostname),
    "find": _find,
    "rg": _rg,
    "jq": _jq,
    "printf": _printf,
    "ps": _ps,
    "command": _command,
    "env": _env,
    "git": _git,
}
"""Program → the check of its literal arguments: why this invocation is not read-only, or
None."""
