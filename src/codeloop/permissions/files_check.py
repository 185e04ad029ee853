"""Decide the file tools (Read, Write, Edit, Grep, Glob, ...) on the real paths they touch.

Paths are resolved (symlinks, `..`) before matching. Deny and ask rules on a path hold for
every tool that reads it (Read rules: Read, Grep, Glob) or edits it (Edit rules). A Grep over
a directory holding a denied file is denied too, since rg would print its contents; Glob only
lists names, so it is checked on its path and the literal directories of its pattern. Reads
are allowed anywhere else; writes outside the workspace roots, and to files that configure
the agent or run code, are asked unless an Edit allow rule covers them (for the latter, not the
auto-memory folder's: it allows notes).
"""

from __future__ import annotations

import itertools
import shlex
from pathlib import Path
from typing import Any

from codeloop.permissions import paths
from codeloop.permissions.decision import Behavior, Decision, Scope
from codeloop.permissions.rules import EDIT_TOOLS, MEMORY_SOURCE, PathPattern, Rule, RuleBook
from codeloop.system.valueclass import valueclass


def file_targets(name: str, args: Any, cwd: Path, home: Path) -> list[Path] | None:
    """The paths a file tool reads or writes, resolved; None for tools without paths."""
    if name in ("Read", "Write", "Edit", "MultiEdit", "LSP"):
        return [paths.resolve(str(args.file_path), cwd, home)]
    if name == "NotebookEdit":
        return [paths.resolve(str(args.notebook_path), cwd, home)]
    if name in ("Grep", "Glob"):
        base = paths.resolve(str(args.path or "."), cwd, home)
        found = [base]
        pattern = str(getattr(args, "pattern", "")) if name == "Glob" else ""
        literal = _literal_dirs(pattern)
        if literal:
            found.append(paths.resolve(literal, base, home))
        return found
    return None


def decide_files(name: str, targets: list[Path], scope: Scope) -> Decision:
    book = scope.book
    write = name in EDIT_TOOLS
    behaviors: tuple[Behavior, ...] = ("deny", "ask")
    for behavior in behaviors:
        if (rule := book.tool_rule(behavior, name)) is not None:
            return Decision(behavior, f"{name} matches a {behavior} rule", rule)
        for path in targets:
            if (rule := book.path_rule(behavior, name, path)) is not None:
                return Decision(behavior, f"{name} on {path}: a {behavior} rule covers it", rule)
        if name == "Grep" and (hit := denied_under(behavior, name, targets[0], book)):
            return Decision(
                behavior,
                f"Grep over {targets[0]} {hit.reaches(behavior)}; search a narrower path",
                hit.rule,
            )
    if scope.mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions")
    allow_rule = book.tool_rule("allow", name)
    if not write:
        return _read_verdict(name, targets, scope, allow_rule)
    if scope.mode == "plan":
        return Decision("deny", f"{name} edits files, and plan mode only reads")
    suggestions = tuple(name if paths.within(p, scope.roots) else f"Edit(/{p})" for p in targets)
    for path in targets:
        allowed = book.path_rule("allow", name, path)
        if not paths.within(path, scope.roots) and allowed is None:
            fix = f"--add-dir {shlex.quote(str(path.parent))} or --allowedTools " + shlex.quote(
                f"Edit(/{path})"
            )
            return Decision(
                "ask", f"{name} would write {path}, outside the workspace", None, suggestions, fix
            )
        if paths.guarded(path) and (allowed is None or allowed.source == MEMORY_SOURCE):
            return Decision(
                "ask",
                f"{name} would change {path}, which configures the agent or runs code",
                None,
                suggestions,
            )
    path_rules = [book.path_rule("allow", name, p) for p in targets]
    if allow_rule is None and all(path_rules):
        allow_rule = path_rules[0]
    if allow_rule is not None:
        return Decision("allow", f"{name} matches an allow rule", allow_rule)
    if scope.mode == "acceptEdits":
        return Decision("allow", "acceptEdits")
    fix = f"--permission-mode acceptEdits or --allowedTools {shlex.quote(suggestions[0])}"
    return Decision("ask", f"{name} on {targets[0]} needs approval", None, suggestions, fix)


def _read_verdict(name: str, targets: list[Path], scope: Scope, rule: Rule | None) -> Decision:
    """Reads run, but a credential file (a key, a token, a `.env`) needs a rule naming it."""
    for path in targets:
        if not paths.credential(path, scope.home) or scope.book.path_rule("allow", name, path):
            continue
        allow = f"Read(/{path})"
        return Decision("ask", f"{name} on {path}: it holds credentials", None, (allow,))
    return Decision("allow", "read-only tool", rule)


@valueclass
class Covered:
    """What a recursive read of a tree reaches that a path rule covers: `path`, a file the
    rule matches, or (`unchecked`) the whole tree, too large to look through (paths.walk), so
    it counts as reaching one: a rule never fails open on a big tree."""

    rule: Rule
    path: Path
    unchecked: bool = False

    def reaches(self, behavior: Behavior) -> str:
        if self.unchecked:
            return (
                f"would read {self.path}, a tree of more than {paths.WALK_LIMIT:,} entries, too "
                f"large to check for files a {behavior} rule covers"
            )
        return f"would read {self.path}, which a {behavior} rule covers"


def denied_under(behavior: Behavior, name: str, root: Path, book: RuleBook) -> Covered | None:
    """A file under `root` that a path rule for tool `name` covers: a recursive search of
    `root` would read it. Only the part of the tree a rule can match is walked, once for all
    the rules that start there."""
    starts: dict[Path, list[tuple[Rule, PathPattern]]] = {}
    for rule in book.path_rules(behavior, name):
        pattern = book.pattern(rule)
        top = pattern.literal_root()
        if paths.within(top, [root]):
            starts.setdefault(top, []).append((rule, pattern))
        elif paths.within(root, [top]):
            starts.setdefault(root, []).append((rule, pattern))
    for start, rules in starts.items():
        try:
            for entry in paths.walk(start):
                path = Path(entry.path)
                for rule, pattern in rules:
                    if pattern.matches(path, loose=True):
                        return Covered(rule, path)
        except paths.TreeTooLarge:
            return Covered(rules[0][0], start, unchecked=True)
    return None


def _literal_dirs(pattern: str) -> str:
    """The directories a glob names before its first wildcard: `secrets/*.key` → `secrets`."""
    parts = pattern.split("/")[:-1]
    return "/".join(itertools.takewhile(lambda part: not any(c in part for c in "*?[{"), parts))
