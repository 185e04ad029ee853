"""git: which invocations only read, which repository they read, and how they run safely.

Three layers, because a read-only git command can still run programs the repository names:

- `git_problem` follows git's own argument grammar (global options, then a subcommand parsed
  the way git parses it: `--abbrev` takes only an attached `=N`, so `git branch --abbrev NAME`
  creates NAME) and refuses options that write (`--output`) or run programs (`--ext-diff`,
  `--textconv`, `-O`), `-c`/`--git-dir`/`--work-tree` (they choose config or a repository).
- `repository_problem` asks git itself, under the protective configuration, what the
  repository it would use configures: a repository git refuses (a buried bare repository, as
  `git clone` brings one) or one whose own config names a diff, textconv or filter program is
  not read-only. Global and system config are the user's own and are trusted.
- `protective_env` (git_env.py) is the environment a read-only git line runs in
  (tools/bash.py, asking readonly.py's `needs_protection`): command-scope config that beats
  every file, and no optional locks.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from codeloop.shell.argv_spec import ArgvError, Spec, parse, short_option_in
from codeloop.shell.git_env import PROTECTIVE_CONFIG, protective_env
from codeloop.system.lazy_pattern import LazyPattern

__all__ = [
    "GIT_READ_ONLY_SUBCOMMANDS",
    "PROTECTIVE_CONFIG",
    "git_directories",
    "git_problem",
    "protective_env",
    "repository_problem",
]

GitCheck = Callable[[Sequence[str]], "str | None"]


# --- the argument grammar -------------------------------------------------------------------

_GLOBAL_FLAGS = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs"}
    | {"--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch"}
    | {"--no-advice"}
)
# Print and exit when last; `--help` and `-h` alone are `git help`, which lists the commands.
_GLOBAL_INFO = frozenset(
    {"--version", "--exec-path", "--html-path", "--man-path", "--info-path", "--help", "-h"}
)
# Options that write a file or run a program, in every subcommand that parses diff or
# revision options (log, show, diff, blame, stash show, ...); those parsers take no prefixes.
_RUNS_OR_WRITES = {
    "--output": "writes its output to a file",
    "--ext-diff": "runs an external diff program",
    "--textconv": "runs the textconv programs the configuration names",
    "--filters": "runs the filter programs the configuration names",
    "--open-files-in-pager": "runs a pager program",
    "--exec": "runs a program",
    "--upload-pack": "runs a program",
}


def _revision_options(args: Sequence[str]) -> str | None:
    """The writing/running options of diff and revision parsing. Prefixes count too: the
    subcommands built on parse-options accept `--open-files` for `--open-files-in-pager`,
    and refusing `--out=F` where git would reject it costs nothing."""
    for arg in args:
        if arg == "--":
            return None
        key = arg.split("=", 1)[0]
        if not key.startswith("--") or key in _EXACT_NOT_PREFIX:
            continue
        for option, why in _RUNS_OR_WRITES.items():
            if key == option or (len(key) > 3 and option.startswith(key)):
                return f"{option} {why}"
    return None


_EXACT_NOT_PREFIX = frozenset({"--text", "--exec-path"})  # real options, not abbreviations


_GREP_VALUED = "efABCm"  # short options of git grep that take a value


def _grep(args: Sequence[str]) -> str | None:
    """`-O[PAGER]` runs a pager, also inside a cluster (`-nO`), but `-e -O` is a pattern."""
    if problem := _revision_options(args):
        return problem
    if short_option_in(args, "O", _GREP_VALUED, ("--max-depth", "--threads")):
        return "-O runs a pager program"
    return None


_LIST_FLAGS = "list ignore-case omit-empty no-color no-column no-abbrev"
_LIST_VALUED = "sort format points-at"
_LIST_LASTARG = "contains no-contains merged no-merged"  # `--merged [COMMIT]`
_BRANCH_LIST = Spec.of(
    "arlvqi",
    long_flags=f"{_LIST_FLAGS} all remotes verbose quiet show-current",
    long_valued=_LIST_VALUED,
    long_optional="color column abbrev",  # `--abbrev NAME` is --abbrev, then a NAME
    lastarg_default=_LIST_LASTARG,
    negatable=True,
    aliases={"list": "-l"},
)
_TAG_LIST = Spec.of(
    "li",
    optional="n",
    long_flags=_LIST_FLAGS,
    long_valued=_LIST_VALUED,
    long_optional="color column",
    lastarg_default=_LIST_LASTARG,
    negatable=True,
    aliases={"list": "-l"},
)


def _listing(spec: Spec, what: str) -> GitCheck:
    """`git branch`/`git tag` list; given a name without `--list`, they create it."""

    def check(args: Sequence[str]) -> str | None:
        try:
            parsed = parse(spec, args)
        except ArgvError as exc:
            return f"{exc}, and only listing {what}s is read-only"
        if parsed.operands and not parsed.has("-l"):
            return f"{parsed.operands[0]!r} is a {what} to create (list patterns need --list)"
        return None

    return check


def _remote(args: Sequence[str]) -> str | None:
    if all(a in ("-v", "--verbose") for a in args):
        return None
    if args[:1] == ["get-url"] and all(a in ("--push", "--all") for a in args[1:-1]):
        return None if len(args) >= 2 and not args[-1].startswith("-") else "get-url needs a name"
    if args[:2] == ["show", "-n"]:
        return None
    return "only `git remote`, `-v`, `get-url` and `show -n` are read-only"


_CONFIG_READ = Spec.of(
    "lz",
    "ft",
    long_flags="global system local worktree get get-all get-regexp get-urlmatch list null"
    " name-only includes no-includes show-origin show-scope bool int bool-or-int bool-or-str"
    " path expiry-date fixed-value get-color get-colorbool",
    long_valued="file blob type default",
    aliases={"list": "-l", "file": "-f", "null": "-z", "type": "-t"},
)
_CONFIG_ACTIONS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--get-color"}
    | {"--get-colorbool"}
)


def _config(args: Sequence[str]) -> str | None:
    """Reading config (`--get`, `--list`, or a lone key); every writing action is unknown."""
    if args[:1] in (["get"], ["list"]):
        args = args[1:]
        implied = True
    else:
        implied = False
    try:
        parsed = parse(_CONFIG_READ, args)
    except ArgvError as exc:
        return f"{exc}, and only reading config is read-only"
    if implied or any(parsed.has(a) for a in _CONFIG_ACTIONS) or len(parsed.operands) == 1:
        return None
    return "git config with a value sets it"


def _stash(args: Sequence[str]) -> str | None:
    if args[:1] in (["list"], ["show"]):
        return _revision_options(args[1:])
    return "only `git stash list` and `git stash show` are read-only"


def _worktree(args: Sequence[str]) -> str | None:
    ok = args[:1] == ["list"] and all(a in ("--porcelain", "-z", "-v", "--verbose") for a in args)
    return None if ok or args == ["list"] else "only `git worktree list` is read-only"


def _reflog(args: Sequence[str]) -> str | None:
    if args[:1] in (["expire"], ["delete"], ["write"], ["drop"]):
        return f"git reflog {args[0]} changes the reflog"
    return _revision_options(args[1:] if args[:1] in (["show"], ["exists"]) else args)


def _symbolic_ref(args: Sequence[str]) -> str | None:
    try:
        parsed = parse(Spec.of("q", long_flags="quiet short no-recurse recurse"), args)
    except ArgvError as exc:
        return f"{exc}, and only reading a symbolic ref is read-only"
    return None if len(parsed.operands) == 1 else "git symbolic-ref NAME REF sets NAME"


_HELP_LISTS = Spec.of(
    "agc",
    long_flags="all guides config user-interfaces developer-interfaces verbose external-commands"
    " aliases",
    negatable=True,
)


def _help(args: Sequence[str]) -> str | None:
    """`git help` lists commands or guides; given a topic, it opens a manual page with the
    viewer the configuration names (`man.viewer`, `man.<tool>.cmd`), which may be anything."""
    try:
        parsed = parse(_HELP_LISTS, args)
    except ArgvError as exc:
        return f"{exc}, and only listing commands and guides is read-only"
    if parsed.operands:
        return f"it opens the manual of {parsed.operands[0]!r} with a viewer the config names"
    return None


def _no_arguments(args: Sequence[str]) -> str | None:
    return None if not args or args == ["--build-options"] else "unexpected arguments"


GIT_READ_ONLY_SUBCOMMANDS: Mapping[str, GitCheck] = {
    **dict.fromkeys(
        (
            *("status", "diff", "log", "show", "whatchanged", "shortlog", "rev-list", "blame"),
            *("annotate", "diff-tree", "diff-index", "diff-files", "ls-files", "ls-tree"),
            *("rev-parse", "describe", "show-ref", "for-each-ref", "merge-base", "name-rev"),
            *("count-objects", "check-ignore", "check-attr", "var", "show-branch", "cherry"),
        ),
        _revision_options,
    ),
    "grep": _grep,
    "cat-file": _revision_options,
    "branch": _listing(_BRANCH_LIST, "branch"),
    "tag": _listing(_TAG_LIST, "tag"),
    "remote": _remote,
    "config": _config,
    "stash": _stash,
    "worktree": _worktree,
    "reflog": _reflog,
    "symbolic-ref": _symbolic_ref,
    "version": _no_arguments,
    "help": _help,
}
"""Subcommand → check of its arguments, which returns why they are not read-only, or None."""


# Long-standing commands built into git (or, in older versions, scripts that answer `-h` the
# same way): `git NAME -h` prints its usage and exits, and no alias can take the name over.
_BUILTINS = frozenset(
    {"add", "am", "apply", "archive", "bisect", "blame", "branch", "bundle", "cat-file"}
    | {"check-attr", "check-ignore", "checkout", "cherry", "cherry-pick", "clean", "clone"}
    | {"commit", "config", "count-objects", "describe", "diff", "fetch", "format-patch", "fsck"}
    | {"gc", "grep", "init", "log", "ls-files", "ls-remote", "ls-tree", "merge", "merge-base"}
    | {"mv", "notes", "pull", "push", "range-diff", "rebase", "reflog", "remote", "repack"}
    | {"replace", "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "shortlog"}
    | {"show", "show-branch", "show-ref", "sparse-checkout", "stash", "status", "submodule"}
    | {"switch", "tag", "worktree"}
)


def _globals(args: Sequence[str]) -> tuple[int, str | None]:
    """Index of the subcommand after git's global options, or a problem."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg == "-C":
            i += 2
        elif arg in _GLOBAL_FLAGS:
            i += 1
        elif arg in _GLOBAL_INFO and i == len(args) - 1:
            return i, None
        elif arg == "--version":
            return i, _no_arguments(args[i + 1 :])
        elif arg in ("-c", "--config-env") or arg.startswith(("-c", "--config-env=")):
            return i, f"{arg.split('=', 1)[0]} sets configuration, which can name programs to run"
        elif arg.startswith(("--git-dir", "--work-tree", "--namespace", "--bare", "--exec-path")):
            return i, f"{arg.split('=', 1)[0]} chooses which repository or programs git uses"
        elif arg in ("-p", "--paginate"):
            return i, f"{arg} runs a pager program"
        else:
            return i, f"git option {arg} is not one the check knows"
    return i, None


