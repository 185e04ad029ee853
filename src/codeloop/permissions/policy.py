"""Who may run which tool: modes, rules, the workspace boundary, and asking the user.

Modes follow Claude Code: `default` (read-only tools and commands run; the rest is asked),
`acceptEdits` (file edits and mkdir/touch/cp/mv inside the workspace too), `plan` (read-only
only), `dontAsk` (what would be asked is denied), `auto` (acceptEdits, then a classifier model
judges what would be asked: auto_mode.py) and `bypassPermissions` (everything but deny and ask
rules). Rules (rules.py) come from
settings files and CLI flags, each tagged with its source; deny beats ask beats allow, and every
decision names the rule that made it. Writes outside the workspace roots, and edits of files
that configure the agent or run code, are asked even in acceptEdits.

To ask, the policy calls an injected async `ask_user` (the interactive UI): allow once, allow
always (the rule is persisted to `.codeloop/settings.local.json`), or deny with a message for the
model. Without it (headless) an ask is a denial whose reason the model reads as an error result.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codeloop.permissions import paths
from codeloop.permissions.decision import Behavior, Decision, Scope
from codeloop.permissions.files_check import decide_files, file_targets
from codeloop.permissions.modes import PermissionMode
from codeloop.permissions.persist import add_rules, remove_rule
from codeloop.permissions.rules import Rule, RuleBook, RuleError, domain_matches, fold
from codeloop.settings.settings_safety import Problems, misspelt
from codeloop.system.valueclass import valueclass
from codeloop.tool_names import canonical
from codeloop.tools.base import AnyTool, ToolContext, Workspace
from codeloop.tools.input import ToolInput, wire_input
from codeloop.tools.permission import PermissionDecision

if TYPE_CHECKING:
    from codeloop.permissions.auto_mode import AutoMode, Verdict
    from codeloop.settings.settings_files import RuleSet


def split_rules(values: Iterable[str]) -> list[str]:
    """Flag values hold rules separated by commas or spaces; parentheses group:
    `"Bash(git diff:*),Edit"` → [`Bash(git diff:*)`, `Edit`]."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            depth += {"(": 1, ")": -1}.get(char, 0)
            depth = max(depth, 0)
            if depth == 0 and char in ", ":
                rules += [current.strip()] if current.strip() else []
                current = ""
            else:
                current += char
        rules += [current.strip()] if current.strip() else []
    return list(dict.fromkeys(rules))


def settings_rules(
    rule_sets: Iterable[RuleSet],
    project: Path,
    tools: Collection[str],
    warn: Callable[[str], None] | None = None,
) -> dict[str, list[Rule]]:
    """Every settings file's rules by behaviour, each tagged with its file (loading checked
    their syntax: settings/settings_files.py). Relative path rules are relative to the folder
    that holds the file's .claude/ or .codeloop/ (inline --settings: the project).

    A deny or ask rule whose tool is a misspelling of one of `tools` (`bash(rm:*)`) would
    match nothing: UnsafeSettingsError, as for any restriction that cannot be read. One naming
    no tool at all (a typo, or a Claude Code tool codeloop lacks) restricts nothing: `warn`
    says so, as Claude Code warns."""
    rules: dict[str, list[Rule]] = {"allow": [], "deny": [], "ask": []}
    problems = Problems()
    for rule_set in rule_sets:
        source = rule_set.source
        base = project if source == "--settings" else Path(source).parent.parent
        for kind in rules:
            parsed = [Rule.parse(text, source, base) for text in getattr(rule_set, kind)]
            rules[kind] += parsed
            for rule in parsed if kind != "allow" else ():
                if _names_a_tool(rule.tool, tools):
                    continue
                where = f"permissions.{kind}"
                if (meant := misspelt(rule.tool, tools)) is not None:
                    problems.found(source, where, f"{rule.text!r}: did you mean {meant}?")
                elif warn is not None:
                    warn(
                        f"{source}: {where}: {rule.text!r} matches no known tool (a typo?); "
                        "it restricts nothing"
                    )
    problems.check()
    return rules


