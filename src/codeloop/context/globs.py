"""Glob patterns as Claude Code's `paths:` and `claudeMdExcludes` write them: `**` crosses
folders, `*` and `?` stay within one, `[abc]` is a class and `{ts,tsx}` expands (at most
`MAX_EXPANSIONS` patterns per list; a pattern past that budget is kept unexpanded)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

MAX_EXPANSIONS = 1000
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


def expand(patterns: Iterable[str]) -> list[str]:
    out: list[str] = []
    for pattern in patterns:
        expanded = [pattern]
        while any(_BRACES.search(p) for p in expanded):
            grown = []
            for p in expanded:
                match = _BRACES.search(p)
                if match is None:
                    grown.append(p)
                    continue
                head, tail = p[: match.start()], p[match.end() :]
                grown += [f"{head}{choice}{tail}" for choice in match.group(1).split(",")]
            if len(out) + len(grown) > MAX_EXPANSIONS:
                break
            expanded = grown
        out += expanded
    return out


@functools.cache
def compile_glob(pattern: str) -> re.Pattern[str] | None:
    """The pattern as a regular expression over '/'-separated paths (None: invalid)."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                return None
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append(f"[^{body[1:]}]" if body.startswith("!") else f"[{body}]")
            i = end + 1
        elif char == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    try:
        return re.compile("".join(out) + r"\Z")
    except re.error:
        return None


def matches(patterns: Iterable[str], path: str) -> bool:
    """Whether the relative (or absolute) '/'-path matches any of the patterns."""
    for pattern in expand(patterns):
        regex = compile_glob(pattern.removeprefix("./"))
        if regex is not None and regex.match(path):
            return True
    return False
