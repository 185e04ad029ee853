"""What one parsed shell command runs and which paths it names or writes.

bash_parse.py says which simple commands a line holds; this module looks inside each one:
wrappers (`timeout 5 x`, `nice x`, `env A=1 x`, `command x`, `xargs x`, `find -exec x ;`) are
taken off so the program they run is what rules are matched against, and the operands of
commands that write files (rm, mv, cp, touch, mkdir, tee, sed -i, chmod, ln, dd, ...) and every
write redirection are listed, so path rules and the workspace boundary can be checked. A command
this module does not know is not judged harmless: it simply has no known write targets, and
the policy asks for it unless it is read-only or a rule allows it.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import field

from codeloop.shell.bash_parse import Assignment, Redirect, SimpleCommand
from codeloop.system.valueclass import valueclass

Word = tuple[str, bool]  # text, dynamic (bash still expands it)

SYSTEM_BIN_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
# A program's only argument when it is asked to describe itself: it prints and exits.
SELF_DESCRIBING = (["--help"], ["--version"])


def command_name(word: str) -> str | None:
    """The program a command word names: `grep`, `/usr/bin/grep` → grep; None for other paths
    (`./grep`, `bin/grep`), which may be anything."""
    if "/" not in word:
        return word
    for directory in SYSTEM_BIN_DIRS:
        if word.startswith(directory) and "/" not in word[len(directory) :]:
            return word[len(directory) :] or None
    return None


# Wrappers that only change when, how fast or with which environment their command runs: an
# allow rule for the command covers it behind them, as Claude Code's do behind `timeout`,
# `time`, `nice`, `nohup`, `stdbuf` and `xargs` (nohup writes nohup.out only when its output is
# a terminal, which a tool's never is). Not `watch` (runs it again and again), `flock` (creates
# its lock file), `strace -o` (writes), `setsid`, `chrt`, `taskset`, `busybox`, `exec`: what
# runs there is more than the command a rule names.
SCHEDULING_WRAPPERS = frozenset(
    {"command", "builtin", "time", "nice", "timeout", "env", "stdbuf", "xargs", "ionice"}
)
RULE_TRANSPARENT_WRAPPERS = SCHEDULING_WRAPPERS | {"nohup"}

# Run their command as another user or in another root: a rule about the inner program must not
# cover them.
_ELEVATING = frozenset({"sudo", "doas", "su", "pkexec", "runuser", "chroot", "nsenter"})
_ELEVATING |= {"unshare", "setpriv", "capsh"}


@valueclass
class _Wrapper:
    """How a wrapper reads its own options before the command it runs."""

    bare: frozenset[str] = frozenset()  # options without a value
    valued: frozenset[str] = frozenset()  # options taking a value (next word, or attached)
    positional: int = 0  # words between the options and the command (timeout's duration)
    open_args: bool = False  # the command receives words we cannot see (xargs' stdin)
    not_wrapping: frozenset[str] = frozenset()  # options that mean no command is run


# The programs `unwrap` takes off to reach the command they run (`env` is read apart).
_WRAPPING = frozenset(
    {"command", "builtin", "time", "nohup", "nice", "timeout", "stdbuf", "setsid", "ionice"}
    | {"flock", "watch", "chrt", "taskset", "busybox", "exec", "strace", "ltrace", "xargs"}
)


@functools.cache
def _wrapper_specs() -> dict[str, _Wrapper]:
    """How each of `_WRAPPING` reads its options: built with the first line that runs one."""
    return {
        "command": _Wrapper(frozenset({"-p"}), not_wrapping=frozenset({"-v", "-V"})),
        "builtin": _Wrapper(),
        "time": _Wrapper(frozenset({"-p"})),
        "nohup": _Wrapper(),
        "nice": _Wrapper(valued=frozenset({"-n", "--adjustment"})),
        "timeout": _Wrapper(
            frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
            frozenset({"-s", "--signal", "-k", "--kill-after"}),
            positional=1,
        ),
        "stdbuf": _Wrapper(valued=frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
        "setsid": _Wrapper(frozenset({"-c", "--ctty", "-f", "--fork", "-w", "--wait"})),
        "ionice": _Wrapper(
            frozenset({"-t", "--ignore"}),
            frozenset({"-c", "--class", "-n", "--classdata"}),
            not_wrapping=frozenset({"-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
        ),
        "flock": _Wrapper(
            frozenset({"-s", "--shared", "-x", "-e", "--exclusive", "-u", "--unlock", "-n", "--nb"})
            | {"--nonblock", "-o", "--close", "-F", "--no-fork", "--verbose"},
            frozenset({"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"}),
            positional=1,  # the lock file
            not_wrapping=frozenset({"-c", "--command"}),  # a script for `sh -c`: parsed apart
        ),
        "watch": _Wrapper(
            frozenset({"-b", "--beep", "-c", "--color", "-C", "--no-color", "-d", "--differences"})
            | {"-e", "--errexit", "-g", "--chgexit", "-p", "--precise", "-t", "--no-title", "-x"}
            | {"--exec", "-w", "--no-wrap", "-r", "--no-rerun"},
            frozenset({"-n", "--interval", "-q", "--equexit"}),
        ),
        "chrt": _Wrapper(
            frozenset({"-a", "--all-tasks", "-b", "--batch", "-d", "--deadline", "-f", "--fifo"})
            | {"-i", "--idle", "-o", "--other", "-r", "--rr", "-R", "--reset-on-fork", "-v"},
            frozenset({"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"}),
            positional=1,
            not_wrapping=frozenset({"-p", "--pid", "-m", "--max"}),
        ),
        "taskset": _Wrapper(
            frozenset({"-a", "--all-tasks", "-c", "--cpu-list"}),
            positional=1,
            not_wrapping=frozenset({"-p", "--pid"}),
        ),
        "busybox": _Wrapper(),
        "exec": _Wrapper(frozenset({"-c", "-l"}), frozenset({"-a"})),
        **dict.fromkeys(
            ("strace", "ltrace"),
            _Wrapper(
                frozenset(
                    {"-f", "-ff", "-c", "-C", "-d", "-D", "-i", "-k", "-q", "-qq", "-r", "-t"}
                )
                | {"-tt", "-ttt", "-T", "-v", "-w", "-x", "-xx", "-y", "-yy", "-z", "-Z", "-n"},
                frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-S", "-O", "-P", "-X", "-b"}),
            ),
        ),
        "xargs": _Wrapper(
            frozenset(
                {"-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit"}
            ),
            frozenset({"-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a", "-i", "-l", "-e"})
            | {"--arg-file", "--delimiter", "--max-args", "--max-lines", "--max-procs"}
            | {"--max-chars", "--eof", "--replace"},
            open_args=True,
        ),
    }


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@functools.cache
def _elevating_specs() -> dict[str, _Wrapper]:
    """How to find the command behind the privilege wrappers, so deny rules still see it: built
    with the first line that runs one."""
    return {
        "sudo": _Wrapper(
            frozenset({"-A", "-b", "-E", "-H", "-n", "-P", "-S", "-i", "-s", "-k", "-K", "-B"})
            | {"--askpass", "--background", "--preserve-env", "--set-home", "--non-interactive"}
            | {"--stdin", "--login", "--shell", "--reset-timestamp", "--bell"},
            frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"})
            | {"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role"}
            | {"--type", "--other-user", "--command-timeout", "--chroot"},
        ),
        "doas": _Wrapper(frozenset({"-n", "-s"}), frozenset({"-u", "-C"})),
        "runuser": _Wrapper(
            frozenset({"-l", "--login", "-m", "-p"}), frozenset({"-u", "-g", "-G"})
        ),
        "unshare": _Wrapper(
            frozenset({"-m", "-u", "-i", "-n", "-p", "-U", "-C", "-T", "-f", "-r", "-c", "--fork"})
            | {"--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time"}
            | {"--map-root-user", "--map-current-user", "--mount-proc", "--kill-child"},
            frozenset({"-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd"}),
        ),
        "chroot": _Wrapper(positional=1),
    }


@valueclass
class Invocation:
    """A program one simple command runs, wrappers taken off.

    `wrapped` is the argv as written (with its wrappers) for deny and ask rules, which must
    hold whichever way the command is spelled. `problem` says why no rule may allow it.
    """

    argv: list[str]
    dynamic: list[bool]
    assignments: list[Assignment]
    redirects: list[Redirect]
    script: str | None
    wrapped: list[str]
    open_args: bool = False
    problem: str | None = None
    extra: list[Invocation] = field(default_factory=list)  # commands run by find -exec
    wrappers: list[str] = field(default_factory=list)  # taken off, outermost first
    wrapped_dynamic: list[bool] = field(default_factory=list)  # `dynamic` of `wrapped`

    def rule_words(self) -> tuple[list[str], list[bool]]:
        """What an allow rule is matched against: the command behind wrappers that only
        schedule it, else the line as written (`Bash(ls:*)` does not cover `watch ls`)."""
        if all(w in RULE_TRANSPARENT_WRAPPERS for w in self.wrappers):
            return self.argv, self.dynamic
        return self.wrapped, self.wrapped_dynamic

    def simple(self) -> SimpleCommand:
        return SimpleCommand(
            self.argv, self.dynamic, self.assignments, self.redirects, (0, 0), self.script
        )


def unwrap(cmd: SimpleCommand) -> Invocation:
    """The program `cmd` runs, judged through its wrappers."""
    argv, dynamic = list(cmd.argv), list(cmd.argv_dynamic)
    assignments = list(cmd.assignments)
    open_args = False
    problem = None
    wrappers: list[str] = []
    while argv and not dynamic[0]:
        name = command_name(argv[0]) or argv[0]
        if argv[1:] in SELF_DESCRIBING:
            break  # `timeout --help` prints its usage and runs nothing
        if name in _ELEVATING:
            problem = problem or f"`{name}` runs a command with other privileges"
            elevating = _elevating_specs()
            if name not in elevating:
                break  # what it runs stays unknown; deny rules still see it as written
            start, _ = _wrapper_start(elevating[name], argv, dynamic)
            if start is None:
                break
            argv, dynamic = argv[start:], dynamic[start:]
            wrappers.append(name)
            continue
        if name == "env":
            start, env_problem = _env_start(argv, dynamic, assignments)
        elif name in _WRAPPING:
            start, env_problem = _wrapper_start(_wrapper_specs()[name], argv, dynamic)
        else:
            break
        if env_problem:
            problem = env_problem
            break
        if start is None:
            break
        open_args = open_args or (name in _WRAPPING and _wrapper_specs()[name].open_args)
        argv, dynamic = argv[start:], dynamic[start:]
        wrappers.append(name)
    inv = Invocation(
        argv,
        dynamic,
        assignments,
        list(cmd.redirects),
        cmd.script,
        cmd.argv,
        open_args,
        problem,
        wrappers=wrappers,
        wrapped_dynamic=list(cmd.argv_dynamic),
    )
    if argv and command_name(argv[0]) == "find":
        inv.extra.extend(_find_execs(argv, dynamic, cmd.argv))
    return inv


def _wrapper_start(
    spec: _Wrapper, argv: Sequence[str], dynamic: Sequence[bool]
) -> tuple[int | None, str | None]:
    """Index of the wrapped command in `argv`; None when it runs none; or a problem."""
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        arg = argv[i]
        if dynamic[i]:
            return None, f"`{argv[0]}` has an option decided at run time"
        if arg == "--":
            i += 1
            break
        if arg in spec.not_wrapping:
            return None, None
        if arg in spec.bare:
            i += 1
        elif arg in spec.valued:
            i += 2
        elif arg.split("=", 1)[0] in spec.valued or arg[:2] in spec.valued:
            i += 1  # --signal=KILL, -n5, -oL
        elif argv[0] == "nice" and re.fullmatch(r"-[0-9]+", arg):
            i += 1
        else:
            return None, f"`{argv[0]}` option {arg} is not understood"
    i += spec.positional
    if i < len(argv) and argv[i] in spec.not_wrapping:
        return None, None  # `flock FILE -c CMD`
    return (i, None) if i < len(argv) else (None, None)


def _env_start(
    argv: Sequence[str], dynamic: Sequence[bool], assignments: list[Assignment]
) -> tuple[int | None, str | None]:
    """`env [-i] [-u NAME] [NAME=VALUE]... CMD`: the assignments join the command's own."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return (i + 1 if i + 1 < len(argv) else None), None
        if arg in ("-i", "-", "--ignore-environment", "-0", "--null"):
            i += 1
        elif arg in ("-u", "--unset"):
            i += 2
        elif arg.startswith(("-u", "--unset=")):
            i += 1
        elif arg.startswith("-"):
            return None, f"`env` option {arg} is not understood"  # -S splits, -C moves, ...
        elif "=" in arg:
            name, value = arg.split("=", 1)
            assignments.append(Assignment(name, value, dynamic[i]))
            i += 1
        else:
            return i, None
    return None, None


