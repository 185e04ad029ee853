"""Continuing a saved session: its transcript found, read and repaired, then continued (or
forked into a new one); or a new session's transcript, under an id nobody holds yet."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from codeloop.errors import SessionError, UsageError
from codeloop.store.repair import Repaired, repair
from codeloop.store.session_store import SessionStore
from codeloop.store.transcript import Transcript, TranscriptWriter, claim, read_transcript
from codeloop.system.valueclass import valueclass
from codeloop.types import Message, new_uuid


@valueclass
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
    except OSError as exc:  # opening it to write (or ending a cut-short line) failed
        doing = "write" if os.access(path, os.R_OK) else "read"
        raise SessionError(f"cannot {doing} the session {path}: {exc.strerror}") from None
    try:
        loaded = read_transcript(path)
    except OSError as exc:
        if claimed is not None:
            os.close(claimed)
        raise SessionError(f"cannot read the session {path}: {exc.strerror}") from None
    messages = loaded.messages
    busy = claimed is None and not fork
    if busy:  # the other run's turn in progress is its own
        messages = messages[: _last_answer(messages)]
    repaired = repair(messages)
    history = repaired.history
    warnings = _recovered(path, loaded, repaired)
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


# Lines of a damaged transcript named one by one; the others are counted.
SHOWN_LINE_WARNINGS = 5


def _recovered(path: Path, loaded: Transcript, repaired: Repaired) -> tuple[str, ...]:
    """What a resume could not take as it was written, and what it made of it: nothing when
    the transcript was whole."""
    warnings = loaded.warnings[:SHOWN_LINE_WARNINGS]
    if len(loaded.warnings) > SHOWN_LINE_WARNINGS:
        more = len(loaded.warnings) - SHOWN_LINE_WARNINGS
        warnings += (f"{path.name}: {more} more lines like these",)
    session = f"session {loaded.session_id}"
    if loaded.size == 0:
        return (
            f"{session}: its transcript {path} is empty (0 bytes: nothing was ever written to "
            "it, as when the disk was full): no earlier message could be recovered, so this "
            "run starts the conversation afresh",
        )
    if not repaired.kept:
        return (
            *warnings,
            f"{session}: no message of its transcript {path} could be read "
            f"({loaded.skipped} lines skipped): the earlier conversation is lost, so this run "
            "starts it afresh",
        )
    done = [
        f"skipped {loaded.skipped} unreadable line(s)" if loaded.skipped else "",
        f"replaced bytes that were not UTF-8 in {loaded.mended} line(s)" if loaded.mended else "",
        f"left out {repaired.dropped} empty or repeated message(s)" if repaired.dropped else "",
        f"put in {repaired.notes} note(s) where messages were lost" if repaired.notes else "",
    ]
    if not any(done):
        return warnings
    summary = "; ".join([f"recovered {repaired.kept} message(s)", *filter(None, done)])
    return (*warnings, f"{session}: repaired its transcript {path} to resume it: {summary}")


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
