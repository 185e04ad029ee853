"""The file tools, Read, Write and Edit, under Claude Code's names and input schemas.

Read lives in files_read, Write and Edit (which share the read-before-write rule and the atomic
write) in files_write; import the tools from here.
"""

from codeloop.tools.files_read import ReadTool
from codeloop.tools.files_write import EditTool, WriteTool

__all__ = ["EditTool", "ReadTool", "WriteTool"]