def _find_execs(
    argv: Sequence[str], dynamic: Sequence[bool], wrapped: list[str]
) -> list[Invocation]:
    """The commands `find ... -exec CMD {} ;` runs; `{}` stands for paths find picks."""
    found = []
    i = 1
    while i < len(argv):
        if argv[i] in _FIND_EXEC:
            end = i + 1
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            inner = list(argv[i + 1 : end])
            inner_dynamic = [
                d or "{}" in w for w, d in zip(inner, dynamic[i + 1 : end], strict=True)
            ]
            if inner:
                found.append(Invocation(inner, inner_dynamic, [], [], None, wrapped, True))
            i = end
        i += 1
    return found


# --- paths a command names and writes -------------------------------------------------------

# Options that take a value, for the commands whose operands are write targets.
_TARGET = frozenset({"-t", "--target-directory"})
_SUFFIX = frozenset({"-S", "--suffix"})
_VALUED: dict[str, frozenset[str]] = {
    "truncate": frozenset({"-s", "--size", "-r", "--reference"}),
    "mkdir": frozenset({"-m", "--mode", "--context"}),
    "touch": frozenset({"-d", "--date", "-t", "-r", "--reference"}),
    "shred": frozenset({"-n", "--iterations", "-s", "--size", "--random-source"}),
    "cp": _TARGET | _SUFFIX,
    "mv": _TARGET | _SUFFIX,
    "ln": _TARGET | _SUFFIX,
    "install": _TARGET | _SUFFIX | {"-m", "--mode", "-o", "--owner", "-g", "--group"},
    "sed": frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"}),
    **dict.fromkeys(
        ("awk", "gawk", "mawk", "nawk"),
        frozenset({"-F", "-v", "-f", "-e", "--source", "--assign", "--field-separator"}),
    ),
    **dict.fromkeys(
        ("grep", "egrep", "fgrep", "rg"),
        frozenset({"-e", "--regexp", "-f", "--file", "-m", "-A", "-B", "-C", "-g", "--glob"}),
    ),
    "chmod": frozenset({"--reference"}),
    "chown": frozenset({"--reference", "--from"}),
    "chgrp": frozenset({"--reference"}),
}
# Every operand is written (after `_LEADING` operands that are not paths: a mode, an owner).
_WRITES_ALL = frozenset(
    {"rm", "rmdir", "unlink", "shred", "touch", "mkdir", "truncate", "tee", "mv", "mkfifo"}
    | {"chmod", "chown", "chgrp", "chattr", "setfacl", "mknod", "split", "csplit"}
)
_LEADING = {"chmod": 1, "chown": 1, "chgrp": 1, "chattr": 1, "setfacl": 1}
# The last operand is written (or the -t directory).
_WRITES_LAST = frozenset({"cp", "ln", "install", "rsync", "scp"})
# Options that name an output file, for any command (`git diff --output=F`, `sort -o F`).
_OUTPUT_OPTIONS = frozenset(
    {"--output", "--output-file", "--out-file", "--outfile", "--log-file", "--logfile"}
)
_DASH_O_WRITES = frozenset({"sort", "gcc", "g++", "cc", "clang", "curl", "go", "rustc", "uniq"})
WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&"})
_SYMLINK_MAKERS = frozenset({"ln", "cp", "rsync"})
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "tar", "zip", "rsync"})


