"""The line under the input: model, folder, permission mode, context used, cost, the prompt
cache's hit rate — or, when the settings have a `statusLine` command, that command's first
line of output (Claude Code's contract: the session as JSON on stdin)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeloop.session import Session

STATUS_TIMEOUT = 5.0


def footer(session: Session, width: int) -> str:
    from codeloop.commands.reports import context_parts

    parts = context_parts(session)
    folder = _home_relative(session.workspace.roots[0])
    fields = [
        session.config.model,
        folder,
        session.config.policy.mode,
        f"context {parts.percent:.0f}%",
        f"${session.cost_usd:.2f}",
    ]
    usage = session.usage
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    cache = f"cache {usage.cache_read_input_tokens / prompt:.0%}" if prompt else ""
    if cache:
        fields.append(cache)  # how much of what was sent came from the prompt cache
    text = " · ".join(fields)
    if len(text) > width:  # narrow: drop the folder and the cache rate first, then the model
        text = " · ".join(f for f in fields if f not in (folder, cache))
    if len(text) > width:
        text = " · ".join(f for f in fields[2:] if f != cache)
    return text[:width]


def status_input(session: Session, started: float) -> dict[str, Any]:
    """What a statusLine command reads on stdin (Claude Code's fields)."""
    from codeloop._version import __version__
    from codeloop.commands.reports import context_parts

    parts = context_parts(session)
    root = str(session.workspace.roots[0])
    extensions = session.extensions
    style = getattr(getattr(extensions, "style", None), "name", None) or "default"
    return {
        "hook_event_name": "Status",
        "session_id": session.session_id,
        "transcript_path": str(session.transcript.path) if session.transcript else "",
        "cwd": str(session.workspace.cwd),
        "model": {"id": session.config.model, "display_name": session.config.model},
        "workspace": {"current_dir": str(session.workspace.cwd), "project_dir": root},
        "version": __version__,
        "output_style": {"name": style},
        "cost": {
            "total_cost_usd": session.cost_usd,
            "total_duration_ms": round((time.monotonic() - started) * 1000),
            "total_api_duration_ms": round(session.api_duration_ms),
        },
        "context_window": {
            "context_window_size": parts.window,
            "used_tokens": parts.used,
            "used_percentage": round(parts.percent, 1),
        },
        "permission_mode": session.config.policy.mode,
    }


async def run_status_line(command: str, data: dict[str, Any], cwd: Path) -> str:
    """The command's first line of output ("" when it fails or takes too long)."""
    try:
        proc = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError:
        return ""
    try:
        out, _ = await asyncio.wait_for(proc.communicate(json.dumps(data).encode()), STATUS_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return ""
    lines = out.decode("utf-8", "replace").splitlines()
    return lines[0] if lines else ""


def _home_relative(path: Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home) else text