def git_problem(args: Sequence[str]) -> str | None:
    """Why `git ARGS` is not read-only, or None when it only reads."""
    i, problem = _globals(args)
    if problem is not None or (i < len(args) and args[i] in _GLOBAL_INFO):
        return problem
    if i >= len(args):
        return "git without a subcommand"
    rest = list(args[i + 1 :])
    if rest == ["-h"] and args[i] in _BUILTINS:
        return None  # a builtin's short usage; builtins cannot be aliased away
    if rest[:1] == ["--help"]:  # git turns `git log --help` into `git help log`
        return f"git {args[i]} --help: {_help(args[i : i + 1])}"
    check = GIT_READ_ONLY_SUBCOMMANDS.get(args[i])
    if check is None:
        return f"git {args[i]} is not a read-only subcommand"
    found = check(rest)
    return f"git {args[i]}: {found}" if found else None


def git_directories(args: Sequence[str]) -> list[str]:
    """The `-C` directories, in order (each relative to the one before)."""
    found = []
    i = 0
    while i < len(args) - 1 and args[i].startswith("-"):
        if args[i] == "-C":
            found.append(args[i + 1])
            i += 1
        i += 1
    return found


def needs_repository(args: Sequence[str]) -> bool:
    i, _ = _globals(args)
    return i < len(args) and args[i] not in _GLOBAL_INFO and args[i] != "version"


