"""Resuming a damaged transcript: whatever happened to the file, the history sent next is one
the Messages API accepts (the fake server's validation), and no message whose line survived
intact is lost.

The session is written by the real TranscriptWriter (tool rounds, a reminder, the task list,
a compaction, more rounds after it); the damage is random: bytes flipped, lines deleted,
duplicated anywhere, replaced by garbage, the file cut short.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codeloop.store.resume import open_transcript
from codeloop.store.session_store import SessionStore
from codeloop.store.transcript import TranscriptWriter
from codeloop.testing.history_check import history_problems
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage, message_to_dict

SESSION = "6a1f0c2e-8d4b-4f3a-9e21-5c7d8b9a0e13"


def call(*ids: str) -> Message:
    uses = tuple(ToolUseBlock(i, "Bash", {"command": f"echo {i}"}) for i in ids)
    return Message("assistant", (TextBlock("Running."), *uses))


def answer(*ids: str) -> Message:
    return Message("user", tuple(ToolResultBlock(i, f"out {i}") for i in ids))


def session_lines() -> list[bytes]:
    """A finished session's transcript, as the writer wrote it: its lines."""
    with tempfile.TemporaryDirectory() as folder:
        return _written(Path(folder))


def _written(folder: Path) -> list[bytes]:
    path = folder / "session.jsonl"
    writer = TranscriptWriter(path, SESSION, folder)
    before = [
        Message.user("list the files"),
        call("toolu_1"),
        answer("toolu_1"),
        Message.user("<system-reminder>be brief</system-reminder>", is_meta=True),
        call("toolu_2", "toolu_3"),
        answer("toolu_2", "toolu_3"),
        Message("assistant", (TextBlock("Two files."),)),
    ]
    for message in before:
        writer.append(message, model="claude-sonnet-4-5", usage=Usage(10, 5))
    writer.note("todos", todos=[{"content": "x", "status": "pending", "activeForm": "x"}])
    writer.compact([Message.user("Summary: two files listed."), before[-1]], trigger="manual")
    for message in (Message.user("now count them"), call("toolu_4"), answer("toolu_4")):
        writer.append(message)
    writer.append(Message("assistant", (TextBlock("There are two."),)))
    writer.close()
    return path.read_bytes().split(b"\n")[:-1]


LINES = session_lines()


@dataclass(frozen=True)
class Flip:
    line: int
    at: int
    byte: int

    def apply(self, lines: list[bytes]) -> None:
        i = self.line % len(lines)
        raw = bytearray(lines[i] or b" ")
        raw[self.at % len(raw)] = self.byte
        lines[i] = bytes(raw)


@dataclass(frozen=True)
class Delete:
    line: int

    def apply(self, lines: list[bytes]) -> None:
        if len(lines) > 1:
            del lines[self.line % len(lines)]


@dataclass(frozen=True)
class Duplicate:
    line: int
    to: int

    def apply(self, lines: list[bytes]) -> None:
        lines.insert(self.to % (len(lines) + 1), lines[self.line % len(lines)])


@dataclass(frozen=True)
class Garble:
    line: int
    garbage: bytes

    def apply(self, lines: list[bytes]) -> None:
        lines[self.line % len(lines)] = self.garbage


Damage = Flip | Delete | Duplicate | Garble
index = st.integers(min_value=0, max_value=200)
damages = st.one_of(
    st.builds(Flip, index, st.integers(min_value=0, max_value=5000), st.integers(0, 255)),
    st.builds(Delete, index),
    st.builds(Duplicate, index, index),
    st.builds(Garble, index, st.binary(max_size=40)),
)


def damaged(harm: list[Damage], cut: int | None) -> bytes:
    lines = list(LINES)
    for damage in harm:
        damage.apply(lines)
    data = b"".join(line + b"\n" for line in lines)
    return data[: cut % (len(data) + 1)] if cut is not None else data


def required(data: bytes) -> set[str]:
    """The messages whose lines are intact and that the history must hold: those after the
    last line that may be a boundary (intact or not) and with no copy before it, and what
    that boundary keeps if it is intact."""
    whole = data.split(b"\n")[:-1]  # a last piece without its newline was cut short
    originals = {line: json.loads(line) for line in LINES}
    marks = [k for k, raw in enumerate(whole) if b"compact_boundary" in raw]
    last = marks[-1] if marks else -1
    wanted = set()
    if last >= 0 and whole[last] in originals:
        wanted = {e["uuid"] for e in originals[whole[last]]["messages"]}
    before = b"\n".join(whole[: last + 1])
    for raw in whole[last + 1 :]:
        if raw in originals and originals[raw]["type"] in ("user", "assistant"):
            uuid = originals[raw]["uuid"]
            if uuid.encode() not in before:  # not a copy of a line the boundary replaced
                wanted.add(uuid)
    return wanted


def resumed(data: bytes) -> tuple[Message, ...]:
    with tempfile.TemporaryDirectory() as home:
        project = Path(home) / "project"
        project.mkdir()
        store = SessionStore(project, {"CODELOOP_HOME": str(Path(home) / "data")})
        store.directory.mkdir(parents=True)
        store.path_for(SESSION).write_bytes(data)
        opened = open_transcript(store, continue_latest=True)
        opened.transcript.close()
        return opened.history


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(damages, max_size=6), st.none() | st.integers(min_value=0))
@example([Garble(0, b"\x00garbage")], None)  # the first line, the user's prompt
@example([Flip(4, 30, 0xFF)], None)  # one bad byte in a middle line
@example([], 0)  # nothing was ever written
@example([Duplicate(8, 100)], None)  # the compaction boundary again at the end
def test_any_damage_resumes_to_a_history_the_api_accepts(
    harm: list[Damage], cut: int | None
) -> None:
    data = damaged(harm, cut)
    history = resumed(data)
    request = [message_to_dict(m) for m in history] + [{"role": "user", "content": "go on"}]
    assert history_problems(request) == []
    kept = {m.uuid for m in history}
    assert required(data) <= kept


def test_the_undamaged_transcript_resumes_to_what_was_said() -> None:
    history = resumed(damaged([], None))
    assert [m.text for m in history] == [
        "Summary: two files listed.",
        "Two files.",
        "now count them",
        "Running.",
        "",
        "There are two.",
    ]
