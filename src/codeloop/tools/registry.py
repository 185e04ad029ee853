"""The built-in tools, in the order models see them, each loaded on first use.

A tool's module is not imported before the first request: that needs nothing but the tools'
specs, and those come from specs.json, which `tests/unit/test_registry.py` keeps identical to
what the tools declare. After changing a tool's description or input, regenerate it:
`python -m codeloop.tools.registry`. `preload` then loads them in a background thread while
a model call is in flight (Session: a tool as the model starts calling it, the others during
the next response), so a tool call does not wait for them either.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from codeloop.models.base import ToolSpec
from codeloop.system.env_values import flag
from codeloop.system.lull import in_lull, lull
from codeloop.tools.base import AnyTool, Tool, ToolContext, ToolResult
from codeloop.tools.services import ToolServices

BUILTINS: tuple[tuple[str, str], ...] = (
    ("Bash", "codeloop.tools.bash:BashTool"),
    ("Glob", "codeloop.tools.search:GlobTool"),
    ("Grep", "codeloop.tools.search:GrepTool"),
    ("Read", "codeloop.tools.files_read:ReadTool"),
    ("Edit", "codeloop.tools.files_write:EditTool"),
    ("Write", "codeloop.tools.files_write:WriteTool"),
    ("Agent", "codeloop.tools.task:AgentTool"),
    ("NotebookEdit", "codeloop.tools.notebook:NotebookEditTool"),
    ("WebFetch", "codeloop.tools.web_fetch:WebFetchTool"),
    ("TodoWrite", "codeloop.tools.todo:TodoWriteTool"),
    ("TaskOutput", "codeloop.tools.background_tools:TaskOutputTool"),
    ("TaskStop", "codeloop.tools.background_tools:TaskStopTool"),
    ("ExitPlanMode", "codeloop.tools.plan:ExitPlanModeTool"),
    ("AskUserQuestion", "codeloop.tools.ask:AskUserQuestionTool"),
)
# Tools a session adds only when it has something for them (Skill: when there are skills);
# their specs are stored like the built-ins'.
ON_DEMAND: tuple[tuple[str, str], ...] = (
    ("Skill", "codeloop.tools.skill:SkillTool"),
    ("WebSearch", "codeloop.tools.web_search:WebSearchTool"),
    ("TaskCreate", "codeloop.tools.task_tools:TaskCreateTool"),
    ("TaskGet", "codeloop.tools.task_tools:TaskGetTool"),
    ("TaskUpdate", "codeloop.tools.task_tools:TaskUpdateTool"),
    ("TaskList", "codeloop.tools.task_tools:TaskListTool"),
    ("TeamCreate", "codeloop.tools.team:TeamCreateTool"),
    ("SendMessage", "codeloop.tools.team:SendMessageTool"),
    ("LSP", "codeloop.tools.lsp_tool:LspTool"),
)
# Claude Code's task list tools, which take TodoWrite's place where they are offered.
TASK_TOOLS = ("TaskCreate", "TaskGet", "TaskUpdate", "TaskList")
SPECS_FILE = Path(__file__).with_name("specs.json")
# Claude Code's switch for agent teams (experimental there too).
TEAMS_SWITCH = "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"

ToolFactory = Callable[[], AnyTool]


class LazyTool:
    """Stands in for a tool until it is used: answers `spec()` from specs.json, and loads the
    real tool for everything else."""

    def __init__(self, spec: ToolSpec, load: ToolFactory) -> None:
        self._spec = spec
        self._load = load
        self._tool: AnyTool | None = None
        # Its own: a call waits for its tool alone, not for what `preload` is loading.
        self._loading = threading.Lock()

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def description(self) -> str:
        return self._spec.description

    @property
    def tool(self) -> AnyTool:
        """The real tool, built once (`preload` may be building it in its thread)."""
        if self._tool is None:
            with self._loading:
                if self._tool is None:
                    self._tool = self._load()
        return self._tool

    @property
    def loaded(self) -> bool:
        return self._tool is not None

    def warm(self) -> None:
        """Load the tool and what its first call needs (`Tool.warm`), the tool handed out only
        once both are done: a call that comes meanwhile (a model that answered at once) waits
        for the whole warm-up in one go, instead of racing this thread for the interpreter
        module by module."""
        with self._loading:
            if self._tool is not None:
                return
            tool = self._load()
            try:
                if isinstance(tool, Tool):
                    tool.warm()
            finally:
                self._tool = tool

    def spec(self) -> ToolSpec:
        return self._spec

    def parse(self, raw: dict[str, Any]) -> Any:
        return self.tool.parse(raw)

    def is_read_only(self, args: Any) -> bool:
        return self.tool.is_read_only(args)

    def is_concurrency_safe(self, args: Any) -> bool:
        return self.tool.is_concurrency_safe(args)

    @property
    def delegates(self) -> bool:
        return bool(getattr(self.tool, "delegates", False))

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        return await self.tool.call(args, ctx)


class Offered(Mapping[str, AnyTool]):
    """The tools a run offers the model and may call: `tools` less those `withheld` names
    (Policy.withholds: deny rules naming a whole tool, as Claude Code filters its tool list).
    A view, read anew at each use: a rule or a tool added later counts from the next run."""

    def __init__(self, tools: Mapping[str, AnyTool], withheld: Callable[[str], bool]) -> None:
        self._tools = tools
        self._withheld = withheld

    def __getitem__(self, name: str) -> AnyTool:
        if self._withheld(name):
            raise KeyError(name)
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._tools if not self._withheld(name))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def preload(tools: Iterable[AnyTool]) -> threading.Thread | None:
    """Load these tools (those not loaded yet) in a background thread, while a model call is
    in flight: the model takes longer to answer than the imports take, and a tool called
    meanwhile waits only for what is not loaded yet. A tool that fails to load fails again, and
    is reported, when it is called. No thread when every one is loaded already."""
    lazy = [tool for tool in tools if isinstance(tool, LazyTool) and not tool.loaded]
    if not lazy:
        return None

    def load() -> None:
        for tool in lazy:
            with contextlib.suppress(Exception):  # the call reports it (see the docstring)
                tool.warm()

    thread = threading.Thread(target=load, name="codeloop-preload", daemon=True)
    thread.start()
    return thread


def warm_in_lulls(tools: Iterable[AnyTool]) -> None:
    """Load these tools (those not loaded yet) one at a time in the foreground's waits on the
    network (lulls, system/lull.py): never between an answer and the next request, where a
    thread loading them would compete for the interpreter with a model that answers at once.
    A tool called before its turn loads then; one that fails to load fails again, and is
    reported, when it is called. Behind a transport that marks no wait (an in-process model,
    httpx's), nothing tells a lull: they load in a thread (`preload`)."""
    if not lull().marks:
        preload(tools)
        return
    for tool in tools:
        if isinstance(tool, LazyTool) and not tool.loaded:
            in_lull(functools.partial(_warm_quietly, tool))


def _warm_quietly(tool: LazyTool) -> None:
    with contextlib.suppress(Exception):  # the call reports it (see warm_in_lulls)
        tool.warm()


# How long after a call starts streaming its tool loads in the background (`preload_soon`).
PRELOAD_AFTER_SECONDS = 0.005


def preload_soon(tools: Iterable[AnyTool]) -> asyncio.TimerHandle:
    """`preload`, a moment from now. A model still writing its call leaves the event loop
    waiting meanwhile, and the thread loads the tool while it writes; a call that came whole
    (a model that answered at once) loads its tool itself first, and `preload` then skips it,
    where a thread started at once would only have competed with it for the interpreter
    (~5 ms of a first call's gap)."""
    return asyncio.get_running_loop().call_later(PRELOAD_AFTER_SECONDS, preload, list(tools))


def described(
    tool: AnyTool, description: str, input_schema: dict[str, Any] | None = None
) -> AnyTool:
    """The same tool under another description (the Task tool listing the session's agents),
    or another schema (its teammate fields)."""
    spec = tool.spec()
    schema = input_schema or spec.input_schema
    return LazyTool(ToolSpec(spec.name, description, schema), lambda: tool)


def on_demand_tool(name: str, load: ToolFactory) -> AnyTool:
    """An ON_DEMAND tool, built by `load` on first use, its spec from specs.json."""
    return LazyTool(_stored_specs()[name], load)


def service_tool(name: str, services: ToolServices) -> AnyTool:
    """An ON_DEMAND tool built from the services on first use (WebSearch, when there is a
    search backend)."""
    return on_demand_tool(name, functools.partial(_construct, dict(ON_DEMAND)[name], services))


# What the Agent tool's schema adds with agent teams on: a teammate's name and team.
TEAMMATE_FIELDS: dict[str, Any] = {
    "name": {
        "type": "string",
        "description": "Agent teams: a name for a teammate to spawn (with team_name); it "
        "runs in the background and others reach it by this name.",
    },
    "team_name": {
        "type": "string",
        "description": "Agent teams: the team (from TeamCreate) the teammate joins.",
    },
}


def uses_teams(env: Mapping[str, str]) -> bool:
    return flag(env, TEAMS_SWITCH)


def with_teams(tools: Mapping[str, AnyTool]) -> dict[str, AnyTool]:
    """`tools` with agent teams: TeamCreate and SendMessage after Agent, whose schema takes a
    teammate's name and team."""
    out: dict[str, AnyTool] = {}
    for name, tool in tools.items():
        if name != "Agent":
            out[name] = tool
            continue
        spec = tool.spec()
        schema = dict(spec.input_schema)
        schema["properties"] = {**schema.get("properties", {}), **TEAMMATE_FIELDS}
        out[name] = described(tool, spec.description, schema)
        for team_tool in ("TeamCreate", "SendMessage"):
            out[team_tool] = _stored(team_tool)
    return out


def switched_tools(tools: Mapping[str, AnyTool], env: Mapping[str, str]) -> dict[str, AnyTool]:
    """`tools` as Claude Code's switches change them: the task list tools in TodoWrite's place
    (CLAUDE_CODE_ENABLE_TASKS, agent teams), the team tools (agent teams)."""
    if uses_task_list(env):
        tools = with_task_list(tools)
    return with_teams(tools) if uses_teams(env) else dict(tools)


def uses_task_list(env: Mapping[str, str]) -> bool:
    """Whether the session offers the task list tools instead of TodoWrite: as Claude Code
    does when CLAUDE_CODE_ENABLE_TASKS is set, and for agent teams (their shared list)."""
    return flag(env, "CLAUDE_CODE_ENABLE_TASKS") or flag(env, TEAMS_SWITCH)


def with_task_list(tools: Mapping[str, AnyTool]) -> dict[str, AnyTool]:
    """`tools` with the task list tools where TodoWrite was (Claude Code offers one or the
    other, never both)."""
    out: dict[str, AnyTool] = {}
    for name, tool in tools.items():
        if name != "TodoWrite":
            out[name] = tool
            continue
        for task_tool in TASK_TOOLS:
            out[task_tool] = _stored(task_tool)
    return out


def _stored(name: str) -> AnyTool:
    """An ON_DEMAND tool that needs nothing to be built."""
    return on_demand_tool(name, functools.partial(_construct, dict(ON_DEMAND)[name]))


def default_tools(
    overrides: Mapping[str, ToolFactory] | None = None, services: ToolServices | None = None
) -> dict[str, AnyTool]:
    """The built-in tools, WebSearch when the services have a search backend, LSP when they
    have language servers; `overrides`
    builds some differently (e.g. Bash in a sandbox); `services` is what the tools that need
    the session act through (tools/services.py)."""
    specs = _stored_specs()
    services = services or ToolServices()
    tools: dict[str, AnyTool] = {}
    for name, target in BUILTINS:
        factory = (overrides or {}).get(name) or functools.partial(_construct, target, services)
        tools[name] = LazyTool(specs[name], factory)
    if services.can_search:
        tools["WebSearch"] = service_tool("WebSearch", services)
    if services.language_servers is not None:
        tools["LSP"] = service_tool("LSP", services)
    return tools


def _construct(target: str, services: ToolServices | None = None) -> AnyTool:
    """A tool class with `from_services` is built from them; any other with no arguments."""
    module, _, name = target.partition(":")
    cls = getattr(importlib.import_module(module), name)
    build = getattr(cls, "from_services", None)
    tool: AnyTool = build(services or ToolServices()) if build is not None else cls()
    return tool


@functools.cache
def _stored_specs() -> dict[str, ToolSpec]:
    data = json.loads(SPECS_FILE.read_text(encoding="utf-8"))
    return {name: ToolSpec(name, d["description"], d["input_schema"]) for name, d in data.items()}


def declared_specs() -> dict[str, ToolSpec]:
    """What the tools themselves declare (imports every tool)."""
    return {name: _construct(target).spec() for name, target in (*BUILTINS, *ON_DEMAND)}


def write_specs() -> None:
    specs = {
        name: {"description": spec.description, "input_schema": spec.input_schema}
        for name, spec in declared_specs().items()
    }
    SPECS_FILE.write_text(json.dumps(specs, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write_specs()
    print(f"wrote {SPECS_FILE}", file=sys.stderr)
