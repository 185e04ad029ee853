"""Permission rules in Claude Code's syntax, and what each one matches.

A rule is a tool name, optionally with a specifier in parentheses:

- `Bash` / `Read` / `mcp__github` / `mcp__github__create_issue`: every use of the tool(s).
- `Bash(npm run test:*)`: commands whose words start with `npm run test`; `Bash(git commit *)`
  is a wildcard over the command's words (a trailing ` *` also matches nothing); anything else
  is an exact command, `Bash(ls -la)`. Matched per simple command (see bash_check.py).
- `Read(./secrets/**)`, `Edit(src/**)`: gitignore-style paths. `//abs/path` is absolute,
  `~/path` is under the home directory, `/path` is relative to the rule's base (the project of
  the settings file), `path` and `./path` to the project directory. A pattern without a slash
  matches a name at any depth, and a pattern that matches a directory covers what is in it.
  Read rules also hold for Grep and Glob; Edit rules (and Write/MultiEdit/NotebookEdit path
  rules, treated alike) for every tool that edits files.
- `WebFetch(domain:example.com)`: requests to that host or its subdomains.

Allow rules match strictly. Deny and ask rules match loosely: Unicode-normalised (NFKC) and
case-folded, so a look-alike spelling or a case-insensitive file system cannot slip past them.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import shlex
import unicodedata
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass
from codeloop.tool_names import canonical

# LSP reads the file it is given (hover shows its code): Read rules cover it too.
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "NotebookRead", "LSP"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
_TOOL_NAME = LazyPattern(r"[A-Za-z0-9_\-*]+")
# The source of the auto-memory folder's allow rule (memory_rule).
MEMORY_SOURCE = "auto memory"


class RuleError(ValueError):
    """A rule string that is not `Tool` or `Tool(specifier)`; the message names it."""


@valueclass
class Rule:
    """One rule, where it came from (shown with every decision it makes) and its path base."""

    text: str
    tool: str
    specifier: str | None = None
    source: str = "options"
    base: Path | None = None  # `/path` patterns are relative to it; None: the project dir

    @staticmethod
    def parse(text: str, source: str = "options", base: Path | None = None) -> Rule:
        text = text.strip()
        tool, paren, rest = text.partition("(")
        tool = tool.strip()
        if not _TOOL_NAME.fullmatch(tool):
            raise RuleError(f"{text!r} is not a permission rule (expected Tool or Tool(...))")
        if not paren:
            return Rule(text, tool, None, source, base)
        if not rest.endswith(")"):
            raise RuleError(f"{text!r}: the specifier must end with ')'")
        spec = rest[:-1].strip()
        if spec in ("", "*"):
            return Rule(text, tool, None, source, base)
        _check_specifier(text, tool, spec)
        return Rule(text, tool, spec, source, base)

    def describe(self) -> str:
        return f"{self.text} (from {self.source})"

    def covers_tool(self, name: str) -> bool:
        """Whether this rule is about tool `name` at all (its specifier aside); a tool's
        earlier name (`Task` for Agent) names it too."""
        if canonical(self.tool) == canonical(name) or fnmatch.fnmatchcase(name, self.tool):
            return True
        if self.specifier is None and self.tool.startswith("mcp__"):
            return name.startswith(self.tool + "__")  # `mcp__server`: all its tools
        if self.specifier is not None:
            return (self.tool == "Read" and name in READ_TOOLS) or (
                self.tool in EDIT_TOOLS and name in EDIT_TOOLS
            )
        return False

    @cached_property
    def bash(self) -> BashPattern | None:
        return BashPattern.parse(self.specifier) if self.specifier is not None else None


def _check_specifier(text: str, tool: str, spec: str) -> None:
    """A rule whose specifier could match nothing is an error, not a rule that silently never
    applies (a deny rule that never applies is a restriction lost)."""
    if not _balanced(spec):
        raise RuleError(
            f"{text!r}: unbalanced parentheses (one rule per string: "
            '["Bash(git diff:*)", "Read(./docs/**)"])'
        )
    if tool == "Bash" and spec.endswith(":*") and not spec[:-2].strip():
        raise RuleError(f"{text!r}: no command before ':*' (Bash alone covers every command)")
    host = spec.removeprefix("domain:").strip(" *.")
    if canonical(tool) == "WebFetch" and not (spec.startswith("domain:") and host):
        raise RuleError(f"{text!r}: a WebFetch rule names a host: WebFetch(domain:example.com)")


def _balanced(spec: str) -> bool:
    """Parentheses outside quotes close in order: `Bash(rm:*), Read(x` is two rules run
    together."""
    depth, quote = 0, ""
    for char in spec:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "()":
            depth += 1 if char == "(" else -1
            if depth < 0:
                return False
    return depth == 0


def fold(text: str) -> str:
    """The loose form deny and ask rules compare: NFKC, case-folded, invisible marks removed."""
    if text.isascii():  # the common case, and the same result: ASCII has no Cf character
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


# --- Bash -----------------------------------------------------------------------------------


@valueclass
class BashPattern:
    """`npm run test:*` (prefix words), `git commit *` (wildcard) or `ls -la` (exact)."""

    kind: str  # "prefix" | "wildcard" | "exact"
    words: tuple[str, ...]
    text: str

    @staticmethod
    def parse(spec: str) -> BashPattern:
        if spec.endswith(":*"):
            return BashPattern("prefix", _split(spec[:-2]), spec)
        if "*" in spec:
            return BashPattern("wildcard", (), spec)
        return BashPattern("exact", _split(spec), spec)

    def matches(
        self, argv: Sequence[str], dynamic: Sequence[bool], *, open_args: bool, loose: bool
    ) -> bool:
        """Does the command `argv` fall under this pattern?

        `dynamic` marks words bash still expands (they cannot be promised to equal anything);
        `open_args` says more words will be appended (xargs), so an exact pattern cannot hold.
        Loosely (deny and ask rules) a command also matches however it is spelled: by a path
        to the program (`/usr/bin/curl` for `curl`), or with its short flags combined,
        reordered or joined by others (`rm -fr /`, `rm -r -f -v /` for `rm -rf /`).
        """
        norm = fold if loose else _same
        words = [norm(w) for w in argv]
        if self.kind == "wildcard":
            regex = _wildcard(norm(self.text))
            if regex.fullmatch(" ".join(words)) is not None:
                return True
            return (
                loose and bool(words) and regex.fullmatch(" ".join(_respelled(words))) is not None
            )
        want = [norm(w) for w in self.words]
        if loose and want and words and _flags_match(self.kind, want, words):
            return True
        if self.kind == "exact" and (open_args or len(words) != len(want)):
            return False
        if len(words) < len(want) or not want:
            return False
        head_dynamic = any(dynamic[: len(want)]) if not loose else False
        tail_dynamic = self.kind == "exact" and any(dynamic) and not loose
        return words[: len(want)] == want and not head_dynamic and not tail_dynamic


def _respelled(words: Sequence[str]) -> list[str]:
    """The program by name, not by path: `/usr/bin/curl -s` → `curl -s`."""
    return [words[0].rsplit("/", 1)[-1], *words[1:]]


def _shape(words: Sequence[str]) -> tuple[str, set[str], list[str]]:
    """(program name, options: short letters and long names, operands in order)."""
    options: set[str] = set()
    operands: list[str] = []
    rest = False
    for word in words[1:]:
        if rest or word == "-" or not word.startswith("-"):
            operands.append(word)
        elif word == "--":
            rest = True
        elif word.startswith("--"):
            options.add(word)
        else:
            options.update(f"-{letter}" for letter in word[1:])
    return _respelled(words)[0], options, operands


def _flags_match(kind: str, want: Sequence[str], words: Sequence[str]) -> bool:
    """`rm -rf /` against `rm -fr /`: same program, the pattern's options all present, and its
    operands leading (prefix patterns) or all present in order (exact patterns)."""
    name, options, operands = _shape(want)
    got_name, got_options, got_operands = _shape(words)
    if name != got_name or not options <= got_options:
        return False
    if kind == "prefix":
        return got_operands[: len(operands)] == operands
    found = iter(got_operands)
    return all(operand in found for operand in operands)


def _same(text: str) -> str:
    return text


def _split(text: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return tuple(text.split())


def _wildcard(pattern: str) -> re.Pattern[str]:
    """`*` matches any text; a trailing ` *` may also match nothing (`ls *` matches `ls`)."""
    words = " ".join(_split(pattern.replace("*", "\0"))).replace("\0", "*")
    optional_tail = words.endswith(" *")
    body = words[:-2] if optional_tail else words
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(regex + ("(?: .*)?" if optional_tail else ""), re.DOTALL)


# --- paths ----------------------------------------------------------------------------------


@valueclass
class PathPattern:
    """A gitignore-style pattern anchored at a directory."""

    anchor: Path
    pattern: str  # relative to anchor, "/"-separated, no leading slash
    any_depth: bool  # no slash in the pattern: match a name anywhere below the anchor

    @staticmethod
    def parse(spec: str, *, project: Path, home: Path, base: Path | None) -> PathPattern:
        if spec.startswith("//"):
            anchor, rest = Path("/"), spec[2:]
        elif spec == "~" or spec.startswith("~/"):
            anchor, rest = home, spec[2:]
        elif spec.startswith("/"):
            anchor, rest = base or project, spec[1:]
        else:
            anchor, rest = project, spec.removeprefix("./")
        rest = rest.rstrip("/") or "**"
        return PathPattern(Path(os.path.realpath(anchor)), rest, "/" not in rest)

    def matches(self, path: Path, *, loose: bool) -> bool:
        """`path` must be absolute and resolved (see paths.resolve)."""
        norm = fold if loose else _same
        anchor, target = norm(str(self.anchor)), norm(str(path))
        if target == anchor:
            rel = ""
        elif target.startswith(anchor.rstrip("/") + "/"):
            rel = target[len(anchor.rstrip("/")) + 1 :]
        else:
            return False
        regex = _glob_regex(norm(self.pattern))
        parts = rel.split("/") if rel else []
        # The path itself or any directory above it (a matched directory covers its contents).
        for end in range(len(parts), 0, -1):
            candidate = parts[end - 1] if self.any_depth else "/".join(parts[:end])
            if regex.fullmatch(candidate):
                return True
        return False

    def literal_root(self) -> Path:
        """The deepest directory every match lies under."""
        literal: list[str] = []
        if not self.any_depth:
            for part in self.pattern.split("/")[:-1]:
                if any(c in part for c in "*?["):
                    break
                literal.append(part)
        return self.anchor.joinpath(*literal)


@functools.lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out += "(?:/.*)?"  # `dir/**` covers the directory itself too
            break
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[" and (close := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : close]
            out += "[" + ("^" + body[1:] if body[:1] == "!" else body).replace("\\", "\\\\") + "]"
            i = close
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out, re.DOTALL)


# --- domains --------------------------------------------------------------------------------


def domain_matches(spec: str, url: str) -> bool:
    """`domain:example.com` (or `*.example.com`) against a URL's host, subdomains included."""
    if not spec.startswith("domain:"):
        return False
    want = spec.removeprefix("domain:").strip().casefold().removeprefix("*.")
    try:
        host = (urlsplit(url).hostname or "").casefold().rstrip(".")
    except ValueError:
        return False
    return bool(want) and (host == want or host.endswith("." + want))


