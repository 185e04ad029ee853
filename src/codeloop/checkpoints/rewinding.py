"""Rewinding a session: its files, its conversation, or both, to one checkpoint.

The files go through `Checkpoints.rewind`. The conversation is rebuilt from the transcript: a
checkpoint records the uuids of the history at its moment, and every message ever written is
still in the transcript (behind later compact boundaries too). Writing the shorter history is
the caller's, through the session's own transcript writer, as a boundary with the trigger
"rewind". Every rewind first records a checkpoint of the moment before it (files and history),
so rewinding to that one undoes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codeloop.checkpoints.journal import Checkpoint
from codeloop.checkpoints.manager import CheckpointError, Checkpoints, RewindResult
from codeloop.store.repair import repair_history
from codeloop.store.transcript import message_index
from codeloop.system.valueclass import valueclass
from codeloop.types import Message

REWIND_TRIGGER = "rewind"


@valueclass
class Rewound:
    """A rewind of a session: its files' result and the history to continue from."""

    target: Checkpoint
    files: RewindResult
    # The history to continue from (what a dry run would keep); None when the conversation
    # was not asked for, or the rewind was blocked.
    messages: tuple[Message, ...] | None
    messages_before: int

    @property
    def blocked(self) -> bool:
        return self.files.blocked


def rewind(
    checkpoints: Checkpoints,
    number: int,
    *,
    history: Sequence[Message],
    transcript: Path,
    files: bool = True,
    conversation: bool = True,
    dry_run: bool = False,
    force: bool = False,
) -> Rewound:
    """`history` is the conversation now: the rewind's own checkpoint records it. Raises
    CheckpointError (with a message for the user) before changing anything it cannot do."""
    if not (files or conversation):
        raise ValueError("rewind needs files, conversation, or both")
    target = checkpoints.get(number)
    messages = history_at(target, transcript) if conversation else None
    result = checkpoints.rewind(
        number,
        history=[m.uuid for m in history],
        files=files,
        dry_run=dry_run,
        force=force,
    )
    if result.blocked:
        messages = None
    return Rewound(target, result, messages, len(history))


def history_at(checkpoint: Checkpoint, transcript: Path) -> tuple[Message, ...]:
    """The history as it was when `checkpoint` was taken, made sendable again."""
    try:
        index = message_index(transcript)
    except OSError as exc:
        raise CheckpointError(f"cannot read the transcript {transcript}: {exc.strerror}") from None
    missing = [uuid for uuid in checkpoint.history if uuid not in index]
    if missing:
        raise CheckpointError(
            f"the conversation at checkpoint {checkpoint.number} cannot be rebuilt: "
            f"{len(missing)} of its messages are not in {transcript}"
        )
    return repair_history([index[uuid] for uuid in checkpoint.history])


def messages_from(transcript: Path) -> tuple[Message, ...]:
    """The history a transcript continues from now (for a rewind from another process)."""
    from codeloop.store.transcript import read_transcript

    try:
        return read_transcript(transcript).messages
    except OSError as exc:
        raise CheckpointError(f"cannot read the transcript {transcript}: {exc.strerror}") from None
