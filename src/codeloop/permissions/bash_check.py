"""Decide a Bash command on its real parse: every simple command it runs must be allowed.

Order for each command (wrappers taken off, see shell.py), as in Claude Code: deny rules (on the
command, and on every path it names or writes) → ask rules → bypassPermissions → what cannot be
judged (dynamic command names, privilege wrappers, risky variables, unknown or outside write
targets) → plan mode → allow rules → read-only commands → acceptEdits' file commands → ask.
A line the parser cannot fully account for is asked, after its deny rules were checked.
`cd` is followed through the line, so `cd .. && rm x` is judged where `rm` runs.
"""

from __future__ import annotations

import re
from pathlib import Path

from codeloop.permissions import paths
from codeloop.permissions.bash_parse import Assignment, is_read_only_simple_command, parse_command
from codeloop.permissions.decision import Behavior, Decision, Scope, combine
from codeloop.permissions.files_check import denied_under
from codeloop.permissions.shell import Invocation, Word, path_uses, unwrap

# Commands acceptEdits runs without asking when all they write is inside the workspace.
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "cp", "mv"})
_DIRECTORY_COMMANDS = frozenset({"cd", "pushd", "popd"})
_CD_FLAGS = frozenset({"-L", "-P", "-e", "-@", "--"})
# Variables that change which program runs or what it loads: a rule about `git` must not cover
# `GIT_SSH_COMMAND=... git fetch`. A heuristic over names; harmless ones (NODE_ENV, CI) pass.
_RISKY_VARIABLE = re.compile(
    r"PATH|IFS|HOME|SHELL|ENV|CDPATH|GLOBIGNORE|PS[0-9]|PROMPT_COMMAND|VISUAL|"
    r"(BASH|LD|DYLD|GIT|XDG)_.*|.*(PATH|LIB|OPT|OPTS|OPTIONS|EDITOR|PAGER|STARTUP|RC|CONFIG)|"
    r".*_(COMMAND|CMD|PROGRAM|BIN|EXEC|HOOK|SHELL|PRELOAD)",
    re.IGNORECASE,
)
_UNRESOLVABLE = re.compile(r"[$`{]|^[<>]\(")


def decide_bash(command: str, cwd: Path, scope: Scope) -> Decision:
    parsed = parse_command(command)
    verdicts: list[Decision] = []
    where: Path | None = cwd
    links = False
    for cmd in parsed.commands:
        inv = unwrap(cmd)
        for one in (inv, *inv.extra):
            verdicts.append(_judge(one, where, scope, links))
            links = links or path_uses(one).makes_links
        where = _after_cd(inv, where, scope.home)
    if not parsed.ok:
        if scope.mode == "bypassPermissions":
            verdicts.append(Decision("allow", "bypassPermissions"))
        else:
            why = "; ".join(parsed.unparsed_reasons[:3])
            verdicts.append(Decision("ask", f"the command cannot be fully analysed ({why})"))
    return combine(verdicts)


