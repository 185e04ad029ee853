"""Continuing a saved session: its transcript found, read and repaired, then continued (or
forked into a new one); or a new session's transcript, under an id nobody holds yet."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from codeloop.errors import SessionError, UsageError
from codeloop.repair import repair_history
from codeloop.session_store import SessionStore
from codeloop.transcript import TranscriptWriter, claim, read_transcript
from codeloop.types import Message, new_uuid


@dataclass(frozen=True)
class Opened:
    transcript: TranscriptWriter
    history: tuple[Message, ...] = ()
    warnings: tuple[str, ...] = ()
    todos: tuple[dict[str, str], ...] = ()  # the task list the last TodoWrite left


def open_transcript(
    store: SessionStore,
    *,
    session_id: str | None = None,
    continue_latest: bool = False,
    resume: str | None = None,
    fork: bool = False,
) -> Opened:
    """A new session's transcript, or the resumed one with its history made sendable again."""
    new_id = _valid_session_id(session_id) if session_id else None
    if not (continue_latest or resume):
        if fork:
            raise UsageError("--fork-session needs --resume or --continue")
        return Opened(_new_transcript(store, new_id or new_uuid()))
    path = store.find(resume) if resume else store.latest()
    if new_id not in (None, path.stem) and not fork:
        raise UsageError("a resumed session keeps its id: add --fork-session to give it a new one")
    try:
        # Claimed before it is read: what is read is all there is until this run ends.
        claimed = None if fork else claim(path)
        loaded = read_transcript(path)
    except OSError as exc:
        raise SessionError(f"cannot read the session {path}: {exc.strerror}") from None
    messages = loaded.messages
    busy = claimed is None and not fork
    if busy:  # the other run's turn in progress is its own
        messages = messages[: _last_answer(messages)]
    history = repair_history(messages)
    warnings = loaded.warnings
    if claimed is None:
        writer = _new_transcript(store, new_id or new_uuid())
        if busy:
            warnings += (_busy(loaded.session_id, writer.session_id),)
    else:
        writer = TranscriptWriter(
            path, loaded.session_id, store.project, loaded.messages, claimed=claimed
        )
    try:
        writer.settle(history, trigger="resume")
    except OSError as exc:
        raise SessionError(f"cannot write the session {writer.path}: {exc.strerror}") from None
    return Opened(writer, history, warnings, loaded.todos)


def _busy(session_id: str, fork: str) -> str:
    return (
        f"session {session_id} is being written by another codeloop process right now: this "
        f"run goes on from its history up to its last answer, as a new session, {fork} (the "
        "two would otherwise interleave one transcript)"
    )


def _last_answer(messages: tuple[Message, ...]) -> int:
    """Where the history ends a turn: after its last assistant message that called nothing."""
    ends = [i for i, m in enumerate(messages) if m.role == "assistant" and not m.tool_uses]
    return ends[-1] + 1 if ends else 0


def _new_transcript(store: SessionStore, session_id: str) -> TranscriptWriter:
    path = store.path_for(session_id)
    if path.exists():
        raise UsageError(f"session id {session_id} is already in use (--resume {session_id})")
    return TranscriptWriter(path, session_id, store.project)


def _valid_session_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise UsageError(f"session id {text!r} is not a UUID") from None
