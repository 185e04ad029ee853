"""Which credentials the words a pipeline produces can name.

`find . -name '*.txt' | xargs wc -l` and `cat $(git ls-files | head -1)` read files whose names
no check sees: another command prints them. They are read-only only when what that producer can
print is bounded and reaches no credential: `echo` prints its own words, `git ls-files` the
repository's tracked files (asked from git: a tracked `.env` is still a credential), plain `ls`
the visible entries of its folders, `find` the entries under its starting points that match
its `-name` tests. Later stages must pass whole lines (`head`, `sort`, `grep`, ...), never parts
of them. Anything else, or a name word splitting would cut into other names, is unbounded: None.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
from collections.abc import Sequence
from pathlib import Path

from codeloop.permissions import paths
from codeloop.shell.bash_parse import ParsedCommand, SimpleCommand, parse_command
from codeloop.shell.command_effects import command_name, unwrap
from codeloop.shell.git_check import ask_git, repository_problem
from codeloop.system.lazy_pattern import LazyPattern

__all__ = ["fed_credentials", "substituted_credentials"]

# Stages that print some of their input lines whole (no option turns them into anything else
# that matters here: counts and line numbers are not file names of the input).
_LINE_FILTERS = frozenset({"head", "tail", "sort", "uniq", "tac", "shuf", "grep", "egrep"})
_FILTER_ARG = LazyPattern(r"-[0-9A-Za-z]*|--[a-z-]+(=.*)?|[0-9]+")
# Options that print part of a line (`grep -o`, `head -c`), which can be another file's name,
# or lines that are not from the input (`grep -r` and `sort --files0-from` read files).
_GREP_NOT_INPUT = LazyPattern(
    r"-[A-Za-z0-9]*[orRd][A-Za-z0-9]*|"
    r"--(only-matching|recursive|dereference-recursive|directories|include|exclude).*"
)
_NOT_INPUT_LINES = {
    "grep": _GREP_NOT_INPUT,
    "egrep": _GREP_NOT_INPUT,
    "head": LazyPattern(r"-[A-Za-z0-9]*c.*|--bytes.*"),
    "tail": LazyPattern(r"-[A-Za-z0-9]*c.*|--bytes.*"),
    "sort": LazyPattern(r"--files0-from.*"),
}
_XARGS_OTHER_INPUT = ("-a", "--arg-file", "-d", "--delimiter")
_LS_FILES_FLAGS = frozenset({"-c", "--cached", "-m", "--modified", "-z"})
# What makes a find print more than its matching entries, or match by more than their names.
_FIND_UNBOUNDED = frozenset({"-o", "-or", ",", "!", "-not", "(", ")", "-follow", "-printf", "-ls"})
_FIND_GLOBAL = LazyPattern(r"-[HLPD]|-O[0-9]*")
_SPLITS = LazyPattern(r"[\s'\"\\]")  # word splitting, or xargs' quote handling, cuts here


def fed_credentials(
    parsed: ParsedCommand, consumer: SimpleCommand, cwd: Path, home: Path
) -> list[Path] | None:
    """Credentials among the words piped into `consumer` (for `xargs`); None: unbounded."""
    if not _takes_names_from_the_pipe(consumer):
        return None
    chain = [consumer]
    while (before := parsed.fed_by.get(chain[0].span, ...)) is not ...:
        producer = next((c for c in parsed.commands if c.span == before and c.argv), None)
        if before is None or producer is None:
            return None
        chain.insert(0, producer)
    return _pipeline_credentials(chain[:-1], cwd, home) if len(chain) > 1 else None


def _takes_names_from_the_pipe(consumer: SimpleCommand) -> bool:
    """xargs reads its names from the pipe, whole: not from a redirection or `-a FILE`, and
    not cut at a delimiter of its own (`-d ,` would cut `a,.env` into `.env`)."""
    if any(r.op.startswith("<") for r in consumer.redirects):
        return False
    program = unwrap(consumer).argv
    own = consumer.argv[: len(consumer.argv) - len(program)]
    if any(a.startswith(_XARGS_OTHER_INPUT) for a in own):
        return False
    marker = _replace_string(own)
    return marker is None or all(w == marker for w in program if marker in w)


def _replace_string(own: Sequence[str]) -> str | None:
    """xargs' `-I X` placeholder: a name put inside a longer word (`.{}`) is another path."""
    for i, arg in enumerate(own):
        if arg == "-I" and i + 1 < len(own):
            return own[i + 1]
        if arg.startswith("-I") and len(arg) > 2:
            return arg[2:]
        if arg.startswith("--replace"):
            return arg.partition("=")[2] or "{}"
        if arg.startswith("-i"):
            return arg[2:] or "{}"
    return None