def _judge(inv: Invocation, cwd: Path | None, scope: Scope, links: bool) -> Decision:
    book, label = scope.book, _label(inv)
    uses = path_uses(inv)
    named, named_unknown = _resolve(uses.named, cwd, scope.home)
    written, written_unknown = _resolve(uses.written, cwd, scope.home)
    trees = [p for p in _resolve(uses.trees, cwd, scope.home)[0] if p.is_dir()]
    behaviors: tuple[Behavior, ...] = ("deny", "ask")
    for behavior in behaviors:
        rule = book.bash_rule(behavior, inv.wrapped, [False] * len(inv.wrapped))
        rule = rule or book.bash_rule(behavior, inv.argv, inv.dynamic)
        if rule is not None:
            return Decision(behavior, f"`{label}` matches a {behavior} rule", rule)
        for top in trees:
            if (hit := denied_under(behavior, "Read", top, book)) is not None:
                why = f"`{label}` reads {hit[1]} under {top}, which a {behavior} rule covers"
                return Decision(behavior, why, hit[0])
        for tool, targets in (("Read", named), ("Edit", written)):
            for path in targets:
                if (rule := book.path_rule(behavior, tool, path)) is not None:
                    return Decision(
                        behavior, f"`{label}` names {path}, which a {behavior} rule covers", rule
                    )
    if named_unknown and (book.path_rules("deny", "Read") or book.path_rules("ask", "Read")):
        return Decision("ask", f"cannot tell which file `{named_unknown[0]}` names in `{label}`")
    if scope.mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions")
    if problem := _unjudgeable(inv):
        return Decision("ask", f"{problem} in `{label}`")
    if written_unknown:
        return Decision("ask", f"cannot tell where `{written_unknown[0]}` writes in `{label}`")
    for path in written:
        if paths.is_device(path):
            continue
        if links:
            return Decision("ask", f"`{label}` writes {path} after a symlink was made")
        if not paths.within(path, scope.roots) and not book.path_rule("allow", "Edit", path):
            return Decision("ask", f"`{label}` writes {path}, outside the workspace")
        if paths.guarded(path):
            return Decision(
                "ask", f"`{label}` writes {path}, which configures the agent or runs code"
            )
    read_only = bool(inv.argv) and (
        inv.argv[0] in _DIRECTORY_COMMANDS or is_read_only_simple_command(inv.simple())
    )
    if scope.mode == "plan":
        if read_only:
            return Decision("allow", "read-only command")
        return Decision("deny", f"`{label}` is not read-only, and plan mode only reads")
    rule = book.bash_rule("allow", inv.argv, inv.dynamic, open_args=inv.open_args)
    if rule is not None:
        return Decision("allow", f"`{label}` matches an allow rule", rule)
    if read_only:
        return Decision("allow", "read-only command")
    if not inv.argv:  # a bare assignment or redirection
        return Decision("ask", f"`{label}` needs approval")
    if scope.mode == "acceptEdits" and inv.argv[0] in ACCEPT_EDITS_COMMANDS and written:
        return Decision("allow", "acceptEdits: file command inside the workspace")
    return Decision("ask", f"`{label}` needs approval", suggestions=(suggest_rule(inv.argv),))


def _unjudgeable(inv: Invocation) -> str | None:
    if inv.problem:
        return inv.problem
    if inv.argv and inv.dynamic[0]:
        return "the command name is decided at run time"
    risky = [a.name for a in inv.assignments if _risky(a)]
    if risky:
        return f"setting {risky[0]} can change what runs"
    return None


def _risky(a: Assignment) -> bool:
    return a.dynamic or bool(_RISKY_VARIABLE.fullmatch(a.name.split("[", 1)[0]))


def _resolve(words: list[Word], cwd: Path | None, home: Path) -> tuple[list[Path], list[str]]:
    """Paths the words name (globs expanded), and the words whose target cannot be known."""
    found: list[Path] = []
    unknown: list[str] = []
    for text, dynamic in words:
        if not text:
            continue
        relative = not (text.startswith("/") or text == "~" or text.startswith("~/"))
        if (dynamic and _UNRESOLVABLE.search(text)) or (relative and cwd is None):
            unknown.append(text)
        elif dynamic:
            assert cwd is not None or not relative
            expanded = paths.expand_glob(text, cwd or Path("/"), home)
            if expanded is None:
                unknown.append(text)
            else:
                found += expanded
        else:
            found.append(paths.resolve(text, cwd or Path("/"), home))
    return found, unknown


def _after_cd(inv: Invocation, cwd: Path | None, home: Path) -> Path | None:
    """Where the shell is after this command: `cd DIR` is followed; anything unclear is None."""
    if not inv.argv or inv.argv[0] not in _DIRECTORY_COMMANDS:
        return cwd
    args = [w for w in zip(inv.argv[1:], inv.dynamic[1:], strict=True) if w[0] not in _CD_FLAGS]
    if inv.argv[0] != "cd" or len(args) > 1:
        return None
    if not args:
        return home
    found, unknown = _resolve(args, cwd, home)
    return found[0] if len(found) == 1 and not unknown and args[0][0] != "-" else None


def _label(inv: Invocation) -> str:
    own = [f"{a.name}={a.value}" for a in inv.assignments]
    words = [w for w in own if w not in inv.wrapped] + inv.wrapped
    text = " ".join(words) or " ".join(f"{r.op}{r.target or ''}" for r in inv.redirects)
    return text if len(text) <= 80 else text[:77] + "..."


def suggest_rule(argv: list[str]) -> str:
    """A rule a user might accept for "allow always": `Bash(npm run test:*)` for a command with
    subcommand words, else the exact command."""
    words = [argv[0]]
    for word in argv[1:3]:
        if not re.fullmatch(r"[a-z][a-z0-9_:-]*", word):
            break
        words.append(word)
    if len(words) > 1:
        return f"Bash({' '.join(words)}:*)"
    return f"Bash({' '.join(argv)})"