def _names_a_tool(tool: str, tools: Collection[str]) -> bool:
    """Whether a rule's tool name is one of `tools` (by any of its names), a pattern or an
    MCP tool (their servers come up later)."""
    return "*" in tool or tool.startswith("mcp__") or canonical(tool) in tools


@valueclass
class PermissionRequest:
    """What the UI shows: the tool, its input, and why it is asked (with suggested rules)."""

    tool_name: str
    input: dict[str, Any]
    decision: Decision
    tool_use_id: str = ""


@valueclass
class Answer:
    kind: Literal["allow_once", "allow_always", "deny", "deny_always"]
    message: str = ""  # deny: what the model is told
    # allow_always, deny_always: rules to keep; default: the suggestions.
    rules: tuple[str, ...] = ()
    # allow: run the call with this input instead (it is decided again, as a hook's would be).
    updated_input: dict[str, Any] | None = None
    # deny: stop the run too.
    interrupt: bool = False


AskUser = Callable[[PermissionRequest], Awaitable[Answer]]


@valueclass
class HookVerdict:
    """What PermissionRequest hooks answered for a call that would be asked."""

    behavior: Literal["allow", "deny"]
    message: str = ""
    updated_input: dict[str, Any] | None = None
    interrupt: bool = False


# Runs the PermissionRequest hooks for (tool name, input, decision); None: no hook decided.
RequestHook = Callable[[str, dict[str, Any], Decision], Awaitable[HookVerdict | None]]
# Runs the PermissionDenied hooks for an auto-mode denial (tool name, input, tool_use_id,
# reason); whether one said the model may retry.
DeniedHook = Callable[[str, dict[str, Any], str, str], Awaitable[bool]]


