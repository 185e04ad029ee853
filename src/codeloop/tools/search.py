"""Grep and Glob: content and file-name search, both backed by ripgrep.

ripgrep is fast, respects .gitignore and ships as a wheel (the `ripgrep` dependency), so both
tools share one way to find and run it. Hidden files are searched, but VCS directories are not:
models look for `.github/` workflows and dotfiles, never for git's object store. Their globs
filter files the way .gitignore leaves them (`_glob_rules`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from codeloop.store.data_paths import VCS_DIRS
from codeloop.system.aio import unless_aborted
from codeloop.system.valueclass import valueclass
from codeloop.text import truncate_middle
from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput

GLOB_MAX_FILES = 100
INTERRUPTED = "Interrupted: the search was stopped before it finished."
# rg's complaint when its filters left no file to search.
NOTHING_SEARCHED = "rg: No files were searched"


# --- running ripgrep ---------------------------------------------------------------------


@functools.cache
def rg_binary() -> str | None:
    """The `rg` executable: from the `ripgrep` wheel (next to Python, or where pip put it), then
    PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file():
        return str(beside)
    import importlib.metadata  # only here: scanning distributions is slow-ish

    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        for entry in importlib.metadata.files("ripgrep") or ():
            if entry.name == "rg":
                located = Path(str(entry.locate())).resolve()
                if located.is_file():
                    return str(located)
    return shutil.which("rg")


@valueclass(slots=True)
class _RgRun:
    returncode: int
    stdout: str
    stderr: str


