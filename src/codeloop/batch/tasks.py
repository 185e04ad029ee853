"""A batch's tasks: read from JSON Lines, in codeloop's shape or SWE-bench's, checked up front.

A codeloop line names `repo` (a path or a git URL) and `prompt`, and may set `id`, `ref`,
`model`, `allowed_tools`, `disallowed_tools`, `permission_mode`, `max_turns` and
`max_budget_usd`; an unknown key is a mistake reported with its line. A SWE-bench line
(`instance_id`, `repo`, `base_commit`, `problem_statement`) is taken as it is: its other
dataset fields are not for the agent and are left out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from codeloop.permissions.modes import PERMISSION_MODES, PermissionMode
from codeloop.system.valueclass import valueclass

TASK_KEYS = frozenset(
    {
        "id",
        "repo",
        "ref",
        "prompt",
        "model",
        "allowed_tools",
        "disallowed_tools",
        "permission_mode",
        "max_turns",
        "max_budget_usd",
    }
)
SWE_BENCH_KEYS = ("instance_id", "repo", "base_commit", "problem_statement")
# Ids name folders and lines of the results: letters, digits and . _ - only.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")

SWE_BENCH_PROMPT = """\
Resolve the issue below in the repository in the current directory. Change the source files so \
that the problem is fixed; do not add or change tests, and do not commit.

<issue>
{problem_statement}
</issue>"""


class TaskFileError(Exception):
    """The tasks file cannot be run as it is; the message lists every problem, by line."""


@valueclass(kw_only=True)
class Defaults:
    """How a task runs: what the command line sets for every task that does not set it."""

    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    permission_mode: PermissionMode | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None


@valueclass(kw_only=True)
class Task(Defaults):
    """One unit of work, complete: the batch's defaults are already filled in."""

    id: str
    repo: str
    prompt: str
    ref: str | None = None
    line: int = 0


@valueclass(frozen=False)
class _Problems:
    items: list[str] = field(default_factory=list)

    def add(self, line: int, text: str) -> None:
        self.items.append(f"line {line}: {text}")

    def check(self, header: str, limit: int = 20) -> None:
        """Raise TaskFileError with the first `limit` problems, if there are any."""
        if not self.items:
            return
        shown = self.items[:limit]
        more = len(self.items) - len(shown)
        tail = f"\n  ... and {more} more" if more else ""
        raise TaskFileError(f"{header}:\n  " + "\n  ".join(shown) + tail)