@valueclass
class Denial:
    """A denied call, as the headless JSON result reports it (`permission_denials`)."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any]
    reason: str


class Policy:
    """Decides every tool call; `can_use_tool` is what the executor awaits.

    `allowed` / `disallowed` / `asked` take rule strings (source "options") or `Rule`s with
    their own source. `roots` are the workspace roots (the project directory first); when not
    given they are taken from the workspace the first call runs in, before any `cd` moved it.
    """

    def __init__(
        self,
        mode: PermissionMode = "default",
        allowed: Iterable[str | Rule] = (),
        disallowed: Iterable[str | Rule] = (),
        asked: Iterable[str | Rule] = (),
        *,
        roots: Sequence[Path] | None = None,
        home: Path | None = None,
        ask_user: AskUser | None = None,
    ) -> None:
        self.mode: PermissionMode = mode
        # The mode an accepted plan returns to (whoever switches into plan mode may set it).
        self.pre_plan_mode: PermissionMode = "default"
        self.ask_user = ask_user
        # PermissionRequest hooks, asked before the user (or the headless denial).
        self.request_hook: RequestHook | None = None
        # Auto mode's classifier (None: auto mode is not available, e.g. disableAutoMode) and
        # the PermissionDenied hooks its denials fire.
        self.auto: AutoMode | None = None
        self.denied_hook: DeniedHook | None = None
        self._granted: list[Rule] = []
        self.home = home or Path(os.path.expanduser("~"))
        self.denials: list[Denial] = []
        self.warnings: list[str] = []  # for the UI: e.g. an "allow always" that was not saved
        self._lists = (_rules(allowed), _rules(disallowed), _rules(asked))
        self._book: RuleBook | None = None
        self._roots: list[Path] = []
        if roots:
            self._bind(list(roots))

    @property
    def roots(self) -> list[Path]:
        return list(self._roots)

    def add_root(self, path: Path) -> None:
        """A working directory added mid-session (/add-dir): writes there are the project's."""
        if self._book is not None:
            self._roots.extend(r for r in paths.real_roots([path]) if r not in self._roots)

    def grant(self, texts: Sequence[str], source: str) -> None:
        """Allow these rules until the next prompt (a skill's `allowed-tools`)."""
        book = self._book
        if book is None:
            return
        for text in texts:
            try:
                rule = Rule.parse(text, source)
            except RuleError:
                continue
            if rule not in book.rules["allow"]:
                book.add("allow", rule)
                self._granted.append(rule)

    def add_rules(
        self, kind: Literal["allow", "deny", "ask"], texts: Sequence[str], source: str
    ) -> None:
        """Rules for the rest of the session, kept nowhere (an SDK's `updatedPermissions`
        with destination session, the Python API's custom tools)."""
        rules = [Rule.parse(text, source) for text in texts]
        if self._book is None:
            allow, deny, ask = self._lists
            {"allow": allow, "deny": deny, "ask": ask}[kind].extend(rules)
            return
        for rule in rules:
            self._book.add(kind, rule)

    def clear_grants(self) -> None:
        if self._book is not None:
            for rule in self._granted:
                if rule in self._book.rules["allow"]:
                    self._book.rules["allow"].remove(rule)
        self._granted.clear()

    def names_host(self, tool_name: str, host: str) -> bool:
        """Whether an allow rule names `host` for the tool (`WebFetch(domain:localhost)`):
        what lets WebFetch reach a loopback, private or link-local address."""
        if self._book is None:
            return False
        url = f"http://[{host}]/" if ":" in host else f"http://{host}/"
        return any(
            rule.specifier is not None
            and rule.specifier.startswith("domain:")
            and rule.covers_tool(tool_name)
            and domain_matches(rule.specifier, url)
            for rule in self._book.rules["allow"]
        )

    def withholds(self, tool_name: str) -> bool:
        """Whether a deny rule names the whole tool (no specifier: `Bash`, `mcp__server`,
        `mcp__server__*`): the model is not offered it at all, as in Claude Code. A rule with a
        specifier leaves it offered and denies the calls it matches."""
        deny = self._book.rules["deny"] if self._book is not None else self._lists[1]
        return any(rule.specifier is None and rule.covers_tool(tool_name) for rule in deny)

    def leave_plan_mode(self) -> bool:
        """An accepted plan: back to the mode the session had before plan mode (`default` for
        one that started in it); whether it was in plan mode."""
        if self.mode != "plan":
            return False
        self.mode = self.pre_plan_mode
        return True

    def with_mode(self, mode: PermissionMode) -> Policy:
        """The same rules, roots, prompt and denial record under another mode (a sub-agent's
        `permissionMode`)."""
        other = Policy.__new__(Policy)
        other.__dict__.update(self.__dict__)
        other.mode = mode
        return other

    def rule_matches(self, text: str, tool: AnyTool, args: Any, workspace: Workspace) -> bool:
        """Whether the call falls under the rule `text` (a hook's `if`), judged exactly as a
        deny rule would be: Bash subcommands one by one, file paths by their patterns."""
        rule = Rule.parse(text, "if")
        roots = self._roots or paths.real_roots(workspace.roots)
        book = RuleBook([], [rule], [], project=roots[0], home=self.home)
        scope = Scope("default", book, roots, self.home)
        if tool.name == "Bash":
            decision = _decide_bash(str(args.command), workspace.cwd, scope)
        elif (targets := file_targets(tool.name, args, workspace.cwd, self.home)) is not None:
            decision = decide_files(tool.name, targets, scope)
        else:
            decision = self._decide_other(tool, args, scope)
        return decision.rule == rule

    def _bind(self, roots: list[Path]) -> RuleBook:
        self._roots = paths.real_roots(roots)
        allow, deny, ask = self._lists
        self._book = RuleBook(allow, deny, ask, project=self._roots[0], home=self.home)
        return self._book

    def _scope(self, workspace: Workspace) -> Scope:
        book = self._book or self._bind(workspace.roots)
        if self.mode != "auto":
            return Scope(self.mode, book, self._roots, self.home)
        # Auto mode allows by itself what acceptEdits does, less the allow rules that would run
        # any code unseen; the classifier judges the rest.
        from codeloop.permissions.auto_mode import runs_any_code

        return Scope("acceptEdits", book.without_allow(runs_any_code), self._roots, self.home)

    # --- deciding --------------------------------------------------------------------------

    def decide(self, tool: AnyTool, args: Any, workspace: Workspace) -> Decision:
        scope = self._scope(workspace)
        name = tool.name
        if name == "Bash":
            return _decide_bash(str(args.command), workspace.cwd, scope)
        targets = file_targets(name, args, workspace.cwd, self.home)
        if targets is not None:
            return decide_files(name, targets, scope)
        return self._decide_other(tool, args, scope)

    def _decide_other(self, tool: AnyTool, args: Any, scope: Scope) -> Decision:
        name, book = tool.name, scope.book
        behaviors: tuple[Behavior, ...] = ("deny", "ask")
        for behavior in behaviors:
            rule = book.tool_rule(behavior, name) or _specifier_rule(book, behavior, name, args)
            if rule is not None:
                return Decision(behavior, f"{name} matches a {behavior} rule", rule)
        if scope.mode == "plan" and name == "ExitPlanMode":
            return _plan_exit(book)
        if scope.mode == "bypassPermissions":
            return Decision("allow", "bypassPermissions")
        read_only = tool.is_read_only(args)
        if scope.mode == "plan" and not read_only:
            return Decision("deny", f"{name} is not read-only, and plan mode only reads")
        rule = book.tool_rule("allow", name) or _specifier_rule(book, "allow", name, args)
        if rule is not None:
            return Decision("allow", f"{name} matches an allow rule", rule)
        if read_only:
            return Decision("allow", "read-only tool")
        return Decision("ask", f"{name} needs approval", None, (name,))

    # --- the executor's seam ---------------------------------------------------------------

    async def can_use_tool(self, tool: AnyTool, args: Any, ctx: ToolContext) -> PermissionDecision:
        decision = self.decide(tool, args, ctx.workspace)
        if self.mode == "auto" and decision.behavior == "allow" and decision.rule is None:
            decision = _judged_in_auto_mode(tool, decision)
        # A hook's approval answers the prompt a call would get, not an ask rule (Claude Code).
        hook_settles = ctx.hook_approved and decision.behavior == "ask" and decision.rule is None
        if decision.behavior == "allow" or hook_settles:
            return PermissionDecision(True)
        auto = self.auto if self.mode == "auto" and decision.rule is None else None
        unjudged = ""  # why auto mode left an ask to the usual path (its classifier failed)
        if decision.behavior == "ask" and auto is not None and not auto.paused:
            judged = await auto.classify(tool.name, _input_of(args), ctx.workspace.cwd, self.roots)
            if judged.allowed:
                return PermissionDecision(True)
            if judged.allowed is False:
                return await self._auto_denied(tool, args, ctx, auto, judged)
            unjudged = judged.reason
        if decision.behavior == "ask" and self.request_hook is not None:
            verdict = await self.request_hook(tool.name, _input_of(args), decision)
            if verdict is not None:
                return self._hook_verdict(tool, args, ctx, decision, verdict)
        if decision.behavior == "ask" and self.mode == "dontAsk":
            message = (
                f"Permission to use {tool.name} was denied: {decision.explain()}, and in "
                "dontAsk mode what would be asked is denied."
            )
            return self._deny(tool, args, ctx, message)
        if decision.behavior == "ask" and self.ask_user is not None:
            request = PermissionRequest(tool.name, _input_of(args), decision, ctx.tool_use_id)
            answer = await self.ask_user(request)
            if auto is not None and answer.kind in ("allow_once", "allow_always"):
                auto.approved()
            if answer.kind == "allow_once":
                return PermissionDecision(True, updated_input=answer.updated_input)
            if answer.kind == "allow_always":
                try:
                    self.allow_always(answer.rules or decision.suggestions)
                except OSError as exc:  # allowed now; only remembering it failed
                    self.warnings.append(f"Could not save the permission rule: {exc}")
                return PermissionDecision(True)
            if answer.kind == "deny_always":
                try:
                    self.deny_always(answer.rules or decision.suggestions)
                except OSError as exc:  # denied now; only remembering it failed
                    self.warnings.append(f"Could not save the permission rule: {exc}")
            message = answer.message or "The user denied this tool call."
            denied = self._deny(tool, args, ctx, f"Permission to use {tool.name} denied: {message}")
            return dataclasses.replace(denied, interrupt=answer.interrupt)
        if decision.behavior == "deny":
            message = f"Permission to use {tool.name} denied: {decision.explain()}."
            if decision.rule is None and decision.fix:
                message = f"{message[:-1]}; {decision.fix} would allow it."
        else:
            message = (
                f"Permission to use {tool.name} was denied: {decision.explain()}. This run cannot "
                f"ask the user; they can allow it with {decision.how_to_allow()}."
            )
        if auto is not None and decision.behavior == "ask":
            return await self._auto_unasked(tool, args, ctx, auto, message, unjudged)
        return self._deny(tool, args, ctx, message, would_ask=decision.behavior == "ask")

    async def _auto_denied(
        self, tool: AnyTool, args: Any, ctx: ToolContext, auto: AutoMode, verdict: Verdict
    ) -> PermissionDecision:
        """The classifier said no: the model reads why (and whether a PermissionDenied hook
        lets it retry); past the denial limit a run that cannot ask ends."""
        message = (
            f"Permission to use {tool.name} was denied by auto mode: {verdict.reason}. Do not "
            "try to get around this; take another approach, or tell the user what you need."
        )
        if await self._fire_denied(tool, args, ctx, verdict.reason):
            message += " A PermissionDenied hook says you may retry this tool call."
        if auto.paused:
            message += (
                f" Auto mode has paused after {auto.consecutive} denials in a row "
                f"({auto.total} in the session): from now on such calls are asked."
            )
            if self.ask_user is None:
                message += " This run cannot ask the user, so it ends here."
        denied = self._deny(tool, args, ctx, message)
        return dataclasses.replace(denied, interrupt=auto.paused and self.ask_user is None)

    async def _auto_unasked(
        self, tool: AnyTool, args: Any, ctx: ToolContext, auto: AutoMode, message: str, why: str
    ) -> PermissionDecision:
        """Auto mode could not decide (its classifier failed, or it paused) and nobody can be
        asked: a denial. A failed classifier's is reported to PermissionDenied hooks, whose
        `retry` does not apply (there was no verdict to reconsider)."""
        if why:
            await self._fire_denied(tool, args, ctx, why)
            message = f"{message} (Auto mode could not judge the call: {why}.)"
        denied = self._deny(tool, args, ctx, message, would_ask=True)
        return dataclasses.replace(denied, interrupt=auto.paused)

    async def _fire_denied(self, tool: AnyTool, args: Any, ctx: ToolContext, reason: str) -> bool:
        if self.denied_hook is None:
            return False
        return await self.denied_hook(tool.name, _input_of(args), ctx.tool_use_id, reason)

    def _hook_verdict(
        self, tool: AnyTool, args: Any, ctx: ToolContext, decision: Decision, verdict: HookVerdict
    ) -> PermissionDecision:
        """A PermissionRequest hook answered the prompt. An allow never overrides an ask rule,
        and changed input is decided again from the start."""
        if verdict.behavior == "deny":
            why = verdict.message or "a PermissionRequest hook denied it"
            denied = self._deny(tool, args, ctx, f"Permission to use {tool.name} denied: {why}")
            return dataclasses.replace(denied, interrupt=verdict.interrupt)
        if decision.rule is not None:  # an ask rule: the hook cannot answer for the user
            return self._deny(
                tool,
                args,
                ctx,
                f"Permission to use {tool.name} denied: {decision.explain()}.",
                would_ask=True,
            )
        if verdict.updated_input is not None:
            return PermissionDecision(True, updated_input=verdict.updated_input)
        return PermissionDecision(True)

    def _deny(
        self, tool: AnyTool, args: Any, ctx: ToolContext, message: str, *, would_ask: bool = False
    ) -> PermissionDecision:
        self.denials.append(Denial(tool.name, ctx.tool_use_id, _input_of(args), message))
        return PermissionDecision(False, message, would_ask)

    def rules(self) -> dict[str, list[Rule]]:
        """The rules in force, by behaviour (allow, deny, ask), each with its source."""
        book = self._book
        if book is None:
            allow, deny, ask = self._lists
            return {"allow": list(allow), "deny": list(deny), "ask": list(ask)}
        return {kind: list(rules) for kind, rules in book.rules.items()}

    def remove_rule(self, kind: str, rule: Rule) -> Path | None:
        """Stop applying a rule, and take it out of the settings file it came from (returned;
        None when it came from a flag or was granted for one prompt)."""
        for rules in (self._book.rules[kind] if self._book else [], self._lists[_KINDS[kind]]):
            if rule in rules:
                rules.remove(rule)
        source = Path(rule.source)
        if source.suffix != ".json" or not source.is_file():
            return None
        remove_rule(source, kind, rule.text)
        return source

    def allow_always(self, texts: Sequence[str]) -> Path | None:
        """Allow these rules from now on, and keep them in the project's local settings.

        Returns the settings file written, or None when there is no project yet."""
        return self._keep("allow", texts)

    def deny_always(self, texts: Sequence[str]) -> Path | None:
        """Deny these rules from now on, kept beside the allowed ones."""
        return self._keep("deny", texts)

    def _keep(self, kind: Literal["allow", "deny"], texts: Sequence[str]) -> Path | None:
        book = self._book
        if book is None or not texts:
            return None
        target = book.project / ".codeloop" / "settings.local.json"
        for text in texts:
            book.add(kind, Rule.parse(text, str(target)))
        add_rules(target, kind, texts)
        return target


