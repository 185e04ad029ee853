"""Options: everything a caller can set for a session, and the one place a Session is built.

The CLI maps its flags onto Options; library users fill it in directly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeloop.context.system_prompt import build_system_prompt
from codeloop.models.catalog import model_info
from codeloop.models.factory import resolve_model
from codeloop.permissions.policy import PermissionMode, Policy, parse_tool_list
from codeloop.session import Session, SessionConfig
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools


@dataclass
class Options:
    model: str | None = None
    cwd: Path | None = None
    add_dirs: Sequence[str] = ()
    permission_mode: PermissionMode = "default"
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    session_id: str | None = None
    # None: the process environment.
    env: Mapping[str, str] | None = None


def build_session(options: Options) -> Session:
    """Resolve the model, tools, workspace and policy. Raises ConfigError or ValueError with a
    message meant for the user."""
    env = os.environ if options.env is None else options.env
    cwd = (options.cwd or Path.cwd()).resolve()
    extra_dirs = [_existing_dir(cwd, d) for d in options.add_dirs]
    client, model = resolve_model(options.model, env)
    tools = default_tools()
    allowed = parse_tool_list(options.allowed_tools)
    disallowed = parse_tool_list(options.disallowed_tools)
    for name in allowed | disallowed:
        if name not in tools:
            raise ValueError(f"unknown tool {name!r} (tools: {', '.join(tools)})")
    policy = Policy(options.permission_mode, allowed, disallowed)
    system = build_system_prompt(
        cwd,
        model,
        extra_dirs=extra_dirs,
        override=options.system_prompt,
        append=options.append_system_prompt,
    )
    config = SessionConfig(
        model=model,
        system=system,
        max_tokens=model_info(model, env).default_output_tokens,
        max_turns=options.max_turns,
        policy=policy,
    )
    workspace = Workspace(cwd=cwd, extra_dirs=extra_dirs)
    return Session(client, tools, workspace, config, session_id=options.session_id)


def _existing_dir(cwd: Path, raw: str) -> Path:
    path = (cwd / Path(raw).expanduser()).resolve()
    if not path.is_dir():
        raise ValueError(f"--add-dir {raw}: no such directory")
    return path
