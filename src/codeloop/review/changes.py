"""What a review looks at: the base it compares with (the merge base with the default branch,
or a pull request's base), the diff from there, and the lines of the head version that diff
adds or changes (where GitHub takes an inline comment). git's own patch output is parsed: a
hunk header gives each side's start, and every `+` line is a line of the head version.

Blocking (git), called before a session starts or from a thread."""

from __future__ import annotations

import ast
import os
import re
import subprocess
from dataclasses import field
from pathlib import Path

from codeloop.errors import CodeloopError
from codeloop.shell.git_env import protective_env
from codeloop.system.procs import GitError, git
from codeloop.system.valueclass import valueclass

# The diff a prompt carries in full; past it the model gets the list of files and reads the
# rest itself (git diff BASE HEAD -- PATH).
MAX_PROMPT_DIFF = 120_000
MAX_LEFT_OUT = 200  # files left out of the prompt's diff named one by one
MAX_STAT_FILES = 300  # files the prompt's list of files changed names one by one
MAX_UNTRACKED = 200  # new files of the working tree a review takes in
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class ReviewError(CodeloopError):
    """The review cannot start or finish; the message says why and what to do."""


@valueclass
class Changes:
    """The diff from `base` (a commit) to `head` (a commit, or None: the working tree)."""

    root: Path
    base: str
    base_label: str
    head: str | None
    head_label: str
    diff: str
    stat: str
    touched: dict[str, set[int]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.diff.strip()


def look(*args: str, cwd: Path) -> str:
    """A git command that only reads, under the protective config (looking at a repository
    never runs a program its config names)."""
    return git("--no-optional-locks", *args, cwd=cwd, env=protective_env(os.environ))


def repository_root(cwd: Path) -> Path:
    try:
        return Path(look("rev-parse", "--show-toplevel", cwd=cwd).strip())
    except GitError:
        raise ReviewError(f"{cwd} is not in a git repository: a review compares commits") from None


def commit_of(root: Path, ref: str) -> str | None:
    try:
        return look("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", cwd=root).strip()
    except GitError:
        return None


def default_branch(root: Path) -> str:
    """Where origin/HEAD points, else `main`, else `master`: each the local branch, else
    origin's (a CI checkout, detached, has origin/main and no local main nor origin/HEAD)."""
    try:
        ref = look("symbolic-ref", "-q", "refs/remotes/origin/HEAD", cwd=root).strip()
    except GitError:
        ref = ""
    if ref and commit_of(root, ref):
        return ref.removeprefix("refs/remotes/")
    for name in ("main", "origin/main", "master", "origin/master"):
        if commit_of(root, f"refs/heads/{name}" if "/" not in name else f"refs/remotes/{name}"):
            return name
    raise ReviewError(
        "no default branch to compare with (origin/HEAD, main and master are all missing): "
        "give the base, e.g. --base HEAD~1"
    )


def has_merge_base(root: Path, base: str, head: str) -> bool:
    try:
        look("merge-base", base, head, cwd=root)
    except GitError:
        return False
    return True


def merge_base(root: Path, base: str, head: str) -> str:
    try:
        return look("merge-base", base, head, cwd=root).strip()
    except GitError:
        # a shallow clone may lack the common ancestor: compare with the base itself
        found = commit_of(root, base)
        if found is None:
            raise ReviewError(f"{base}: no such commit in {root}") from None
        return found


def collect(root: Path, base: str, head: str | None, *, base_label: str = "") -> Changes:
    """The changes from `base` (a commit) to `head` (None: the working tree, staged or not)."""
    if commit_of(root, base) is None:
        raise ReviewError(f"base {base}: no such commit (fetch it, or give another --base)")
    if head is not None and commit_of(root, head) is None:
        raise ReviewError(f"head {head}: no such commit")
    span = [base] if head is None else [base, head]
    # whatever the user's git config says (noprefix, mnemonicPrefix, relative, color)
    options = ["--no-color", "--no-ext-diff", "--no-textconv", "--no-relative", "-M"]
    options += ["--src-prefix=a/", "--dst-prefix=b/"]
    quoted = ["-c", "core.quotePath=false"]
    diff = look(*quoted, "diff", *options, *span, cwd=root)
    stat = look(*quoted, "diff", "--stat=100", *options, *span, cwd=root)
    if head is None:  # the working tree's new files, not yet known to git, are changes too
        for path in _untracked(root):
            diff += _new_file_diff(root, path, [*quoted, "diff", *options])
            stat += f" {path} (new, untracked)\n"
    return Changes(
        root,
        base,
        base_label or base,
        head,
        head or "the working tree",
        diff,
        stat,
        touched_lines(diff),
    )


def _untracked(root: Path) -> list[str]:
    listed = look("ls-files", "--others", "--exclude-standard", "-z", cwd=root)
    return [path for path in listed.split("\0") if path][:MAX_UNTRACKED]


def _new_file_diff(root: Path, path: str, diff: list[str]) -> str:
    """A new file as a diff from nothing (`git diff --no-index`, which exits 1 when the files
    differ, as they do)."""
    done = subprocess.run(
        ["git", *diff, "--no-index", "--", "/dev/null", path],
        cwd=root,
        env=protective_env(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    return done.stdout.decode(errors="replace") if done.returncode in (0, 1) else ""


def touched_lines(diff: str) -> dict[str, set[int]]:
    """For each file of a unified diff, the head-side lines it adds or changes."""
    touched: dict[str, set[int]] = {}
    lines: set[int] | None = None
    number = 0
    for text in diff.splitlines():
        if text.startswith("diff --git "):
            lines = None
        elif text.startswith("+++ ") and lines is None:
            path = _path(text[4:])
            lines = touched.setdefault(path, set()) if path is not None else set()
        elif (hunk := _HUNK.match(text)) and lines is not None:
            number = int(hunk.group(1))
        elif lines is None or text.startswith("\\"):
            continue
        elif text.startswith("+"):
            lines.add(number)
            number += 1
        elif text.startswith(" ") or text == "":
            number += 1
    return {path: lines for path, lines in touched.items() if lines}


def _path(name: str) -> str | None:
    """`b/src/x.py` (or git's C-quoted form) → `src/x.py`; None for /dev/null."""
    name = name.rstrip("\t")
    if name.startswith('"'):
        name = ast.literal_eval(name)  # git quotes like C: the escapes are Python's too
    if name == "/dev/null":
        return None
    return name[2:] if name.startswith("b/") else name


def prompt_stat(changes: Changes) -> str:
    """The files changed as the first request lists them: git's stat, the first
    `MAX_STAT_FILES` files of a longer one, and its summary line."""
    lines = changes.stat.rstrip().splitlines()
    if len(lines) <= MAX_STAT_FILES + 1:
        return "\n".join(lines)
    files, summary = lines[:-1], lines[-1]
    more = f" … and {len(files) - MAX_STAT_FILES:,} more files"
    return "\n".join([*files[:MAX_STAT_FILES], more, summary])


def prompt_diff(changes: Changes) -> str:
    """The diff as the first request carries it: whole, or the files' diffs that fit in
    `MAX_PROMPT_DIFF` (in git's order, each whole: a huge generated file does not crowd out
    the rest), with a note naming the files left out and how to read them."""
    if len(changes.diff) <= MAX_PROMPT_DIFF:
        return changes.diff
    shown: list[str] = []
    left_out: list[str] = []
    room = MAX_PROMPT_DIFF
    for part in _file_diffs(changes.diff):
        if len(part) <= room:
            shown.append(part)
            room -= len(part)
        else:
            left_out.append(_name(part))
    span = changes.base if changes.head is None else f"{changes.base} {changes.head}"
    listed = "".join(f"\n  {name}" for name in left_out[:MAX_LEFT_OUT])
    if len(left_out) > MAX_LEFT_OUT:
        listed += f"\n  … and {len(left_out) - MAX_LEFT_OUT:,} more (see the files changed)"
    return (
        "".join(shown)
        + f"\n[The diff is too long to show whole: {len(left_out):,} file(s) left out here. "
        f"Read each one's diff with `git diff {span} -- PATH`:{listed}]\n"
    )


def _file_diffs(diff: str) -> list[str]:
    """A unified diff cut into one part per file (each from its `diff --git` line)."""
    parts: list[str] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith("diff --git ") or not parts:
            parts.append(line)
        else:
            parts[-1] += line
    return parts


def _name(part: str) -> str:
    """The file a part of a diff is about (its new name; the old one when deleted)."""
    lines = part.splitlines()
    for prefix in ("+++ b/", "rename to ", "--- a/", "+++ ", "--- "):
        found = next((line for line in lines if line.startswith(prefix)), None)
        if found is not None and found.rstrip() not in ("+++ /dev/null", "--- /dev/null"):
            return found[len(prefix) :].rstrip("\t")
    return lines[0].removeprefix("diff --git ").rpartition(" b/")[2] if lines else "?"
