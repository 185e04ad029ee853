"""Transcript files: what a line holds, reading back, cut-short lines, boundaries, migration."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from codeloop.events import CompactBoundary, ResultRecord
from codeloop.store.transcript import FORMAT_VERSION, TranscriptWriter, claim, read_transcript
from codeloop.types import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from codeloop.usage.ledger import read_ledger

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
SESSION = "3d6f0a8e-6f43-4c1a-9b51-2f7c1e0d9a11"


def conversation() -> list[Message]:
    call = ToolUseBlock("toolu_1", "Read", {"file_path": "a.py"})
    return [
        Message.user("read a.py"),
        Message("assistant", (ThinkingBlock("look first", "sig"), TextBlock("Reading."), call)),
        Message(
            "user",
            (
                ToolResultBlock("toolu_1", "print(1)"),
                ToolResultBlock("toolu_1", (TextBlock("x"), ImageBlock("image/png", "AAAA")), True),
            ),
        ),
        Message.user("keep it short", is_meta=True),
        Message("assistant", (TextBlock("It prints 1."),)),
    ]


def write(path: Path, messages: list[Message], cwd: Path) -> TranscriptWriter:
    writer = TranscriptWriter(path, SESSION, cwd)
    for i, message in enumerate(messages):
        if message.role == "assistant":
            writer.append(
                message,
                model="claude-sonnet-4-5",
                usage=Usage(100 * (i + 1), 10, 5, 7),
                stop_reason="tool_use",
                response_id=f"msg_{i}",
            )
        else:
            writer.append(message)
    return writer


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_line_names_the_branch_checked_out_as_it_is_written(tmp_path: Path) -> None:
    """The repository is found once (again at each turn boundary while there is none); the
    branch is read for every line, so a checkout mid-session shows from the next line on."""
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, SESSION, tmp_path)
    writer.append(Message.user("before git init"))
    subprocess.run(["git", "init", "-q", "-b", "first", str(tmp_path)], check=True)
    writer.sync()
    writer.append(Message.user("after"))
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "-b", "second"], check=True)
    writer.append(Message.user("switched"))
    writer.close()
    assert [line["gitBranch"] for line in lines(path)] == [None, "first", "second"]


def test_round_trip_keeps_every_message_exactly(tmp_path: Path) -> None:
    path = tmp_path / "t" / f"{SESSION}.jsonl"
    messages = conversation()
    write(path, messages, tmp_path).close()
    transcript = read_transcript(path)
    assert transcript.messages == tuple(messages)  # content, uuids and is_meta
    assert transcript.session_id == SESSION
    assert transcript.first_prompt == "read a.py"
    requests = read_ledger(path).requests  # answers without request lines: an older writer's
    assert [r.usage for r in requests] == [Usage(200, 10, 5, 7), Usage(500, 10, 5, 7)]
    assert {r.model for r in requests} == {"claude-sonnet-4-5"}
    assert all(r.segments is None for r in requests)
    assert transcript.warnings == ()


def test_line_envelope(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "feature/x", str(tmp_path)], check=True)
    path = tmp_path / "t.jsonl"
    messages = conversation()
    write(path, messages[:2], tmp_path)
    first, second = lines(path)
    assert first["type"] == "user" and second["type"] == "assistant"
    assert first["uuid"] == messages[0].uuid and first["parentUuid"] is None
    assert second["parentUuid"] == messages[0].uuid
    assert first["sessionId"] == SESSION and first["version"] == FORMAT_VERSION
    assert first["cwd"] == str(tmp_path) and first["gitBranch"] == "feature/x"
    assert str(first["timestamp"]).endswith("Z")
    assert "isMeta" not in first
    assert second["message"] == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "look first", "signature": "sig"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}},
        ],
        "stop_reason": "tool_use",
        "usage": Usage(200, 10, 5, 7).to_dict(),
    }


def test_each_line_is_on_disk_as_soon_as_it_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, SESSION, tmp_path)
    assert not path.exists()  # nothing written, no file
    for count, message in enumerate(conversation(), 1):
        writer.append(message)
        assert len(read_transcript(path).messages) == count  # no buffer to flush
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_line_cut_short_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    messages = conversation()
    write(path, messages[:2], tmp_path).close()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"type":"user","uuid":"u3","message":{"role":"us')
    transcript = read_transcript(path)
    assert transcript.messages == tuple(messages[:2])
    (warning,) = transcript.warnings
    assert "line 3 is cut short" in warning

    # a writer continuing the file puts the cut piece on a line of its own
    writer = TranscriptWriter(path, SESSION, tmp_path, transcript.messages)
    writer.append(messages[2])
    writer.close()
    again = read_transcript(path)
    assert again.messages == tuple(messages[:3])
    assert len(again.warnings) == 1 and "line 3 is not a JSON object" in again.warnings[0]


def test_unreadable_lines_never_stop_the_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = conversation()[0]
    write(path, [good], tmp_path).close()
    with path.open("a") as file:
        file.write("[1, 2]\n")  # JSON, but not a line
        file.write(
            json.dumps({"type": "user", "uuid": "x", "version": 1, "message": {"role": "system"}})
            + "\n"
        )
        file.write(json.dumps({"type": "summary", "summary": "a later line type"}) + "\n")
        file.write(json.dumps({"type": "user", "uuid": "y", "version": "two"}) + "\n")
        file.write("\n")
    transcript = read_transcript(path)
    assert transcript.messages == (good,)
    assert len(transcript.warnings) == 3


def test_bytes_that_are_not_utf8_are_replaced_not_the_message_lost(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    messages = conversation()
    write(path, messages, tmp_path).close()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"Reading.", b"Rea\xffing.", 1))
    transcript = read_transcript(path)
    assert len(transcript.messages) == len(messages)
    assert transcript.messages[1].content[1] == TextBlock("Rea\ufffding.")
    assert (transcript.mended, transcript.skipped) == (1, 0)
    (warning,) = transcript.warnings
    assert "line 2 has bytes that are not UTF-8" in warning


def test_a_line_written_twice_is_read_once_in_its_place(tmp_path: Path) -> None:
    """A copy of a boundary further on would drop what was said after it; a copy of a message
    further back would lose its place between its call and its result."""
    path = tmp_path / "t.jsonl"
    messages = conversation()
    writer = write(path, messages[:2], tmp_path)
    writer.compact(messages[:2], trigger="manual")
    writer.append(messages[2])
    writer.close()
    first, second, boundary, third = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(third + first + second + boundary + boundary + third + boundary)
    transcript = read_transcript(path)
    assert transcript.messages == tuple(messages[:3])
    assert transcript.skipped == 3
    assert all("repeats another line" in w for w in transcript.warnings)


def test_a_boundary_entry_that_cannot_be_read_costs_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    messages = conversation()
    writer = write(path, [], tmp_path)
    writer.compact(messages[:2], trigger="manual")
    writer.close()
    line = json.loads(path.read_bytes())
    line["messages"][0]["message"]["role"] = "narrator"
    path.write_text(json.dumps(line) + "\n")
    transcript = read_transcript(path)
    assert transcript.messages == (messages[1],)
    (warning,) = transcript.warnings
    assert "line 1 message 0 could not be read" in warning


def test_compact_boundary_replaces_the_history_but_not_the_cost(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    messages = conversation()
    writer = write(path, messages, tmp_path)
    summary = Message.user("Summary of the conversation so far.", is_meta=True)
    folded = ResultRecord("toolu_1", "Read", "/src/a.py", 9_000, "folded")
    saved = ResultRecord("toolu_2", "Bash", "make", 12_000, "saved", "/r/toolu_2.txt")
    writer.folded([folded])
    boundary = CompactBoundary(
        "auto", 150_000, 9_000, len(messages), "the summary", (summary,), (), (folded, saved)
    )
    writer.compact([summary], trigger="auto", boundary=boundary)
    after = Message.user("next question")
    writer.append(after)
    transcript = read_transcript(path)
    assert transcript.messages == (summary, after)
    assert len(read_ledger(path).requests) == 2  # the money was spent before the boundary too
    fold_line, boundary_line = lines(path)[len(messages) : len(messages) + 2]
    assert fold_line["subtype"] == "microcompact"
    assert fold_line["toolResults"] == [
        {
            "toolUseId": "toolu_1",
            "tool": "Read",
            "target": "/src/a.py",
            "tokens": 9_000,
            "fate": "folded",
        }
    ]
    assert boundary_line["type"] == "system" and boundary_line["subtype"] == "compact_boundary"
    assert boundary_line["compactMetadata"] == {
        "trigger": "auto",
        "preTokens": 150_000,
        "postTokens": 9_000,
        "messagesSummarized": len(messages),
        "kept": [],
        "summary": "the summary",
        "toolResults": [folded.to_dict(), saved.to_dict()],
    }
    assert boundary_line["compactMetadata"]["toolResults"][1]["path"] == "/r/toolu_2.txt"
    assert lines(path)[-1]["parentUuid"] == summary.uuid


def test_settle_appends_only_what_is_new(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    messages = conversation()
    writer = write(path, messages[:2], tmp_path)
    writer.settle(messages[:4], trigger="loop")
    assert len(lines(path)) == 4
    writer.settle(messages[:4], trigger="loop")  # nothing new, nothing written
    assert len(lines(path)) == 4
    # the loop sends a folded view of a saved result, and leaves out older messages: the
    # transcript keeps them as they were and gets only the new answer
    folded = replace(messages[2], content=(ToolResultBlock("toolu_1", "[folded]"),))
    writer.settle([messages[1], folded, messages[3], messages[4]], trigger="loop")
    assert len(lines(path)) == 5
    assert read_transcript(path).messages == tuple(messages)


def test_settle_writes_a_rebuilt_history_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    messages = conversation()
    writer = write(path, messages[:3], tmp_path)
    inserted = Message.user("a message put between saved ones")
    rebuilt = [messages[0], inserted, *messages[1:3]]
    writer.settle(rebuilt, trigger="resume")
    last = lines(path)[-1]
    assert last["subtype"] == "compact_boundary"
    assert last["compactMetadata"] == {"trigger": "resume", "preTokens": None}
    assert read_transcript(path).messages == tuple(rebuilt)


def test_version_0_lines_are_upgraded(tmp_path: Path) -> None:
    transcript = read_transcript(FIXTURES / "v0_session.jsonl")
    assert transcript.warnings == ()
    assert [m.uuid for m in transcript.messages] == [f"v0-msg-{i}" for i in range(1, 6)]
    assert [m.role for m in transcript.messages] == [
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
    ]
    assert transcript.messages[0].content == (TextBlock("list the files"),)
    assert transcript.messages[1].tool_uses[0] == ToolUseBlock(
        "toolu_v0_1", "Bash", {"command": "ls"}
    )
    assert transcript.messages[3].is_meta and not transcript.messages[2].is_meta
    assert transcript.first_prompt == "list the files"
    ledger = read_ledger(FIXTURES / "v0_session.jsonl")
    assert [r.usage for r in ledger.requests] == [Usage(1000, 20), Usage(1200, 30)]
    assert [r.prompt for r in ledger.requests] == [1, 1]


def test_version_0_envelope_is_rebuilt(tmp_path: Path) -> None:
    """What the upgrade produces, seen through a writer that rewrites it as version 1."""
    transcript = read_transcript(FIXTURES / "v0_session.jsonl")
    path = tmp_path / "v1.jsonl"
    writer = TranscriptWriter(path, SESSION, tmp_path)
    writer.settle(transcript.messages, trigger="resume")
    upgraded = lines(path)
    assert [line["parentUuid"] for line in upgraded] == [
        None,
        "v0-msg-1",
        "v0-msg-2",
        "v0-msg-3",
        "v0-msg-4",
    ]
    assert read_transcript(path).messages == transcript.messages


def test_v0_and_v1_lines_in_one_file(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes((FIXTURES / "v0_session.jsonl").read_bytes())
    old = read_transcript(path).messages
    writer = TranscriptWriter(path, SESSION, tmp_path, old)
    new = Message.user("and now?")
    writer.append(new)
    assert read_transcript(path).messages == (*old, new)
    assert lines(path)[-1]["parentUuid"] == "v0-msg-5"


@pytest.mark.parametrize("bad", ['{"kind": "message", "id": "m"}', '{"version": -1}'])
def test_bad_old_lines_are_skipped(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(bad + "\n")
    transcript = read_transcript(path)
    assert transcript.messages == () and len(transcript.warnings) == 1


def test_one_writer_at_a_time_holds_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    writer = write(path, conversation()[:2], tmp_path)  # a live session writing it
    assert claim(path) is None
    writer.close()
    claimed = claim(path)
    assert claimed is not None
    resumed = TranscriptWriter(path, "t", tmp_path, conversation()[:2], claimed=claimed)
    resumed.append(Message.user("more"))
    assert claim(path) is None
    resumed.close()
    assert read_transcript(path).messages[-1].text == "more"


def test_an_append_writes_its_own_line_only_however_long_the_history(tmp_path: Path) -> None:
    """What is on disk stays byte for byte, and each message adds one line of its own size:
    the cost of saving a turn does not grow with the session."""
    path = tmp_path / "t.jsonl"
    writer = TranscriptWriter(path, SESSION, tmp_path)
    grown: list[int] = []
    before = b""
    for n in range(200):
        result = ToolResultBlock(f"toolu_{n:04d}", "x" * 3000)
        writer.append(Message("user", (result,)))
        after = path.read_bytes()
        assert after.startswith(before) and after.count(b"\n") == n + 1
        grown.append(len(after) - len(before))
        before = after
    writer.close()
    assert len(set(grown[1:])) == 1  # (the first has no parent): nothing of the history again


def test_a_turn_boundary_is_synced_without_waiting_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fsync runs in a worker thread: sync() returns while the disk is still busy, syncs asked
    for meanwhile share one fsync waiting to start, and close() waits for them all."""
    disk = threading.Event()
    started = threading.Event()
    synced: list[int] = []
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        started.set()
        disk.wait()
        synced.append(fd)
        real_fsync(fd)

    writer = TranscriptWriter(tmp_path / "t.jsonl", SESSION, tmp_path)
    writer.append(Message.user("hi"))  # creates the file (and syncs its folder) first
    monkeypatch.setattr(os, "fsync", slow_fsync)
    writer.sync()  # its fsync waits on the disk; the call does not
    started.wait()
    writer.append(Message.user("more"))
    writer.sync()  # waits behind the first
    writer.sync()  # served by the one waiting
    assert synced == []
    disk.set()
    writer.close()
    assert len(synced) == 3  # the first, the one queued behind it, then close's own
    assert [m.text for m in read_transcript(tmp_path / "t.jsonl").messages] == ["hi", "more"]


def test_a_failed_sync_is_reported_at_close_at_the_latest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's fsync fails once (close's own succeeds): the failure is not lost."""
    failures = [OSError(5, "Input/output error")]
    real_fsync = os.fsync

    def flaky_disk(fd: int) -> None:
        if failures:
            raise failures.pop()
        real_fsync(fd)

    writer = TranscriptWriter(tmp_path / "t.jsonl", SESSION, tmp_path)
    writer.append(Message.user("hi"))
    monkeypatch.setattr(os, "fsync", flaky_disk)
    writer.sync()
    with pytest.raises(OSError, match="Input/output"):
        writer.close()
    assert [m.text for m in read_transcript(tmp_path / "t.jsonl").messages] == ["hi"]
