"""/mcp: the session's MCP servers — where each comes from, how it is doing, its tools — and
starting one again (`/mcp reconnect NAME`; in the UI, a picker)."""

from __future__ import annotations

from codeloop.commands import Command, CommandContext, CommandError, CommandUsageError, Submit

USAGE = "/mcp [reconnect [NAME]]"


async def _mcp(ctx: CommandContext, args: str) -> Submit | None:
    from codeloop.mcp.health import status_line

    session = ctx.session
    manager = session.mcp
    if manager is None:
        ctx.ui.show(
            "No MCP servers in this session: add one with `codeloop mcp add`, or in the "
            "project's .mcp.json."
        )
        return None
    words = args.split()
    if (words and words[0] != "reconnect") or len(words) > 2:
        raise CommandUsageError(f"{USAGE}, not {args!r}")
    await session.start_servers()
    names = [c.name for c in manager.configs]
    if words:
        if len(words) == 2:
            name = words[1]
        elif ctx.ui.interactive:
            picked = await ctx.ui.choose("Reconnect which MCP server?", names)
            if picked is None:
                return None
            name = names[picked]
        else:
            raise CommandUsageError("name the server: /mcp reconnect NAME")
        if name not in manager.connections:
            raise CommandError(f"no MCP server {name!r} here (/mcp lists them)")
        await manager.reconnect(name)
        ctx.ui.show(f"{name}: {status_line(manager.connections[name])}")
        return None
    lines = ["MCP servers:"]
    for server in manager.statuses():
        conn = manager.connections.get(server.name)
        state = status_line(conn) if conn is not None else "… starting"
        lines.append(f"  {server.name} ({server.scope}): {state}")
        if server.tools:
            shown = ", ".join(t.split("__", 2)[-1] for t in server.tools[:8])
            more = f" and {len(server.tools) - 8} more" if len(server.tools) > 8 else ""
            lines.append(f"      tools: {shown}{more}")
    lines.append("Reconnect one with /mcp reconnect [NAME].")
    ctx.ui.show("\n".join(lines))
    return None


COMMAND = Command("mcp", "the MCP servers, their status and tools; reconnect one", _mcp, USAGE[5:])