_KINDS = {"allow": 0, "deny": 1, "ask": 2}


def _plan_exit(book: RuleBook) -> Decision:
    """ExitPlanMode in plan mode is the plan's approval: asked (the dialog shows the plan),
    unless an allow rule accepts plans (`--allowedTools ExitPlanMode`, in `-p`)."""
    rule = book.tool_rule("allow", "ExitPlanMode")
    if rule is not None:
        return Decision("allow", "ExitPlanMode matches an allow rule: plans are accepted", rule)
    return Decision(
        "ask",
        "leaving plan mode needs the user's approval of the plan; the session stays in plan "
        "mode: keep to reading, or end with the plan as your answer",
        None,
        ("ExitPlanMode",),
        fix="--allowedTools ExitPlanMode (accepts plans without asking)",
    )


def _judged_in_auto_mode(tool: AnyTool, decision: Decision) -> Decision:
    """In auto mode a sub-agent's task is judged before it starts (its own calls are judged as
    they run): a delegation the engine allows by itself goes to the classifier."""
    if not getattr(tool, "delegates", False):
        return decision
    return Decision("ask", f"{tool.name} starts a sub-agent with this task", None, (tool.name,))


def _rules(items: Iterable[str | Rule]) -> list[Rule]:
    return [item if isinstance(item, Rule) else Rule.parse(item) for item in items]