# --- a set of rules -------------------------------------------------------------------------


class RuleBook:
    """The allow, deny and ask rules of a session, with their path patterns compiled."""

    def __init__(
        self,
        allow: Sequence[Rule],
        deny: Sequence[Rule],
        ask: Sequence[Rule],
        *,
        project: Path,
        home: Path,
    ) -> None:
        self.rules: dict[str, list[Rule]] = {
            "allow": list(allow),
            "deny": list(deny),
            "ask": list(ask),
        }
        self.project = project
        self.home = home
        self._patterns: dict[Rule, PathPattern] = {}

    def add(self, behavior: str, rule: Rule) -> None:
        if rule not in self.rules[behavior]:
            self.rules[behavior].append(rule)

    def without_allow(self, dropped: Callable[[Rule], bool]) -> RuleBook:
        """The same book less the allow rules `dropped` names (auto mode's view); the deny and
        ask lists and the compiled patterns are shared."""
        view = RuleBook.__new__(RuleBook)
        view.__dict__.update(self.__dict__)
        view.rules = {**self.rules, "allow": [r for r in self.rules["allow"] if not dropped(r)]}
        return view

    def tool_rule(self, behavior: str, tool: str) -> Rule | None:
        """A rule without a specifier covering the whole tool."""
        return next(
            (r for r in self.rules[behavior] if r.specifier is None and r.covers_tool(tool)), None
        )

    def bash_rule(
        self,
        behavior: str,
        argv: Sequence[str],
        dynamic: Sequence[bool],
        *,
        open_args: bool = False,
    ) -> Rule | None:
        loose = behavior != "allow"
        for rule in self.rules[behavior]:
            if rule.tool != "Bash":
                continue
            if rule.bash is None or rule.bash.matches(
                argv, dynamic, open_args=open_args, loose=loose
            ):
                return rule
        return None

    def path_rule(self, behavior: str, tool: str, path: Path) -> Rule | None:
        loose = behavior != "allow"
        for rule in self.path_rules(behavior, tool):
            if self.pattern(rule).matches(path, loose=loose):
                return rule
        return None

    def path_rules(self, behavior: str, tool: str) -> list[Rule]:
        return [r for r in self.rules[behavior] if r.specifier is not None and r.covers_tool(tool)]

    def pattern(self, rule: Rule) -> PathPattern:
        found = self._patterns.get(rule)
        if found is None:
            assert rule.specifier is not None
            found = PathPattern.parse(
                rule.specifier, project=self.project, home=self.home, base=rule.base
            )
            self._patterns[rule] = found
        return found


def memory_rule(folder: Path) -> Rule:
    """The allow rule for the auto-memory folder, where the model writes its notes unasked.
    It is for notes: a file there that configures the agent or runs code is still asked
    (files_check.py), since the settings may put the folder anywhere (`~/.claude`, the project)."""
    return Rule.parse(f"Edit(/{folder}/**)", MEMORY_SOURCE)
