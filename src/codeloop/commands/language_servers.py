"""/lsp: the language servers plugins configure — the files each serves and how it is doing
(not started: servers start with the first file of their language)."""

from __future__ import annotations

from codeloop.commands import Command, CommandContext, Submit


async def _lsp(ctx: CommandContext, args: str) -> Submit | None:
    servers = ctx.session.language_servers
    if servers is None:
        ctx.ui.show(
            "No language servers in this session: a plugin configures them (`lspServers` in "
            "its plugin.json, or .lsp.json)."
        )
        return None
    lines = ["Language servers (each starts with the first file of its language):"]
    for config, (name, state) in zip(servers.configs, servers.status(), strict=True):
        files = ", ".join(sorted(config.extension_to_language))
        lines.append(f"  {name}  {files}  {state}")
    ctx.ui.show("\n".join(lines))
    return None


COMMAND = Command("lsp", "the language servers, the files they serve and their state", _lsp)