@valueclass
class PathUse:
    """The paths one command names, writes and reads whole trees of."""

    named: list[Word]  # every word that may be a path (reads included)
    written: list[Word]  # words naming paths the command writes
    makes_links: bool  # may create a symlink, so later writes in the line can be redirected
    trees: list[Word]  # directories read recursively (grep -r, rg, tar, cp -r, ...)
    redirected: list[Word] = field(default_factory=list)  # written by `>` and friends


def path_uses(inv: Invocation) -> PathUse:
    named: list[Word] = []
    written: list[Word] = []
    redirected: list[Word] = []
    for r in inv.redirects:
        if r.target is None or r.op in ("<<", "<<-", "<<<"):
            continue
        if r.op in (">&", "<&") and (r.target.isdigit() or r.target == "-"):
            continue  # descriptor duplication
        word = (r.target, r.target_dynamic)
        named.append(word)
        if r.op in WRITE_OPS:
            written.append(word)
            redirected.append(word)
    if not inv.argv:
        return PathUse(named, written, False, [], redirected)
    name, args, dynamic = command_name(inv.argv[0]) or inv.argv[0], inv.argv[1:], inv.dynamic[1:]
    for arg, dyn in zip(args, dynamic, strict=True):
        named.append((arg, dyn))
        if "=" in arg and not dyn:  # --file=x, of=x, key=value
            named.append((arg.split("=", 1)[1], False))
    operands, options = _operands(name, args, dynamic)
    named += _program_files(name, operands, options)
    target_dir = next((v for o, v in options if o in _TARGET), None)
    if name in _WRITES_ALL:
        written += operands[_LEADING.get(name, 0) :]
    elif name in _WRITES_LAST and (operands or target_dir):
        written += [target_dir] if target_dir else operands[-1:]
    elif name == "sed" and any(a.startswith("-i") or a.startswith("--in-place") for a in args):
        has_script = any(o in ("-e", "--expression", "-f", "--file") for o, _ in options)
        written += operands if has_script else operands[1:]
    elif name == "dd":
        written += [(a[3:], d) for a, d in zip(args, dynamic, strict=True) if a.startswith("of=")]
    elif name == "find" and "-delete" in args:
        words = zip(args, dynamic, strict=True)
        starts = list(itertools.takewhile(lambda w: not w[0].startswith(("-", "(", "!")), words))
        written += starts or [(".", False)]
    if name == "mv" and target_dir:
        written += operands
    written += _output_options(name, args, dynamic)
    links = name in _SYMLINK_MAKERS and _makes_links(name, args)
    trees = _trees(name, args, dynamic, operands, options)
    return PathUse(named, written, links, trees, redirected)