def substituted_credentials(word: str, cwd: Path, home: Path) -> list[Path] | None:
    """Credentials among the words `$(PIPELINE)` expands to; None: unbounded or not that."""
    if not (word.startswith("$(") and word.endswith(")")):
        return None
    inner = parse_command(word[2:-1])
    if not inner.ok or inner.has_command_substitution or inner.has_process_substitution:
        return None
    chain = inner.commands
    linked = all(
        inner.fed_by.get(after.span) == before.span for before, after in itertools.pairwise(chain)
    )
    return _pipeline_credentials(chain, cwd, home) if chain and linked else None


def _pipeline_credentials(
    chain: Sequence[SimpleCommand], cwd: Path, home: Path
) -> list[Path] | None:
    if not chain or any(c.redirects or c.assignments or any(c.argv_dynamic) for c in chain):
        return None  # stderr joined in, input from a file, or words decided at run time
    if not all(_passes_whole_lines(c.argv) for c in chain[1:]):
        return None
    return _printed_credentials(chain[0].argv, cwd, home)


def _passes_whole_lines(argv: Sequence[str]) -> bool:
    name = command_name(argv[0]) if argv else None
    if name not in _LINE_FILTERS:
        return False
    other = _NOT_INPUT_LINES.get(name)
    if other is not None and any(other.fullmatch(a) for a in argv[1:]):
        return False
    operands = [a for a in argv[1:] if not _FILTER_ARG.fullmatch(a)]
    return len(operands) <= (1 if name in ("grep", "egrep") else 0)  # grep's pattern


def _printed_credentials(argv: Sequence[str], cwd: Path, home: Path) -> list[Path] | None:
    name = command_name(argv[0])
    if name == "echo" and not any(a.startswith("-") for a in argv[1:2]):
        return _credentials_named(argv[1:], cwd, home)
    if name == "git" and argv[1:2] == ["ls-files"]:
        flags = {a for a in argv[2:] if a.startswith("-")}  # other words are pathspecs
        return _tracked_credentials(cwd, home) if flags <= _LS_FILES_FLAGS else None
    if name == "ls":
        return _listed_credentials(argv[1:], cwd, home)
    if name == "find":
        return _found_credentials(argv[1:], cwd, home)
    return None


def _credentials_named(words: Sequence[str], cwd: Path, home: Path) -> list[Path]:
    pieces = [piece for word in words for piece in word.split()]
    return [p for p in (paths.resolve(w, cwd, home) for w in pieces) if paths.credential(p, home)]


def _listed_credentials(args: Sequence[str], cwd: Path, home: Path) -> list[Path] | None:
    """What plain `ls [-1] [PATH...]` prints: a file operand itself, a folder's visible entries
    by name alone (read back from `cwd`, where the consumer runs)."""
    if any(a.startswith("-") and a != "-1" for a in args):
        return None  # long formats, -a, -R, -d: other words or hidden entries
    names: list[str] = []
    for operand in [a for a in args if a != "-1"] or ["."]:
        target = paths.resolve(operand, cwd, home)
        if not target.is_dir():
            names.append(operand)
            continue
        try:
            names += [n for n in os.listdir(target) if not n.startswith(".")]
        except OSError:
            return None
    if any(_SPLITS.search(n) for n in names):
        return None
    return _credentials_named(names, cwd, home)


def _tracked_credentials(cwd: Path, home: Path) -> list[Path] | None:
    """The tracked files `git ls-files` lists from `cwd` that hold credentials."""
    if repository_problem(cwd) is not None:
        return None
    listed = ask_git(cwd, "-c", "core.fsmonitor=false", "ls-files", "-z")
    if isinstance(listed, str) or listed.returncode != 0:
        return None
    names = [n for n in listed.stdout.decode(errors="replace").split("\0") if n]
    if any(_SPLITS.search(n) for n in names):
        return None
    return _credentials_named(names, cwd, home)


def _found_credentials(args: Sequence[str], cwd: Path, home: Path) -> list[Path] | None:
    """Credentials `find` can print: under its starting points, matching all its -name tests
    when its expression is only a conjunction (anything else: every entry counts)."""
    if _FIND_UNBOUNDED & set(args) or (args and _FIND_GLOBAL.fullmatch(args[0])):
        return None
    starts = list(itertools.takewhile(lambda a: not a.startswith("-"), args)) or ["."]
    names = [(v, o == "-iname") for o, v in itertools.pairwise(args) if o in ("-name", "-iname")]
    found: list[Path] = []
    for start in starts:
        top = paths.resolve(start, cwd, home)
        try:
            for entry in paths.walk(top):
                if not all(_matches(entry.name, p, folded) for p, folded in names):
                    continue
                if _SPLITS.search(os.path.join(start, os.path.relpath(entry.path, top))):
                    return None
                if paths.credential_entry(entry, home):
                    found.append(Path(entry.path))
        except paths.TreeTooLarge:
            return None
        if paths.credential(top, home):
            found.append(top)
    return found


def _matches(name: str, pattern: str, folded: bool) -> bool:
    if folded:
        return fnmatch.fnmatchcase(name.lower(), pattern.lower())
    return fnmatch.fnmatchcase(name, pattern)