def load_tasks(path: Path, defaults: Defaults = Defaults()) -> list[Task]:
    """Every task in the file, in order; raises TaskFileError naming each bad line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TaskFileError(f"cannot read {path}: {exc.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    problems = _Problems()
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            problems.add(number, f"not JSON ({exc})")
            continue
        if not isinstance(data, dict):
            problems.add(number, "not a JSON object")
            continue
        task = _task(data, number, defaults, problems)
        if task is None:
            continue
        if task.id in seen:
            problems.add(number, f"id {task.id!r} is already used on line {seen[task.id]}")
            continue
        seen[task.id] = number
        tasks.append(task)
    problems.check(str(path))
    if not tasks:
        raise TaskFileError(f"{path}: no tasks (one JSON object a line)")
    return tasks


def _task(
    data: Mapping[str, Any], number: int, defaults: Defaults, problems: _Problems
) -> Task | None:
    before = len(problems.items)
    if "problem_statement" in data and "instance_id" in data:
        missing = [k for k in SWE_BENCH_KEYS if not isinstance(data.get(k), str) or not data[k]]
        if missing:
            problems.add(number, f"a SWE-bench line needs {', '.join(missing)} (strings)")
            return None
        fields: dict[str, Any] = {
            "id": data["instance_id"],
            "repo": data["repo"],
            "ref": data["base_commit"],
            "prompt": SWE_BENCH_PROMPT.format(problem_statement=data["problem_statement"]),
        }
        overrides = {k: v for k, v in data.items() if k in TASK_KEYS - {"id", "repo", "ref"}}
        fields |= overrides
    else:
        unknown = sorted(set(data) - TASK_KEYS)
        if unknown:
            problems.add(
                number, f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(TASK_KEYS))})"
            )
            return None
        fields = dict(data)
    for key in ("repo", "prompt"):
        if not isinstance(fields.get(key), str) or not fields[key].strip():
            problems.add(number, f"{key!r} is missing (a non-empty string)")
    task_id = fields.get("id")
    if task_id is None:
        # Derived from the content: stable when lines are added, moved or removed.
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
        task_id = f"task-{digest[:10]}"
    elif not isinstance(task_id, str) or not _ID.fullmatch(task_id):
        problems.add(number, f"id {task_id!r}: use letters, digits, '.', '_' and '-' only")
    ref = fields.get("ref")
    if ref is not None and (not isinstance(ref, str) or not ref.strip()):
        problems.add(number, "'ref' must be a non-empty string (a branch, tag or commit)")
    mode = fields.get("permission_mode")
    if mode is not None and mode not in PERMISSION_MODES:
        problems.add(number, f"permission_mode {mode!r} (one of {', '.join(PERMISSION_MODES)})")
    model = fields.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        problems.add(number, "'model' must be a non-empty string")
    tools = {k: _tool_list(fields.get(k), k, number, problems) for k in _TOOL_KEYS}
    turns = fields.get("max_turns")
    if turns is not None and (not isinstance(turns, int) or isinstance(turns, bool) or turns < 1):
        problems.add(number, "'max_turns' must be a whole number, at least 1")
    budget = fields.get("max_budget_usd")
    if budget is not None and (
        not isinstance(budget, int | float) or isinstance(budget, bool) or not budget > 0
    ):
        problems.add(number, "'max_budget_usd' must be a number above 0")
    if len(problems.items) > before:
        return None
    task = Task(
        id=task_id,
        repo=fields["repo"].strip(),
        prompt=fields["prompt"],
        ref=ref.strip() if ref else None,
        model=model,
        permission_mode=mode,
        max_turns=turns,
        max_budget_usd=float(budget) if budget is not None else None,
        line=number,
        **{k: v for k, v in tools.items() if v is not None},
    )
    return _with_defaults(task, fields, defaults)


_TOOL_KEYS = ("allowed_tools", "disallowed_tools")


def _tool_list(value: Any, key: str, number: int, problems: _Problems) -> tuple[str, ...] | None:
    """A list of rules, or one string of them ("Edit,Bash(pytest:*)") as the CLI takes."""
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(value)
    problems.add(number, f"{key!r} must be a list of strings (or one string)")
    return None


def _with_defaults(task: Task, given: Mapping[str, Any], defaults: Defaults) -> Task:
    missing = {
        name: getattr(defaults, name)
        for name in Defaults.__dataclass_fields__
        if given.get(name) is None
    }
    return replace(task, **missing)


# --- where a task's repository is --------------------------------------------------------

_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
_OWNER_NAME = re.compile(r"^[\w.-]+/[\w.-]+$")


@valueclass
class RepoLocator:
    """Turns a task's `repo` into a local path or a URL to clone.

    A path is relative to the tasks file's folder; a URL is used as it is; a SWE-bench name
    (`owner/name`) is looked for in `repos_dir` (as owner__name, owner/name or name), else
    filled into `url_template` ({repo}, {owner}, {name})."""

    base: Path
    repos_dir: Path | None = None
    url_template: str | None = None

    def locate(self, repo: str) -> str:
        if "://" in repo or _SCP_LIKE.match(repo):
            return repo
        path = (self.base / Path(repo).expanduser()).resolve()
        if path.is_dir():
            return str(path)
        owner, _, name = repo.rpartition("/")
        if self.repos_dir is not None:
            names = [f"{owner}__{name}", repo, name] if owner else [repo]
            for candidate in names:
                found = self.repos_dir / candidate
                if found.is_dir():
                    return str(found.resolve())
        if self.url_template is not None:
            return self.url_template.format(repo=repo, owner=owner, name=name)
        hint = (
            "pass --repos-dir DIR (holding clones named owner__name) or --repo-url TEMPLATE "
            "(e.g. https://github.com/{repo}.git)"
            if _OWNER_NAME.match(repo)
            else "give a folder that exists or a git URL"
        )
        where = f" (looked in {self.repos_dir})" if self.repos_dir is not None else ""
        raise TaskFileError(f"repo {repo!r} is not a folder here{where}: {hint}")


def locate_all(tasks: Sequence[Task], locator: RepoLocator) -> dict[str, str]:
    """Each task's source (path or URL) by id; raises TaskFileError listing the misses."""
    sources: dict[str, str] = {}
    problems = _Problems()
    for task in tasks:
        try:
            sources[task.id] = locator.locate(task.repo)
        except TaskFileError as exc:
            problems.add(task.line, str(exc))
    problems.check("cannot find these repositories", limit=10)
    return sources