def _program_files(name: str, operands: list[Word], options: list[tuple[str, Word]]) -> list[Word]:
    """Files a sed or awk program itself reads or writes (`sed 'r FILE'`)."""
    language = (
        "sed" if name == "sed" else "awk" if name in _VALUED and "-F" in _VALUED[name] else ""
    )
    if not language:
        return []
    from codeloop.shell.scripts import script_files  # loads with the first sed or awk line

    programs = [v for o, v in options if o in ("-e", "--expression", "--source")]
    programs = programs or operands[:1]
    return [(f, False) for text, dyn in programs if not dyn for f in script_files(language, text)]


def _trees(
    name: str,
    args: Sequence[str],
    dynamic: Sequence[bool],
    operands: list[Word],
    options: list[tuple[str, Word]],
) -> list[Word]:
    """The directories a command reads whole: searchers default to `.` after their pattern."""
    if name == "rg" and not any(dynamic):
        from codeloop.shell import ripgrep  # loads with the first rg line
        from codeloop.shell.argv_spec import ArgvError

        with contextlib.suppress(ArgvError):  # an option rg lacks: the guess below
            found = ripgrep.search(args)
            return [(p, False) for p in found.operands or ["."]] if found.reads_contents else []
    letters = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    long = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    if name in _SEARCHERS and (
        name in _ALWAYS_RECURSIVE
        or set(letters) & set("rR")
        or long & {"--recursive", "--dereference-recursive"}
    ):
        explicit = any(o in ("-e", "--regexp", "-f", "--file") for o, _ in options)
        return (operands if explicit else operands[1:]) or [(".", False)]
    if name in _ALWAYS_RECURSIVE or (name in ("cp", "scp") and set(letters) & set("rRa")):
        return operands
    return []


