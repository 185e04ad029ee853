"""ripgrep's command line, and the files its walk opens.

`rg PATTERN` searches a tree, but its walk skips hidden entries (names starting with `.`) and
ignored ones, so a `.env` or `~/.ssh` beside the files it searches is never opened: asking the
user about it would be a prompt for nothing. Which files it does open depends on much more than
its flags (`-g '*'` selects `.env`, so does `-t sh` in ripgrep 14, and so does a `!.env` line
in any `.gitignore`, `.ignore` or git exclude file on the way), so ripgrep itself is asked:
`rg --files` with the same walk options, from the same directory, lists exactly what the search
would open. Where it cannot answer (not installed, an error, too slow), or where the walk
reaches ignored files, which are often secrets of other names (`-u`, `--no-ignore*`), or reads
options from a config file, the caller falls back to asking about any credential in the tree.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from codeloop.shell.argv_spec import Args, Spec, parse
from codeloop.system.valueclass import valueclass

__all__ = ["Search", "search"]

# From ripgrep 14's flag definitions (crates/core/flags/defs.rs). The unstable index flags
# (`-X`, `--x-crud`, ...) write index files and are left out: an unknown option is asked about.
_SPEC = Spec.of(
    "bsclFLh.ivnNxU0oPpqzSauVHIw",
    "ABCEfgMmderjtT",
    long_flags="auto-hybrid-regex binary block-buffered byte-offset case-sensitive column count"
    " count-matches crlf debug files files-with-matches files-without-match fixed-strings follow"
    " glob-case-insensitive heading help hidden ignore-case ignore-file-case-insensitive"
    " include-zero invert-match json line-buffered line-number no-line-number line-regexp"
    " max-columns-preview mmap multiline multiline-dotall no-config no-ignore no-ignore-dot"
    " no-ignore-exclude no-ignore-files no-ignore-global no-ignore-messages no-ignore-parent"
    " no-ignore-vcs no-messages no-pcre2-unicode no-require-git no-unicode null null-data"
    " one-file-system only-matching passthru passthrough pcre2 pcre2-version pretty quiet"
    " search-zip smart-case sort-files stats stop-on-nonmatch text trace trim type-list"
    " unrestricted version vimgrep with-filename no-filename word-regexp"
    " no-auto-hybrid-regex no-binary no-block-buffered no-byte-offset no-column"
    " no-context-separator no-crlf no-encoding no-fixed-strings no-follow"
    " no-glob-case-insensitive no-heading no-hidden no-ignore-file-case-insensitive"
    " no-include-zero no-invert-match no-json no-line-buffered no-max-columns-preview no-mmap"
    " no-multiline no-multiline-dotall ignore ignore-dot ignore-exclude ignore-files"
    " ignore-global ignore-messages ignore-parent ignore-vcs messages pcre2-unicode require-git"
    " unicode no-one-file-system no-pcre2 no-pre no-search-zip no-sort-files no-stats no-text"
    " no-trim",
    long_valued="after-context before-context color colors context context-separator"
    " dfa-size-limit encoding engine field-context-separator field-match-separator file generate"
    " glob hostname-bin hyperlink-format iglob ignore-file max-columns max-count max-depth"
    " maxdepth max-filesize path-separator pre pre-glob regex-size-limit regexp replace sort"
    " sortr threads type type-add type-clear type-not",
    abbreviate=False,
    aliases={
        "hidden": "-.",
        "follow": "-L",
        "glob": "-g",
        "type": "-t",
        "regexp": "-e",
        "file": "-f",
        "unrestricted": "-u",
        "search-zip": "-z",
        "help": "-h",
        "version": "-V",
    },
)
_RUNS = {
    "--pre": "runs a program on every file",
    "--hostname-bin": "runs a program",
    "-z": "runs decompression programs",
}
_PRINTS_ONLY = ("--files", "--type-list", "-h", "-V", "--pcre2-version", "--generate")
# What decides which files the walk opens (and so goes to the `--files` listing as given).
_WALK = frozenset(
    {"-g", "--iglob", "-t", "-T", "--type-add", "--type-clear", "-.", "--no-hidden", "-L"}
    | {"--no-follow", "--max-depth", "--maxdepth", "--max-filesize", "--ignore-file"}
    | {"--glob-case-insensitive", "--no-glob-case-insensitive", "--ignore-file-case-insensitive"}
    | {"--no-ignore-file-case-insensitive", "--no-require-git", "--require-git"}
    | {"--one-file-system", "--no-one-file-system", "--ignore", "--ignore-dot", "--ignore-vcs"}
    | {"--ignore-exclude", "--ignore-files", "--ignore-global", "--ignore-parent"}
)
LISTING_TIMEOUT = 5.0  # seconds; a walk that takes longer is asked about


@valueclass
class Search:
    """What one rg command reads; `problem`: the program it runs, if any."""

    operands: list[str]  # the paths it walks, as given (none: the working directory)
    reads_contents: bool  # False when it only lists names or prints help
    widened: str | None  # why its walk may open ignored files, which `--files` cannot vouch for
    walk: list[str]  # the options that decide which files it opens, as given
    problem: str | None = None

    def opened(self, cwd: Path) -> list[Path] | None:
        """Every file the search would open, as real paths; None when ripgrep cannot say."""
        argv = ["rg", "--files", "--null", "--no-config", *self.walk, "--", *self.operands]
        try:
            listed = subprocess.run(
                argv, cwd=cwd, capture_output=True, timeout=LISTING_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if listed.returncode not in (0, 1):  # 1: no file at all; 2: an error, partly listed
            return None
        names = [os.path.join(cwd, os.fsdecode(n)) for n in listed.stdout.split(b"\0") if n]
        if "-L" in self.walk:  # any entry may be behind a link
            return [Path(os.path.realpath(n)) for n in names]
        # Without -L ripgrep follows no link below the paths it was given: resolve those once.
        given = [os.path.join(cwd, o) for o in self.operands or ["."]]
        roots = sorted(((os.path.normpath(g), os.path.realpath(g)) for g in given), reverse=True)
        return [Path(_real(os.path.normpath(n), roots)) for n in names]


def _real(path: str, roots: Sequence[tuple[str, str]]) -> str:
    """`path` with the deepest given root it lies under replaced by that root's real path."""
    for spelled, real in roots:
        if path == spelled or path.startswith(spelled.rstrip("/") + "/"):
            return real + path[len(spelled) :]
    return os.path.realpath(path)


def search(args: Sequence[str]) -> Search:
    """Read rg's arguments as ripgrep does; ArgvError for an option it does not have."""
    parsed = parse(_SPEC, args)
    runs = next((f"{name} {why}" for name, why in _RUNS.items() if parsed.has(name)), None)
    reads_contents = not parsed.has(*_PRINTS_ONLY)
    pattern_given = parsed.has("-e", "-f") or not reads_contents
    walk = [w for name, value in parsed.options if name in _WALK for w in _spelled(name, value)]
    return Search(
        parsed.operands if pattern_given else parsed.operands[1:],
        reads_contents,
        _widened(parsed),
        walk,
        problem=runs,
    )


def _spelled(name: str, value: str | None) -> list[str]:
    return [name] if value is None else [name, value]


def _widened(parsed: Args) -> str | None:
    if parsed.has("-u"):
        return "-u searches ignored files"
    ignoring = (n for n, _ in parsed.options if n.startswith("--no-ignore"))
    if found := next((n for n in ignoring if n != "--no-ignore-messages"), None):
        return f"{found} searches ignored files"
    if os.environ.get("RIPGREP_CONFIG_PATH") and not parsed.has("--no-config"):
        return "it reads options from $RIPGREP_CONFIG_PATH"
    return None
