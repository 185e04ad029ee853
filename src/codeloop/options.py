"""Options: everything a caller can set for a session, and the one place a Session is built.

The CLI maps its flags onto Options; library users fill it in directly. Resuming happens here
too: the transcript is found, read, repaired, and the session continues (or forks) it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeloop.context.compact import SummaryModel
from codeloop.context.pipeline import ContextManager
from codeloop.context.system_prompt import build_system_prompt
from codeloop.context.tokens import context_limits
from codeloop.deps import LoopDeps
from codeloop.models.catalog import model_info
from codeloop.models.factory import fallback_model_name, resolve_model
from codeloop.models.retry import RetryPolicy
from codeloop.permissions.policy import PermissionMode, Policy, parse_tool_list
from codeloop.repair import repair_history
from codeloop.session import Session, SessionConfig
from codeloop.session_store import SessionError, SessionStore
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from codeloop.transcript import TranscriptWriter, read_transcript
from codeloop.types import Message, new_uuid


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
    max_budget_usd: float | None = None
    # Used when the model stays overloaded (same provider, e.g. a smaller Claude).
    fallback_model: str | None = None
    token_budget: int | None = None
    # Write every model call to this cassette; or serve the calls from one, with no model.
    record: str | None = None
    replay: str | None = None
    # A new session's id (a UUID), or with fork_session the fork's; default: a fresh one.
    session_id: str | None = None
    # Continue the project's latest session, or the session `resume` names (id or its start).
    continue_conversation: bool = False
    resume: str | None = None
    # With continue/resume: copy the history into a new session instead of appending to it.
    fork_session: bool = False
    # None: the process environment.
    env: Mapping[str, str] | None = None


@dataclass(frozen=True)
class _Opened:
    transcript: TranscriptWriter
    history: tuple[Message, ...] = ()
    warnings: tuple[str, ...] = ()


def build_session(options: Options) -> Session:
    """Resolve the model, tools, workspace and policy; open the transcript. Raises ConfigError,
    SessionError or ValueError with a message meant for the user."""
    env = os.environ if options.env is None else options.env
    cwd = (options.cwd or Path.cwd()).resolve()
    extra_dirs = [_existing_dir(cwd, d) for d in options.add_dirs]
    client, model = resolve_model(
        options.model, env, record=options.record, replay=options.replay, cwd=cwd
    )
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
    info = model_info(model, env)
    config = SessionConfig(
        model=model,
        system=system,
        max_tokens=info.default_output_tokens,
        max_output_tokens=info.max_output_tokens,
        max_turns=options.max_turns,
        max_budget_usd=options.max_budget_usd,
        fallback_model=(
            fallback_model_name(options.fallback_model, client.provider, env)
            if options.fallback_model
            else None
        ),
        token_budget=options.token_budget,
        retry=RetryPolicy.from_env(dict(env)),
        policy=policy,
    )
    workspace = Workspace(cwd=cwd, extra_dirs=extra_dirs)
    store = SessionStore(cwd, env)
    opened = _open_transcript(options, store)
    specs = tuple(tool.spec() for tool in tools.values())
    context = ContextManager(
        SummaryModel(client.stream, model, system, specs),
        context_limits(model, env),
        workspace,
        store.directory / opened.transcript.session_id / "tool-results",
    )
    deps = LoopDeps(call_model=client.stream, reactive_compact=context.reactive_compact)
    return Session(
        client,
        tools,
        workspace,
        config,
        deps=deps,
        history=opened.history,
        transcript=opened.transcript,
        notices=opened.warnings,
        context=context,
    )


def _open_transcript(options: Options, store: SessionStore) -> _Opened:
    """A new session's transcript, or the resumed one with its history made sendable again."""
    new_id = _valid_session_id(options.session_id) if options.session_id else None
    resuming = options.continue_conversation or bool(options.resume)
    if not resuming:
        if options.fork_session:
            raise ValueError("--fork-session needs --resume or --continue")
        return _Opened(_new_transcript(store, new_id or new_uuid()))
    path = store.find(options.resume) if options.resume else store.latest()
    try:
        loaded = read_transcript(path)
    except OSError as exc:
        raise SessionError(f"cannot read the session {path}: {exc.strerror}") from None
    history = repair_history(loaded.messages)
    if options.fork_session:
        writer = _new_transcript(store, new_id or new_uuid())
    elif new_id not in (None, loaded.session_id):
        raise ValueError("a resumed session keeps its id: add --fork-session to give it a new one")
    else:
        writer = TranscriptWriter(path, loaded.session_id, store.project, loaded.messages)
    try:
        writer.settle(history, trigger="resume")
    except OSError as exc:
        raise SessionError(f"cannot write the session {writer.path}: {exc.strerror}") from None
    return _Opened(writer, history, loaded.warnings)


def _new_transcript(store: SessionStore, session_id: str) -> TranscriptWriter:
    path = store.path_for(session_id)
    if path.exists():
        raise ValueError(f"session id {session_id} is already in use (--resume {session_id})")
    return TranscriptWriter(path, session_id, store.project)


def _valid_session_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise ValueError(f"session id {text!r} is not a UUID") from None


def _existing_dir(cwd: Path, raw: str) -> Path:
    path = (cwd / Path(raw).expanduser()).resolve()
    if not path.is_dir():
        raise ValueError(f"--add-dir {raw}: no such directory")
    return path