def _specifier_rule(book: RuleBook, behavior: Behavior, name: str, args: Any) -> Rule | None:
    """Rules like `WebFetch(domain:x)` or `Agent(explorer)` against a tool's string inputs."""
    values = [v for v in _input_of(args).values() if isinstance(v, str)]
    for rule in book.rules[behavior]:
        spec = rule.specifier
        if spec is None or not rule.covers_tool(name):
            continue
        if spec.startswith("domain:"):
            if any(domain_matches(spec, v) for v in values):
                return rule
        elif any(_glob_equal(spec, v, loose=behavior != "allow") for v in values):
            return rule
    return None


def _glob_equal(spec: str, value: str, *, loose: bool) -> bool:
    if loose:
        spec, value = fold(spec), fold(value)
    return fnmatch.fnmatchcase(value, spec)


def _input_of(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):  # tools without an input model (MCP tools) parse to a dict
        return dict(args)
    if isinstance(args, ToolInput):
        return wire_input(args)
    dump = getattr(args, "model_dump", None)  # a function tool's pydantic model
    return dict(dump(by_alias=True, exclude_none=True)) if callable(dump) else {}


def _decide_bash(command: str, cwd: Path, scope: Scope) -> Decision:
    """Bash's checker and its parser load with the first Bash call (the tools' preload loads
    them while the model writes it: BashTool.warm), not with every session."""
    from codeloop.permissions.bash_check import decide_bash

    return decide_bash(command, cwd, scope)
