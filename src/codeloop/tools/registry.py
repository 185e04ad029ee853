"""The built-in tools, in the order models see them, each loaded on first use.

A tool's module (and pydantic with it, ~100 ms) is imported only when the tool is first called:
the first request needs nothing but the tools' specs, and those come from specs.json, which
`tests/unit/test_registry.py` keeps identical to what the tools declare. After changing a tool's
description or input, regenerate it: `python -m codeloop.tools.registry`.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from codeloop.models.base import ToolSpec
from codeloop.tools.base import AnyTool, ToolContext, ToolResult

BUILTINS: tuple[tuple[str, str], ...] = (
    ("Bash", "codeloop.tools.bash:BashTool"),
    ("Glob", "codeloop.tools.search:GlobTool"),
    ("Grep", "codeloop.tools.search:GrepTool"),
    ("Read", "codeloop.tools.files_read:ReadTool"),
    ("Edit", "codeloop.tools.files_write:EditTool"),
    ("Write", "codeloop.tools.files_write:WriteTool"),
    ("Task", "codeloop.tools.task:TaskTool"),
)
# Tools a session adds only when it has something for them (Skill: when there are skills);
# their specs are stored like the built-ins'.
ON_DEMAND: tuple[tuple[str, str], ...] = (("Skill", "codeloop.tools.skill:SkillTool"),)
SPECS_FILE = Path(__file__).with_name("specs.json")

ToolFactory = Callable[[], AnyTool]


class LazyTool:
    """Stands in for a tool until it is used: answers `spec()` from specs.json, and loads the
    real tool for everything else."""

    def __init__(self, spec: ToolSpec, load: ToolFactory) -> None:
        self._spec = spec
        self._load = load

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def description(self) -> str:
        return self._spec.description

    @functools.cached_property
    def tool(self) -> AnyTool:
        return self._load()

    def spec(self) -> ToolSpec:
        return self._spec

    def parse(self, raw: dict[str, Any]) -> Any:
        return self.tool.parse(raw)

    def is_read_only(self, args: Any) -> bool:
        return self.tool.is_read_only(args)

    def is_concurrency_safe(self, args: Any) -> bool:
        return self.tool.is_concurrency_safe(args)

    async def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        return await self.tool.call(args, ctx)


def described(tool: AnyTool, description: str) -> AnyTool:
    """The same tool under another description (the Task tool listing the session's agents)."""
    spec = tool.spec()
    return LazyTool(ToolSpec(spec.name, description, spec.input_schema), lambda: tool)


def on_demand_tool(name: str, load: ToolFactory) -> AnyTool:
    """An ON_DEMAND tool, built by `load` on first use, its spec from specs.json."""
    return LazyTool(_stored_specs()[name], load)


def default_tools(overrides: Mapping[str, ToolFactory] | None = None) -> dict[str, AnyTool]:
    """The built-in tools; `overrides` builds some differently (e.g. Bash in a sandbox)."""
    specs = _stored_specs()
    tools: dict[str, AnyTool] = {}
    for name, target in BUILTINS:
        factory = (overrides or {}).get(name) or functools.partial(_construct, target)
        tools[name] = LazyTool(specs[name], factory)
    return tools


def _construct(target: str) -> AnyTool:
    module, _, cls = target.partition(":")
    tool: AnyTool = getattr(importlib.import_module(module), cls)()
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
