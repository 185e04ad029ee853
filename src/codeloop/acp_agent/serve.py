"""`codeloop acp [flags]`: one editor connection over stdin/stdout, until the editor closes
it (or SIGTERM); every session then stops, and the process exits 0."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import signal
from typing import cast

from codeloop.errors import UsageError
from codeloop.frontdoor.session_flags import refuse_unsupported

# Flags of other modes, which the editor does instead (prompts, which session, output) or
# which have no place in an editor's sessions: each refused by name, never ignored.
NOT_FOR_ACP = {
    "prompt": "-p/--print",
    "words": "a prompt",
    "worktree": "--worktree",
    "continue_conversation": "--continue",
    "resume": "--resume",
    "fork_session": "--fork-session",
    "session_id": "--session-id",
    "init": "--init",
    "init_only": "--init-only",
    "maintenance": "--maintenance",
    "json_schema": "--json-schema",
    "include_partial_messages": "--include-partial-messages",
}
# Given, these differ from their defaults this way.
UNSET: dict[str, object] = {"prompt": None, "worktree": None, "resume": None}


def run_acp(args: argparse.Namespace) -> int:
    given = [
        flag
        for dest, flag in NOT_FOR_ACP.items()
        if (getattr(args, dest) is not None if dest in UNSET else bool(getattr(args, dest)))
    ]
    if args.output_format != "text" or args.input_format != "text":
        given.append("--output-format/--input-format")
    if given:
        raise UsageError(
            f"codeloop acp does not take {', '.join(given)}: the editor sends the prompts and "
            "picks the sessions, and stdout speaks ACP"
        )
    refuse_unsupported(args)
    if importlib.util.find_spec("acp") is None:
        raise UsageError("codeloop acp needs the acp extra: pip install 'codeloop[acp]'")
    from codeloop.acp_agent.stdio import claim_stdio, quiet_sdk_logs

    proto_in, proto_out = claim_stdio()
    quiet_sdk_logs()
    return asyncio.run(_serve(args, proto_in, proto_out))


async def _serve(args: argparse.Namespace, proto_in: int, proto_out: int) -> int:
    from acp.agent.connection import AgentSideConnection
    from acp.interfaces import Agent

    from codeloop.acp_agent.agent import AcpAgent
    from codeloop.acp_agent.stdio import protocol_streams

    reader, writer = await protocol_streams(proto_in, proto_out)
    agent = AcpAgent(args)
    # The SDK answers -32601 for the methods an agent leaves out (session/list, ...).
    connection = AgentSideConnection(cast("Agent", agent), writer, reader, listening=False)
    listening = asyncio.ensure_future(connection.listen())
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, listening.cancel)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await listening
    finally:
        await agent.close_all()
        with contextlib.suppress(Exception):
            await connection.close()
    return 0