# --- the repository's own configuration -----------------------------------------------------

_PROGRAM_KEYS = LazyPattern(
    r"diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)", re.I
)
_TRUSTED_VALUES = frozenset(
    {"git-lfs clean -- %f", "git-lfs smudge -- %f", "git-lfs filter-process"}
)
_UNTRUSTED_SCOPES = frozenset({"local", "worktree"})


def repository_problem(directory: Path) -> str | None:
    """Why a read-only git command run in `directory` would not be: git refuses the repository
    it finds there, or that repository's own config names a program git runs while reading."""
    if not directory.is_dir():
        return None  # git fails on a missing directory before it reads anything
    found = ask_git(directory, "rev-parse", "--git-dir")
    if isinstance(found, str):
        return found
    if found.returncode != 0:
        lines = found.stderr.decode(errors="replace").strip().splitlines()
        why = lines[0] if lines else f"exit code {found.returncode}"
        if "not a git repository" in why:
            return None  # no repository, so no repository config either
        return f"git refuses the repository in {directory}: {why}"
    listed = ask_git(directory, "config", "--list", "--show-scope", "-z")
    if isinstance(listed, str):
        return listed
    fields = listed.stdout.decode(errors="replace").split("\0")
    for scope, entry in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        trusted = scope not in _UNTRUSTED_SCOPES or value.strip() in _TRUSTED_VALUES
        if not trusted and _PROGRAM_KEYS.fullmatch(key):
            return f"the repository's own config names a program git would run ({key})"
    return None


def ask_git(directory: Path, *args: str) -> subprocess.CompletedProcess[bytes] | str:
    """Run git under the protective configuration; a string says why it could not run."""
    try:
        return subprocess.run(
            ["git", *args],
            cwd=directory,
            env=protective_env(os.environ),
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"git could not be asked about the repository in {directory} ({exc})"
