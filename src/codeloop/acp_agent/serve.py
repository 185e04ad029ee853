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

# Flags of other modes that make no sense for an agent an editor drives.
NOT_FOR_ACP = ("prompt", "worktree", "input_format")


def run_acp(args: argparse.Namespace) -> int:
    refused = [f for f in NOT_FOR_ACP if getattr(args, f, None) not in (None, "", "text")]
    if args.words or refused:
        raise UsageError("codeloop acp takes flags only: the editor sends the prompts")
    if args.output_format != "text":
        raise UsageError("codeloop acp speaks ACP on stdout: --output-format does not apply")
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
