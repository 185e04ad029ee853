"""The built-in tools, in the order models see them."""

from __future__ import annotations

from codeloop.tools.base import AnyTool
from codeloop.tools.bash import BashTool
from codeloop.tools.files import EditTool, ReadTool, WriteTool
from codeloop.tools.search import GlobTool, GrepTool


def default_tools() -> dict[str, AnyTool]:
    tools: list[AnyTool] = [BashTool(), GlobTool(), GrepTool(), ReadTool(), EditTool(), WriteTool()]
    return {tool.name: tool for tool in tools}