def _output_options(name: str, args: Sequence[str], dynamic: Sequence[bool]) -> list[Word]:
    found: list[Word] = []
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if key in _OUTPUT_OPTIONS or (key == "-o" and name in _DASH_O_WRITES):
            if eq:
                found.append((value, dynamic[i]))
            elif i + 1 < len(args):
                found.append((args[i + 1], dynamic[i + 1]))
        elif arg.startswith("-o") and len(arg) > 2 and name in _DASH_O_WRITES:
            found.append((arg[2:], dynamic[i]))
    return found


def _operands(
    name: str, args: Sequence[str], dynamic: Sequence[bool]
) -> tuple[list[Word], list[tuple[str, Word]]]:
    """Operands (dynamic words count as operands: they may be anything) and option values."""
    valued = _VALUED.get(name, frozenset())
    operands: list[Word] = []
    options: list[tuple[str, Word]] = []
    i = 0
    only_operands = False
    while i < len(args):
        arg, dyn = args[i], dynamic[i]
        if only_operands or dyn or not arg.startswith("-") or arg == "-":
            operands.append((arg, dyn))
        elif arg == "--":
            only_operands = True
        elif arg in valued and i + 1 < len(args):
            options.append((arg, (args[i + 1], dynamic[i + 1])))
            i += 1
        elif "=" in arg and arg.split("=", 1)[0] in valued:
            key, value = arg.split("=", 1)
            options.append((key, (value, False)))
        elif arg[:2] in valued and len(arg) > 2 and not arg.startswith("--"):
            options.append((arg[:2], (arg[2:], False)))
        i += 1
    return operands, options


def _makes_links(name: str, args: Sequence[str]) -> bool:
    """ln always may; cp and rsync when told to make or keep symlinks (-s, -a, -d, -P, -l)."""
    if name == "ln":
        return True
    letters = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    long = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    if name == "cp":
        return bool(set(letters) & set("sadP")) or bool(
            long & {"--symbolic-link", "--archive", "--no-dereference"}
        )
    return bool(set(letters) & set("al")) or bool(long & {"--links", "--archive"})
