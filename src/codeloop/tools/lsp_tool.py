"""LSP: code intelligence from the language servers plugins configure (`lspServers`), in Claude
Code's schema. Offered only when a server is configured; the server for a file's language
starts on the first call for such a file. Read-only: it runs beside other readers and needs no
permission in the default mode."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput
from codeloop.tools.services import ToolServices

Operation = Literal[
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
]


class LspInput(ToolInput):
    operation: Annotated[Operation, Arg("The LSP operation to perform.")]
    file_path: Annotated[
        str,
        Arg(
            "The file to operate on, absolute or relative to the working directory.",
            alias="filePath",
        ),
    ]
    line: Annotated[int, Arg("The line number, 1-based as editors show it.", minimum=1)]
    character: Annotated[
        int, Arg("The character offset in the line, 1-based as editors show it.", minimum=1)
    ]
    query: Annotated[
        str | None, Arg("What to search for (workspaceSymbol; empty lists every symbol).")
    ] = None


DESCRIPTION = """\
Ask the language server for code intelligence: semantic answers across files, not text \
matches.

Operations:
- goToDefinition: where the symbol at the position is defined
- findReferences: every reference to the symbol, across files
- hover: the symbol's type and documentation
- documentSymbol: the symbols (classes, functions, variables) of the file
- workspaceSymbol: symbols anywhere in the workspace whose name matches `query`
- goToImplementation: the implementations of an interface or abstract method
- prepareCallHierarchy: the function or method at the position, as a call hierarchy item
- incomingCalls: the functions and methods that call the one at the position
- outgoingCalls: the functions and methods the one at the position calls

line and character are 1-based, as editors show them; put the position on the symbol's \
name. Paths in the results are relative to the working directory. Works for the file \
types a configured language server handles."""


class LspTool(Tool[LspInput]):
    name: ClassVar[str] = "LSP"
    description: ClassVar[str] = DESCRIPTION
    input_model = LspInput

    def __init__(self, services: ToolServices | None = None) -> None:
        self.services = services or ToolServices()

    @classmethod
    def from_services(cls, services: ToolServices) -> LspTool:
        return cls(services)

    def is_read_only(self, args: LspInput) -> bool:
        return True

    def warm(self) -> None:
        """The protocol library and the operations load in the preload thread, not in the
        first call."""
        import codeloop.lsp.answers  # noqa: F401

    async def call(self, args: LspInput, ctx: ToolContext) -> ToolResult:
        from codeloop.lsp.errors import LspError
        from codeloop.lsp.servers import load_protocol

        await load_protocol()
        from codeloop.lsp.answers import answer

        servers = self.services.language_servers
        if servers is None:
            return ToolResult.error("No language server is configured in this session.")
        path = ctx.workspace.resolve(args.file_path)
        if not path.is_file():
            return ToolResult.error(f"File does not exist: {path}")
        try:
            text = await answer(
                servers, args.operation, path, args.line, args.character, args.query
            )
        except LspError as exc:
            return ToolResult.error(str(exc))
        return ToolResult(text)
