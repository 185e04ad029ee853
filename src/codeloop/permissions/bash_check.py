"""Decide a Bash command on its real parse: every simple command it runs must be allowed.

Order for each command (wrappers taken off, see shell/command_effects.py), as in Claude Code:
deny rules (on the command however it is spelled, and on every path it names or writes) → ask
rules → bypassPermissions → what cannot be judged (dynamic command names, privilege wrappers, risky
variables, unknown or outside write targets, a git repository whose own config names programs)
→ plan mode → allow rules → read-only commands (readonly.py) → acceptEdits' file commands → ask.
A redirection's target is judged apart, like a Write of that path: an allow rule for the
command does not cover it. Expanding a secret-named variable, or reading a credential file,
is not read-only (for `rg`, ripgrep's own list of the files its walk opens says which it
reads), nor is reading a file whose name only run time decides unless every value it can take
is known safe (a for-loop's words; names from a bounded producer, feeds.py). A rule for any
arguments covers the command, not a credential it names. A line the parser cannot fully
account for is asked, after its deny rules were checked. `cd` is followed through the line,
so `cd .. && rm x` is judged where `rm` runs.

Every refusal says in one line what was refused and why, and (`Decision.fix`) which flag or
rule would allow it.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import shlex
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from codeloop.permissions import paths
from codeloop.permissions.decision import Behavior, Decision, Scope, combine
from codeloop.permissions.files_check import denied_under
from codeloop.shell.bash_parse import (
    Assignment,
    ParsedCommand,
    SimpleCommand,
    parse_command,
)
from codeloop.shell.command_effects import Invocation, Word, command_name, path_uses, unwrap
from codeloop.shell.readonly import (
    ARGUMENTS_NOT_FILES,
    RISKY_VARIABLE,
    assignment_problem,
    line_problem,
    simple_command_problem,
)
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

# Commands acceptEdits runs without asking when all they write is inside the workspace.
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "cp", "mv"})
_DIRECTORY_COMMANDS = frozenset({"cd", "pushd", "popd"})
_CD_FLAGS = frozenset({"-L", "-P", "-e", "-@", "--"})
_UNRESOLVABLE = LazyPattern(r"[$`{]|^[<>]\(")
_HOME_VARIABLE = LazyPattern(r"^(\$HOME|\$\{HOME\})(?=/|$)")
_PWD_VARIABLE = LazyPattern(r"^(\$PWD|\$\{PWD\})(?=/|$)")
_BYPASS = "--permission-mode bypassPermissions"
_LOOP_COMBINATIONS = 64
_LOOP_PATTERN = LazyPattern(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
_PROCESS_SUBSTITUTION = LazyPattern(r"[<>]\(.*\)", re.DOTALL)


def decide_bash(command: str, cwd: Path, scope: Scope) -> Decision:
    parsed = parse_command(command)
    verdicts: list[Decision] = []
    where: Path | None = cwd
    links = False
    line = line_problem(parsed)
    for cmd in parsed.commands:
        inv = unwrap(cmd)
        for one, source in ((inv, cmd), *((extra, None) for extra in inv.extra)):
            verdicts.append(_judge(one, source, where, scope, links, line, parsed))
            links = links or path_uses(one).makes_links
        where = _after_cd(inv, where, scope.home)
    if not parsed.ok:
        if scope.mode == "bypassPermissions":
            verdicts.append(Decision("allow", "bypassPermissions"))
        else:
            why = "; ".join(parsed.unparsed_reasons[:3])
            verdicts.append(
                Decision(
                    "ask",
                    f"the command cannot be fully analysed ({why})",
                    fix=f"{_BYPASS} (no allow rule covers a command that cannot be analysed)",
                )
            )
    return combine(verdicts)


def _judge(
    inv: Invocation,
    cmd: SimpleCommand | None,
    cwd: Path | None,
    scope: Scope,
    links: bool,
    line: str | None,
    parsed: ParsedCommand,
) -> Decision:
    book, label = scope.book, _label(inv)
    uses = path_uses(inv)
    loops = parsed.loop_words
    named, named_unknown = _resolve(_loop_values(uses.named, loops), cwd, scope.home)
    written, written_unknown = _resolve(_loop_values(uses.written, loops), cwd, scope.home)
    redirected = [
        p
        for p in _resolve(_loop_values(uses.redirected, loops), cwd, scope.home)[0]
        if not paths.is_device(p)
    ]
    resolved_trees, trees_unknown = _resolve(_loop_values(uses.trees, loops), cwd, scope.home)
    trees = [p for p in resolved_trees if p.is_dir()]
    if (ruled := _ruled(inv, named, written, trees, scope)) is not None:
        return ruled
    if named_unknown and (book.path_rules("deny", "Read") or book.path_rules("ask", "Read")):
        return Decision(
            "ask", f"cannot tell which file `{named_unknown[0]}` names in `{label}`", fix=_BYPASS
        )
    if scope.mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions")
    if problem := _unjudgeable(inv, cwd):
        return Decision("ask", f"{problem} in `{label}`", fix=_BYPASS)
    if written_unknown:
        return Decision(
            "ask", f"cannot tell where `{written_unknown[0]}` writes in `{label}`", fix=_BYPASS
        )
    for path in written:
        if paths.is_device(path):
            continue
        edit = (f"Edit(/{path})",)
        if links:
            return Decision("ask", f"`{label}` writes {path} after a symlink was made", fix=_BYPASS)
        if not paths.within(path, scope.roots) and not book.path_rule("allow", "Edit", path):
            folder = shlex.quote(str(path.parent))
            fix = f"--add-dir {folder} or --allowedTools {shlex.quote(edit[0])}"
            return Decision(
                "ask", f"`{label}` writes {path}, outside the workspace", None, edit, fix
            )
        if paths.guarded(path) and not book.path_rule("allow", "Edit", path):
            return Decision(
                "ask",
                f"`{label}` writes {path}, which configures the agent or runs code",
                None,
                edit,
            )
    unknown = Unknown(named_unknown, trees_unknown, parsed)
    opened = _opened(inv, named, cwd, scope.home)
    problem = _read_only_problem(inv, cmd, opened, trees, scope, line, cwd, unknown)
    command = _command_verdict(inv, problem, scope, opened)
    return combine([command, _redirect_verdict(label, redirected, scope)])


def _opened(inv: Invocation, named: list[Path], cwd: Path | None, home: Path) -> list[Path]:
    """The named paths the command may open: all of them, but only its input redirections
    for a command that prints or tests its arguments (`echo ~/.ssh/id_rsa` reads nothing)."""
    if not inv.argv or command_name(inv.argv[0]) not in ARGUMENTS_NOT_FILES:
        return named
    inputs = [(r.target, r.target_dynamic) for r in inv.redirects if r.op in ("<", "<>")]
    return _resolve([(t, d) for t, d in inputs if t is not None], cwd, home)[0]


def _ruled(
    inv: Invocation, named: list[Path], written: list[Path], trees: list[Path], scope: Scope
) -> Decision | None:
    """A deny or ask rule on the command (however spelled) or on a path it reads or writes."""
    book, label = scope.book, _label(inv)
    behaviors: tuple[Behavior, ...] = ("deny", "ask")
    for behavior in behaviors:
        fix = "" if behavior == "deny" else "answering the prompt in an interactive session"
        rule = book.bash_rule(behavior, inv.wrapped, [False] * len(inv.wrapped))
        rule = rule or book.bash_rule(behavior, inv.argv, inv.dynamic)
        if rule is not None:
            return Decision(behavior, f"`{label}` matches a {behavior} rule", rule, fix=fix)
        for top in trees:
            if (hit := denied_under(behavior, "Read", top, book)) is not None:
                why = f"`{label}` over {top} {hit.reaches(behavior)}"
                return Decision(behavior, why, hit.rule, fix=fix)
        for tool, targets in (("Read", named), ("Edit", written)):
            for path in targets:
                if (rule := book.path_rule(behavior, tool, path)) is not None:
                    why = f"`{label}` names {path}, which a {behavior} rule covers"
                    return Decision(behavior, why, rule, fix=fix)
    return None


def _command_verdict(
    inv: Invocation, problem: str | None, scope: Scope, named: list[Path]
) -> Decision:
    """The command itself, its redirections aside; `problem`: why it is not read-only. A rule
    for any arguments (`Bash(ls:*)`) does not cover naming a credential: only a Read rule
    for it, or a rule spelling the whole command, does."""
    book, label = scope.book, _label(inv)
    if scope.mode == "plan":
        if problem is None:
            return Decision("allow", "read-only command")
        return Decision(
            "deny",
            f"`{label}` is not read-only ({problem}), and plan mode only reads",
            fix="leaving plan mode",
        )
    words, dynamic = inv.rule_words()
    rule = book.bash_rule("allow", words, dynamic, open_args=inv.open_args)
    secret = _unallowed([p for p in named if paths.credential(p, scope.home)], scope)
    if rule is not None and rule.bash is not None and rule.bash.kind != "exact" and secret:
        read = f"Read(/{secret})"
        return Decision(
            "ask",
            f"`{label}` reads {secret}, which holds credentials: {rule.text} covers the"
            " command, not that file",
            None,
            (read,),
            fix=f"--allowedTools {shlex.quote(read)}",
        )
    if rule is not None:
        return Decision("allow", f"`{label}` matches an allow rule", rule)
    if problem is None:
        return Decision("allow", "read-only command")
    if not inv.argv:  # a bare assignment or redirection
        return Decision("ask", f"`{label}` needs approval: {problem}", fix=_BYPASS)
    accepted = scope.mode == "acceptEdits" and inv.argv[0] in ACCEPT_EDITS_COMMANDS
    if accepted and path_uses(inv).written:
        return Decision("allow", "acceptEdits: file command inside the workspace")
    modes = " or --permission-mode acceptEdits" if inv.argv[0] in ACCEPT_EDITS_COMMANDS else ""
    suggestion = suggest_rule(inv.argv)
    return Decision(
        "ask",
        f"`{label}` is not read-only: {problem}",
        suggestions=(suggestion,),
        fix=f"--allowedTools {shlex.quote(suggestion)}{modes}",
    )


def _read_only_problem(
    inv: Invocation,
    cmd: SimpleCommand | None,
    named: list[Path],
    trees: list[Path],
    scope: Scope,
    line: str | None,
    cwd: Path | None,
    unknown: Unknown,
) -> str | None:
    if inv.argv and inv.argv[0] in _DIRECTORY_COMMANDS:
        return None
    simple = cmd if cmd is not None else inv.simple()
    if problem := simple_command_problem(simple, redirects=False):
        return problem
    if line is not None:
        return line
    readable = [p for p in named if not scope.book.path_rule("allow", "Read", p)]
    if found := next((p for p in readable if paths.credential(p, scope.home)), None):
        return f"it reads {found}, which holds credentials"
    if problem := _unknown_reads(inv, cmd, cwd, scope, unknown):
        return problem
    if (opened := _ripgrep_opens(inv, cwd)) is not None:
        readable = [p for p in opened if not scope.book.path_rule("allow", "Read", p)]
        found = next((p for p in readable if paths.credential(p, scope.home)), None)
        return f"it reads {found}, which holds credentials" if found else None
    for top in trees:
        reached = paths.credentials_under(top, scope.home)
        if reached is None:
            return f"it reads {top} recursively, too large a tree to check for credentials"
        for found in reached:
            if not scope.book.path_rule("allow", "Read", found):
                return f"it reads {top} recursively, and {found} holds credentials"
    return None


@valueclass
class Unknown:
    """What a command reads that only run time decides: words, trees, and the line around."""

    words: list[str]
    trees: list[str]
    parsed: ParsedCommand


def _unknown_reads(
    inv: Invocation, cmd: SimpleCommand | None, cwd: Path | None, scope: Scope, unknown: Unknown
) -> str | None:
    """A file named at run time (`cat $X`, `xargs cat`) is read-only only when no value it
    can take names a credential: a `$(...)` or a pipe whose producer is bounded (feeds.py)."""
    if not inv.argv or command_name(inv.argv[0]) in ARGUMENTS_NOT_FILES:
        return None
    if unknown.trees:
        return f"cannot tell which tree `{unknown.trees[0]}` names, and it could hold credentials"
    if not unknown.words and not inv.open_args:
        return None
    from codeloop.permissions import feeds  # loads with the first line naming files at run time

    for word in unknown.words:
        if _PROCESS_SUBSTITUTION.fullmatch(word):
            continue  # a pipe from commands judged on their own
        reached = feeds.substituted_credentials(word, cwd, scope.home) if cwd else None
        if reached is None:
            return f"cannot tell which file `{word}` names, and it could hold credentials"
        if found := _unallowed(reached, scope):
            return f"`{word}` can name {found}, which holds credentials"
    if inv.open_args:
        if path_uses(inv).trees or cmd is None or cwd is None:
            return "its input names the files it reads, which could hold credentials"
        reached = feeds.fed_credentials(unknown.parsed, cmd, cwd, scope.home)
        if reached is None:
            return "its input names the files it reads, which could hold credentials"
        if found := _unallowed(reached, scope):
            return f"its input can name {found}, which holds credentials"
    return None


def _unallowed(found: list[Path], scope: Scope) -> Path | None:
    return next((p for p in found if not scope.book.path_rule("allow", "Read", p)), None)


def _loop_values(words: list[Word], loops: Mapping[str, tuple[Word, ...]]) -> list[Word]:
    """Words with each for-loop variable replaced by every word its loop gives it (`for f in
    ~/.ssh/*; do cat "$f"` reads what `~/.ssh/*` names); a loop with no words known, or too
    many combinations, leaves the word unknown."""
    found: list[Word] = []
    for text, dynamic in words:
        used = {m.group(1) or m.group(2) for m in _LOOP_PATTERN.finditer(text)} if dynamic else ()
        names = [n for n in loops if n in used]
        values = [loops[n] for n in names]
        if not names or not 0 < math.prod(map(len, values)) <= _LOOP_COMBINATIONS:
            found.append((text, dynamic))
            continue
        for chosen in itertools.product(*values):
            replacements = {name: value for name, (value, _) in zip(names, chosen, strict=True)}
            found.append((_LOOP_PATTERN.sub(partial(_loop_value, replacements), text), True))
    return found


def _loop_value(replacements: Mapping[str, str], match: re.Match[str]) -> str:
    name = match.group(1) or match.group(2)
    return replacements.get(name, match.group(0))


def _ripgrep_opens(inv: Invocation, cwd: Path | None) -> list[Path] | None:
    """The files an rg search opens, as ripgrep lists them; None for other readers (they open
    everything under a tree), for a walk into ignored files, or when ripgrep cannot say."""
    if not inv.argv or command_name(inv.argv[0]) != "rg" or any(inv.dynamic) or cwd is None:
        return None
    from codeloop.shell import ripgrep  # loads with the first rg line
    from codeloop.shell.argv_spec import ArgvError

    try:
        search = ripgrep.search(inv.argv[1:])
    except ArgvError:
        return None
    if not search.reads_contents:
        return []
    return search.opened(cwd) if search.widened is None else None


def _redirect_verdict(label: str, targets: list[Path], scope: Scope) -> Decision:
    """A redirection is a write of its target, judged like the Write tool would judge it. A rule
    for a command does not cover it; `Bash` alone (all of Bash) does, inside the workspace."""
    uncovered = [p for p in targets if not scope.book.path_rule("allow", "Edit", p)]
    everything = scope.book.tool_rule("allow", "Bash") is not None and scope.mode != "plan"
    if not uncovered or everything or scope.mode in ("acceptEdits", "bypassPermissions"):
        return Decision("allow", "redirection inside the workspace")
    path = uncovered[0]
    if scope.mode == "plan":
        return Decision(
            "deny", f"`{label}` writes {path}, and plan mode only reads", fix="leaving plan mode"
        )
    rule = f"Edit(/{path})"
    return Decision(
        "ask",
        f"`{label}` writes {path} (a redirection is a file write)",
        suggestions=(rule,),
        fix=f"--permission-mode acceptEdits or --allowedTools {shlex.quote(rule)}",
    )


def _unjudgeable(inv: Invocation, cwd: Path | None) -> str | None:
    if inv.problem:
        return inv.problem
    if inv.argv and inv.dynamic[0]:
        return "the command name is decided at run time"
    risky = [a.name for a in inv.assignments if _risky(a, bare=not inv.argv)]
    if risky:
        return f"setting {risky[0]} can change what runs"
    return _git_repository(inv, cwd)


def _git_repository(inv: Invocation, cwd: Path | None) -> str | None:
    """For a git command that only reads: is the repository it will use safe to read?"""
    if not inv.argv or command_name(inv.argv[0]) != "git" or any(inv.dynamic):
        return None
    from codeloop.shell.git_check import (  # loads with the first git line
        git_directories,
        git_problem,
        needs_repository,
        repository_problem,
    )

    args = inv.argv[1:]
    if git_problem(args) is not None or not needs_repository(args):
        return None
    if cwd is None:
        return "cannot tell which repository git reads"
    directory = cwd
    for step in git_directories(args):
        directory = Path(os.path.realpath(directory / os.path.expanduser(step)))
    return repository_problem(directory)


def _risky(a: Assignment, *, bare: bool) -> bool:
    """A variable no rule can vouch for: it names what runs (or, on a command, holds a value
    decided at run time). On its own line an unknown value matters only where the name does."""
    if assignment_problem(a) is None:
        return False  # `GIT_PAGER=cat`, `LC_ALL=C`: known to change nothing that runs
    return (a.dynamic and not bare) or bool(RISKY_VARIABLE.fullmatch(a.name.split("[", 1)[0]))


def _resolve(words: list[Word], cwd: Path | None, home: Path) -> tuple[list[Path], list[str]]:
    """Paths the words name (globs expanded), and the words whose target cannot be known."""
    found: list[Path] = []
    unknown: list[str] = []
    for text, dynamic in words:
        if not text:
            continue
        if dynamic:  # `"$HOME/.ssh/id_rsa"`: the home is known
            text = _HOME_VARIABLE.sub(lambda _: str(home), text, count=1)
            if cwd is not None:  # `cd` is followed, and setting PWD asks
                text = _PWD_VARIABLE.sub(lambda _: str(cwd), text, count=1)
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
    """The command as the refusal names it: one line, at most 80 characters."""
    own = [f"{a.name}={a.value}" for a in inv.assignments]
    words = [w for w in own if w not in inv.wrapped] + inv.wrapped
    text = " ".join(words) or " ".join(f"{r.op}{r.target or ''}" for r in inv.redirects)
    text = text.replace("\n", "\\n")
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