async def _run_rg(argv: list[str], cwd: Path, abort: asyncio.Event) -> _RgRun | None:
    """Run rg with `argv` in `cwd`; None when `abort` was set first (rg is killed)."""
    rg = rg_binary()
    if rg is None:
        raise FileNotFoundError("ripgrep (rg) not found: install the `ripgrep` package")
    proc = await asyncio.create_subprocess_exec(
        rg,
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    finished = asyncio.ensure_future(proc.communicate())
    done = False
    try:
        done = await unless_aborted(finished, abort)
    finally:
        if not done:  # aborted, or our caller was cancelled: rg must not outlive the search
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if not done:
        return None
    out, err = finished.result()
    assert proc.returncode is not None
    code, stderr = proc.returncode, err.decode(errors="replace")
    if code == 2 and not out and stderr.startswith(NOTHING_SEARCHED):
        code = 1  # every file was filtered out: no match, not a failure
    return _RgRun(code, out.decode(errors="replace"), stderr)


@contextlib.contextmanager
def _glob_rules(globs: Sequence[str]) -> Iterator[list[str]]:
    """rg flags keeping only the files `globs` match, .gitignore still applied.

    rg's --glob overrides every ignore rule: `*` matches an ignored directory, and all of
    node_modules is searched. The same globs in an ignore file rank below .gitignore instead:
    ignore everything but directories, then let through what a glob matches (a `!glob`
    excludes, as with --glob; the last match wins, as with --glob)."""
    if not globs:
        yield []
        return
    rules = ["*", "!*/"] if any(not g.startswith("!") for g in globs) else []
    rules += [g[1:] if g.startswith("!") else "!" + g for g in globs]
    with tempfile.TemporaryDirectory(prefix="codeloop-globs-") as folder:
        path = Path(folder) / "globs"
        path.write_text("\n".join(rules) + "\n", encoding="utf-8")
        yield ["--ignore-file", str(path)]


def _rg_failure(run: _RgRun) -> str:
    return f"ripgrep failed (exit code {run.returncode}):\n{run.stderr.strip()}"


def _common_flags() -> list[str]:
    """Search hidden files, skip VCS internals (an excluded directory is pruned, whatever other
    globs say)."""
    flags = ["--hidden"]
    for name in VCS_DIRS:
        flags += ["--glob", f"!{name}"]
    return flags


def _newest_first(paths: list[str], base: Path) -> list[str]:
    """Sort by modification time, newest first (what was just edited is most likely wanted)."""

    def key(path: str) -> tuple[float, str]:
        try:
            return (-(base / path).stat().st_mtime, path)
        except OSError:
            return (0.0, path)

    return sorted(paths, key=key)


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n") if text.strip() else []


# --- Grep --------------------------------------------------------------------------------

OutputMode = Literal["content", "files_with_matches", "count"]


class GrepInput(ToolInput):
    pattern: Annotated[str, Arg("Regular expression to search for (Rust regex syntax).")]
    path: Annotated[
        str | None,
        Arg("File or directory to search in. Defaults to the current working directory."),
    ] = None
    glob: Annotated[
        str | None,
        Arg('Only search files matching this glob, e.g. "*.py" or "src/**/*.{ts,tsx}".'),
    ] = None
    output_mode: Annotated[
        OutputMode,
        Arg(
            '"files_with_matches" lists matching files (newest first), "content" shows '
            'matching lines, "count" shows match counts per file.'
        ),
    ] = "files_with_matches"
    before: Annotated[
        int | None,
        Arg("Lines of context before each match (content mode).", alias="-B", minimum=0),
    ] = None
    after: Annotated[
        int | None,
        Arg("Lines of context after each match (content mode).", alias="-A", minimum=0),
    ] = None
    context: Annotated[
        int | None,
        Arg(
            "Lines of context before and after each match (content mode).",
            alias="-C",
            minimum=0,
        ),
    ] = None
    line_numbers: Annotated[bool, Arg("Show line numbers (content mode).", alias="-n")] = True
    ignore_case: Annotated[bool, Arg("Case-insensitive search.", alias="-i")] = False
    type: Annotated[
        str | None,
        Arg('ripgrep file type to search, e.g. "py", "js", "rust". Faster than glob.'),
    ] = None
    head_limit: Annotated[
        int | None,
        Arg(
            "Show only the first N lines (content) or entries (files, count). "
            "0 or absent: no limit.",
            minimum=0,
        ),
    ] = None
    offset: Annotated[
        int, Arg("Skip the first N lines or entries; use with head_limit to page.", minimum=0)
    ] = 0
    multiline: Annotated[
        bool, Arg("Let the pattern span lines; `.` then also matches newlines.")
    ] = False


GREP_DESCRIPTION = """\
Searches file contents with ripgrep. Use it instead of running grep or rg through Bash.

- Regex syntax is ripgrep's (Rust): escape literal braces and parentheses, e.g. \
`interface\\{\\}` or `foo\\(`.
- Files ignored by .gitignore are skipped; hidden files are searched.
- Filter files with `glob` (e.g. "*.py") or `type` (e.g. "py").
- Default output lists matching files, most recently modified first. Use output_mode \
"content" to see the lines (with -n line numbers and -A/-B/-C context), or "count".
- Page through long results with head_limit and offset.
- `multiline` lets a pattern match across lines."""


class GrepTool(Tool[GrepInput]):
    name: ClassVar[str] = "Grep"
    description: ClassVar[str] = GREP_DESCRIPTION
    input_model = GrepInput
    max_result_chars: ClassVar[int] = 20_000

    def is_read_only(self, args: GrepInput) -> bool:
        return True

    async def call(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        cwd = ctx.workspace.cwd
        target = ctx.workspace.resolve(args.path) if args.path else cwd
        if not target.exists():
            return ToolResult.error(f"Path does not exist: {target}")
        # Searching cwd itself with no path argument makes rg print paths relative to it.
        where = [] if target == cwd else [_display_path(target, cwd)]
        with _glob_rules(_split_globs(args.glob or "")) as globs:
            run = await _run_rg([*globs, *_grep_flags(args), "--", *where], cwd, ctx.abort)
        if run is None:
            return ToolResult.error(INTERRUPTED)
        if run.returncode == 2 and not run.stdout:
            return ToolResult.error(_rg_failure(run))

        files_mode = args.output_mode == "files_with_matches"
        entries = _lines(run.stdout)
        if not entries:
            return ToolResult("No files found" if files_mode else "No matches found")
        if files_mode:
            entries = _newest_first(entries, cwd)
        end = args.offset + args.head_limit if args.head_limit else None
        shown = entries[args.offset : end]
        parts = (
            [f"Found {len(entries)} file{'' if len(entries) == 1 else 's'}"] if files_mode else []
        )
        parts += shown or [f"(offset {args.offset} is past the last of {len(entries)} entries)"]
        if shown and len(shown) < len(entries):
            last = args.offset + len(shown)
            more = f"; offset={last} for more" if last < len(entries) else ""
            parts.append(f"[Showing {args.offset + 1}-{last} of {len(entries)}{more}]")
        if run.returncode == 2:  # matches, but some files could not be read
            parts.append(f"[ripgrep warnings: {run.stderr.strip()}]")
        text = truncate_middle("\n".join(parts), self.max_result_chars, what="search results")
        return ToolResult(text)


def _grep_flags(args: GrepInput) -> list[str]:
    flags = [*_common_flags(), "--max-columns", "500"]
    if args.type:
        flags += ["--type", args.type]
    if args.ignore_case:
        flags.append("--ignore-case")
    if args.multiline:
        flags += ["--multiline", "--multiline-dotall"]
    if args.output_mode == "files_with_matches":
        flags.append("--files-with-matches")
    else:
        # Sorted output keeps offset/head_limit pages stable between calls.
        flags += ["--sort", "path"]
    if args.output_mode == "count":
        flags += ["--count", "--with-filename"]
    if args.output_mode == "content":
        flags.append("--line-number" if args.line_numbers else "--no-line-number")
        for flag, value in (("-C", args.context), ("-B", args.before), ("-A", args.after)):
            if value is not None:
                flags += [flag, str(value)]
    # --regexp, not a positional pattern, so a pattern starting with "-" is not an option.
    return [*flags, "--regexp", args.pattern]


def _split_globs(text: str) -> list[str]:
    """Models write "*.py *.pyi" or "*.js,*.ts": split on spaces, and on commas outside braces."""
    patterns: list[str] = []
    for word in text.split():
        if "{" in word:
            patterns.append(word)
        else:
            patterns += [p for p in word.split(",") if p]
    return patterns


def _display_path(path: Path, cwd: Path) -> str:
    return os.path.relpath(path, cwd) if path.is_relative_to(cwd) else str(path)


# --- Glob --------------------------------------------------------------------------------


class GlobInput(ToolInput):
    pattern: Annotated[str, Arg('Glob pattern to match, e.g. "**/*.py" or "src/**/test_*.ts".')]
    path: Annotated[
        str | None, Arg("Directory to search in. Defaults to the current working directory.")
    ] = None


GLOB_DESCRIPTION = f"""\
Finds files by name with a glob pattern; use it instead of find or ls through Bash.

- Patterns match relative to `path` (default: the current directory): "**/*.py", \
"src/**/*.ts", "*.{{json,yaml}}". A pattern without a slash matches at any depth.
- Files ignored by .gitignore are skipped; hidden files are included.
- Returns absolute paths, most recently modified first, at most {GLOB_MAX_FILES}."""


class GlobTool(Tool[GlobInput]):
    name: ClassVar[str] = "Glob"
    description: ClassVar[str] = GLOB_DESCRIPTION
    input_model = GlobInput
    max_result_chars: ClassVar[int] = 20_000

    def is_read_only(self, args: GlobInput) -> bool:
        return True

    async def call(self, args: GlobInput, ctx: ToolContext) -> ToolResult:
        base = ctx.workspace.resolve(args.path) if args.path else ctx.workspace.cwd
        pattern = args.pattern
        if os.path.isabs(pattern):
            base, pattern = _split_absolute_glob(pattern)
        if not base.exists():
            return ToolResult.error(f"Path does not exist: {base}")
        if not base.is_dir():
            return ToolResult.error(f"Not a directory: {base}")
        # rg matches globs against paths relative to its cwd, so it runs inside `base`.
        with _glob_rules([pattern]) as globs:
            matched = await _run_rg(["--files", *_common_flags(), *globs], base, ctx.abort)
        if matched is None:
            return ToolResult.error(INTERRUPTED)
        if matched.returncode == 2 and not matched.stdout:
            return ToolResult.error(_rg_failure(matched))
        files = _newest_first(_lines(matched.stdout), base)
        if not files:
            return ToolResult("No files found")
        lines = [str(base / f) for f in files[:GLOB_MAX_FILES]]
        if len(files) > GLOB_MAX_FILES:
            lines.append(
                f"(Results are truncated: showing the {GLOB_MAX_FILES} most recently modified of "
                f"{len(files)} files. Use a more specific pattern or path.)"
            )
        return ToolResult(truncate_middle("\n".join(lines), self.max_result_chars, what="results"))


def _split_absolute_glob(pattern: str) -> tuple[Path, str]:
    """ "/repo/src/**/*.py" → (/repo/src, "/**/*.py"): the literal directories become the base,
    and the rest stays anchored to it ("/repo/a.py" must not match /repo/sub/a.py)."""
    parts = Path(pattern).parts
    literal = 0
    while literal < len(parts) - 1 and not any(c in parts[literal] for c in "*?[{"):
        literal += 1
    return Path(*parts[:literal]), "/" + "/".join(parts[literal:])
