"""Session transcripts: append-only JSONL, one line per message, written as the session happens.

Format version 1, one JSON object a line:

    {"type": "user" | "assistant", "uuid", "parentUuid", "timestamp", "sessionId", "cwd",
     "gitBranch", "version": 1, "isMeta": true (only when set), "message": {...}}

"message" is the Messages API form; on assistant lines it also carries the response's "id",
"model", "stop_reason" and "usage", as the API reported them. A line

    {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger", ...},
     "messages": [{"uuid", "isMeta"?, "message"}, ...], ...envelope}

replaces the whole history so far with the messages it carries. The trigger says who rewrote
it: compaction ("auto", "manual", "reactive"), a resume that had to repair the middle of a
history ("resume"), a rewind ("rewind"), refused images replaced ("media_removed"), or a run
whose final history has new messages between saved ones ("loop"). Later lines append to it.
A compaction's metadata says what it did, for a user (`codeloop sessions show`) to review:

    "compactMetadata": {"trigger", "preTokens", "postTokens", "messagesSummarized",
                        "kept": [uuid, ...], "summary",
                        "toolResults": [{"toolUseId", "tool", "target", "tokens",
                                         "fate": "folded" | "saved" | "summarized",
                                         "path"?}, ...]}

`kept` are the messages carried over word for word (the first message of `messages` is the
summary itself); `toolResults` lists every tool result of the replaced history: folded to a
stub or saved to a file before (with its size then, and the file), or summarized now. A line

    {"type": "system", "subtype": "microcompact", "toolResults": [...], ...envelope}

says that results were folded to stubs before a request; the messages above keep them
whole (the history written is what was said, not the shorter view a request sent). A line

    {"type": "system", "subtype": "api_request", "request": {...}, ...envelope}

records one model request: its usage, what it sent, and which agent sent it (usage/record.py
describes it); it is not part of the history. Line types this version does not know are ignored.

    {"type": "system", "subtype": "todos", "todos": [{"content", "status", "activeForm"}]}

is the model's task list as a TodoWrite call left it (the last one read is the list).

A sub-agent's transcript (a sidechain) is a file of its own,
`<session id>/subagents/agent-<agentId>.jsonl` beside its session's, in the same format; every
line also carries `"isSidechain": true`, `"agentId"`, `"agentType"`, `"description"` and
`"parentToolUseId"` (the Agent call in the parent's transcript that started it), and
`sessionId` is the parent session's. Its last line,

    {"type": "system", "subtype": "subagent_end", "reason", "turns", "durationMs",
     "costUSD", "usage": {...}, "modelUsage": {model: usage}}

sums up what it did and spent (its assistant lines carry each response's usage, as always).

Version 0, the prototype's format, is still read: a header line
`{"kind": "header", "session", "cwd", "started": epoch}`, then one
`{"kind": "message", "id", "time": epoch, "role", "content", "meta"?, "model"?, "usage"?,
"stop"?}` per message. Older lines are upgraded on read, one version step at a time.

Durability: each line is a single write() on an O_APPEND descriptor with no buffer in between,
so a killed process loses at most the line it was writing. Against power loss, each turn
boundary is fsynced in a worker thread, a tool round's once the next request is out and its
answer has begun (`sync_due`), a run's end at once: a disk that takes milliseconds to sync
never delays a turn, and a power cut loses at most the turn being synced. Reading never
fails on a bad line: a cut-short or unreadable line is skipped with a warning, bytes that are
not UTF-8 are replaced (U+FFFD) rather than the line lost, and a message or boundary line
found twice is read once, in its place; repair.py makes what is read sendable again. One process
writes a transcript at a time: its writer holds an flock on the file for as long as it lives
(the kernel drops it when the process dies, however it dies), and a second process that finds
it held (`claim`) goes on in a new session instead of interleaving its lines with the first
one's.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Event,
    LoopEnd,
    MediaRemoved,
    ResultRecord,
    ResultsFolded,
    TodosChanged,
    UserTurn,
)
from codeloop.store.data_paths import branch_in, git_dir
from codeloop.system.valueclass import valueclass
from codeloop.types import (
    Message,
    Usage,
    message_from_dict,
    message_json,
    message_to_dict,
    new_uuid,
    spliced,
)

FORMAT_VERSION = 1
COMPACT_BOUNDARY = "compact_boundary"
API_REQUEST = "api_request"
MICROCOMPACT = "microcompact"
# What every line of a sub-agent's transcript says of it, besides `"isSidechain": true`.
SIDECHAIN_FIELDS = ("agentId", "agentType", "description", "parentToolUseId")

Line = dict[str, Any]


@valueclass
class Transcript:
    """What a transcript file holds, read back."""

    session_id: str
    # The history as it stands after the last compact boundary, not yet repaired.
    messages: tuple[Message, ...]
    first_prompt: str
    warnings: tuple[str, ...]
    # The task list as the last TodoWrite left it.
    todos: tuple[dict[str, str], ...] = ()
    size: int = 0  # bytes in the file
    skipped: int = 0  # lines that could not be read at all
    mended: int = 0  # lines read with bytes that were not UTF-8 replaced (U+FFFD)


class TranscriptWriter:
    """Appends a session's history to its transcript as it grows.

    `history` is what the file already holds when a session is resumed, so that `settle`
    knows which messages are new. The file is created on the first line written.
    """

    def __init__(
        self,
        path: Path,
        session_id: str,
        cwd: Path,
        history: Sequence[Message] = (),
        *,
        claimed: int | None = None,
        sidechain: Mapping[str, Any] | None = None,
    ) -> None:
        """`claimed`: the descriptor `claim` opened (and locked) the file with."""
        self.path = path
        self.session_id = session_id
        self._cwd = cwd
        # A sub-agent's transcript: these fields go on every line (see the module).
        self._sidechain = {"isSidechain": True, **sidechain} if sidechain else {}
        self._known = {m.uuid for m in history}  # the messages saved since the last boundary
        self._last = history[-1].uuid if history else None
        self._fd: int | None = claimed
        self._repo = git_dir(cwd)  # looked for again at each sync while there is none
        self._syncer: ThreadPoolExecutor | None = None
        self._syncs: list[Future[None]] = []  # the worker's fsyncs not seen finished yet
        self._due = False  # a boundary's sync waits for `sync_due`

    def append(
        self,
        message: Message,
        *,
        model: str = "",
        usage: Usage | None = None,
        stop_reason: str | None = None,
        response_id: str = "",
    ) -> None:
        """One message; the keywords describe the response an assistant message came from."""
        line = self._envelope(message.role, message.uuid) | _meta(message)
        if message.role == "assistant":
            line["message"] = assistant_message(message, model, usage, stop_reason, response_id)
            self._write(line)
        else:
            self._write(line, {"message": message_json(message)})
        self._known.add(message.uuid)
        self._last = message.uuid

    def compact(
        self,
        messages: Sequence[Message],
        *,
        trigger: str,
        boundary: CompactBoundary | None = None,
    ) -> None:
        """Replace the history: what follows builds on `messages` alone. A compaction's
        `boundary` says what it kept, summarized and folded."""
        line = self._envelope("system", new_uuid()) | {
            "subtype": COMPACT_BOUNDARY,
            "compactMetadata": {"trigger": trigger, "preTokens": None}
            if boundary is None
            else compact_metadata(boundary),
        }
        self._write(line, {"messages": [_entry_json(m) for m in messages]})
        self._known = {m.uuid for m in messages}
        self._last = messages[-1].uuid if messages else None

    def record_request(self, request: Line) -> None:
        """One model request's record (usage/record.py); the history is left as it is."""
        self._write(
            self._envelope("system", str(request["id"]))
            | {
                "subtype": API_REQUEST,
                "request": request,
            }
        )

    def folded(self, results: Sequence[ResultRecord]) -> None:
        """Microcompact folded these results in what the next request sends."""
        line = self._envelope("system", new_uuid()) | {
            "subtype": MICROCOMPACT,
            "toolResults": [r.to_dict() for r in results],
        }
        self._write(line)

    def settle(self, messages: Sequence[Message], *, trigger: str) -> None:
        """Bring the transcript up to `messages` by appending the ones it does not hold yet.

        A message it holds in another form (a tool result folded or moved to a file for the
        request) stays as first written: the transcript keeps what was said, the loop may send
        a shorter view of it. Only when new messages sit between saved ones (the history was
        rebuilt) is `messages` written whole behind a boundary."""
        fresh = [i for i, message in enumerate(messages) if message.uuid not in self._known]
        if not fresh:
            return
        if len(fresh) == len(messages) - fresh[0]:  # all new ones come after the saved ones
            for message in messages[fresh[0] :]:
                self.append(message)
        else:
            self.compact(messages, trigger=trigger)

    def record(self, item: Message | Event) -> None:
        """Write what `item` changes in the history (a message, an answer, tool results, a
        boundary, the task list, a run's end); other events leave no line. Turn boundaries
        are synced (a tool round's at `sync_due`)."""
        if isinstance(item, Message):
            self.append(item)
        elif isinstance(item, AssistantTurn):
            self.append(
                item.message,
                model=item.model,
                usage=item.usage,
                stop_reason=item.stop_reason,
                response_id=item.message_id,
            )
        elif isinstance(item, UserTurn):
            self.append(item.message)
            self._due = True  # the next request goes out at once: synced while it is answered
        elif isinstance(item, CompactBoundary):
            self.compact(item.messages, trigger=item.trigger, boundary=item)
            self.sync()
        elif isinstance(item, ResultsFolded):
            self.folded(item.results)
        elif isinstance(item, MediaRemoved):
            self.compact(item.messages, trigger="media_removed")
            self.sync()
        elif isinstance(item, TodosChanged):
            self.note("todos", todos=list(item.todos))
        elif isinstance(item, LoopEnd):
            self.settle(item.messages, trigger="loop")
            self.sync()

    def note(self, subtype: str, **fields: Any) -> None:
        """A system line that is not part of the history (the task list, a sub-agent's end)."""
        self._write(self._envelope("system", new_uuid()) | {"subtype": subtype, **fields})

    def sync(self) -> None:
        """Make what was written survive a power loss, not just a crash (a turn boundary): in
        the worker thread, where an fsync still waiting to start serves this one too. An fsync
        that failed raises here, at the next boundary (or at close). A sub-agent's transcript
        is synced when it closes: what resuming needs is in its session's, synced at every
        turn, and its turns are on its caller's wait."""
        self._raise_failed_sync()
        self._due = True
        self.sync_due()

    def sync_due(self) -> None:
        """The sync a tool round's boundary asked for, handed to the worker once the next
        request is out and its answer has begun (the session calls this at the answer's first
        event): waking a thread costs the waker its CPU on a busy machine, which the model's
        time hides and the gap between a tool result and the next request would not."""
        if not self._due:
            return
        self._due = False
        if self._repo is None:
            self._repo = git_dir(self._cwd)
        if self._fd is None or self._sidechain or any(not s.running() for s in self._syncs):
            return
        if self._syncer is None:
            self._syncer = ThreadPoolExecutor(1, thread_name_prefix="codeloop-fsync")
        self._syncs.append(self._syncer.submit(os.fsync, self._fd))

    def close(self) -> None:
        """Sync here and now, and close; a worker's fsync that failed raises here at the
        latest."""
        if self._syncer is not None:
            self._syncer.shutdown()
            self._syncer = None
        try:
            self._raise_failed_sync()
        finally:
            if self._fd is not None:
                fd, self._fd = self._fd, None
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)

    def _raise_failed_sync(self) -> None:
        syncs, self._syncs = self._syncs, []
        for sync in syncs:
            if not sync.done():
                self._syncs.append(sync)
            elif (error := sync.exception()) is not None:
                raise error

    def _envelope(self, kind: str, uuid: str) -> Line:
        return {
            "type": kind,
            "uuid": uuid,
            "parentUuid": self._last,
            "timestamp": _iso_now(),
            "sessionId": self.session_id,
            "cwd": str(self._cwd),
            "gitBranch": branch_in(self._repo) if self._repo is not None else None,
            "version": FORMAT_VERSION,
        } | self._sidechain

    def _write(self, line: Line, encoded: Mapping[str, bytes | Sequence[bytes]] = {}) -> None:
        """`line` with the fields of `encoded`, already JSON (a message's, made once: see
        `types.spliced`), at their end."""
        data = memoryview(spliced(line, encoded) + b"\n")
        fd = self._fd if self._fd is not None else self._open()
        while data:
            data = data[os.write(fd, data) :]

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if not _lock(fd):
            os.close(fd)
            raise OSError(f"{self.path} is being written by another codeloop process")
        _end_lines(fd)
        if created:
            _fsync_dir(self.path.parent)
        self._fd = fd
        return fd


def sidechain_path(transcript: Path, agent_id: str) -> Path:
    """Where sub-agent `agent_id` of the session whose transcript is `transcript` writes."""
    return transcript.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"


def sidechain_paths(transcript: Path) -> list[Path]:
    """The session's sub-agents' transcripts, oldest first."""
    folder = sidechain_path(transcript, "").parent
    try:
        found = [(p.stat().st_mtime_ns, p) for p in folder.glob("agent-*.jsonl")]
    except OSError:
        return []
    return [p for _, p in sorted(found)]


def claim(path: Path) -> int | None:
    """Open an existing transcript to go on writing it, holding its lock: the descriptor for
    `TranscriptWriter(claimed=...)`; None when another live process holds it. Raises OSError
    when it cannot be opened."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
    if not _lock(fd):
        os.close(fd)
        return None
    _end_lines(fd)
    return fd


def _lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _end_lines(fd: int) -> None:
    """A line cut short by a crash stays on a line of its own (the lock is held: nobody else
    is writing one)."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")


def read_transcript(path: Path, visit: Callable[[Line], None] | None = None) -> Transcript:
    """Raises OSError when the file cannot be read; bad lines only produce warnings. `visit`
    sees every line (brought to this version) before it is read, for readers of other facts
    (the usage ledger); a line it cannot read (KeyError, TypeError, ValueError) is skipped."""
    warnings: list[str] = []
    messages: list[Message] = []
    first_prompt = ""
    todos: tuple[dict[str, str], ...] = ()
    data = path.read_bytes()
    parsed = _Parsed(path.name, warnings)
    for number, line in _placed(_upgraded(parsed, data), parsed):
        kind = line["type"]
        try:
            if visit is not None:
                visit(line)
            if kind == "system":
                if line.get("subtype") == COMPACT_BOUNDARY:
                    messages = _boundary_messages(line["messages"], number, parsed)
                elif line.get("subtype") == "todos":
                    todos = tuple(t for t in line["todos"] if isinstance(t, dict))
                continue
            message = entry_message(line)
            if kind == "user" and not first_prompt and not message.is_meta:
                first_prompt = message.text
            messages.append(message)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            parsed.skip(number, f"could not be read ({exc!r})")
    return Transcript(
        path.stem,
        tuple(messages),
        first_prompt,
        tuple(warnings),
        todos,
        size=len(data),
        skipped=parsed.skipped,
        mended=parsed.mended,
    )


def _upgraded(parsed: _Parsed, data: bytes) -> list[tuple[int, Line]]:
    """The lines of the kinds this version reads, brought to it, with their numbers."""
    upgrade = _Upgrader()
    lines = []
    for number, raw in parsed.lines(data):
        try:
            line = upgrade(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            parsed.skip(number, f"could not be read ({exc!r})")
            continue
        if line is not None and line.get("type") in ("user", "assistant", "system"):
            lines.append((number, line))
    return lines


def _placed(lines: list[tuple[int, Line]], parsed: _Parsed) -> Iterator[tuple[int, Line]]:
    """Each message or boundary line once: of one written twice (a disk, a copy gone wrong),
    the copy in its place, the one whose parentUuid is the message just before it (else the
    first). A boundary read twice would drop what was said after it; a message read out of
    place would lose its tool calls' pairing."""
    uuids = [_history_uuid(line) for _, line in lines]
    copies: dict[str, list[int]] = {}
    for k, uuid in enumerate(uuids):
        if uuid is not None:
            copies.setdefault(uuid, []).append(k)
    repeats = {k for ks in copies.values() if len(ks) > 1 for k in ks}
    repeats -= {_in_place(ks, lines) for ks in copies.values() if len(ks) > 1}
    for k, (number, line) in enumerate(lines):
        if k in repeats:
            parsed.skip(number, "repeats another line")
        else:
            yield number, line


def _history_uuid(line: Line) -> str | None:
    """The uuid of a message or boundary line: what a line written twice repeats."""
    if line["type"] == "system" and line.get("subtype") != COMPACT_BOUNDARY:
        return None
    uuid = line.get("uuid")
    return uuid if isinstance(uuid, str) else None


def _in_place(ks: list[int], lines: list[tuple[int, Line]]) -> int:
    """Which of a line's copies (at `ks`) follows the message its parentUuid names."""
    uuid = _history_uuid(lines[ks[0]][1])
    for k in ks:
        before = (
            line for _, line in reversed(lines[:k]) if _history_uuid(line) not in (None, uuid)
        )
        previous = next(before, None)
        if previous is not None and lines[k][1].get("parentUuid") == _last_message(previous):
            return k
    return ks[0]


def _last_message(line: Line) -> Any:
    """The uuid of the message a history line leaves last: its own, or a boundary's last."""
    if line["type"] != "system":
        return line.get("uuid")
    entries = line.get("messages")
    if isinstance(entries, list) and entries and isinstance(entries[-1], dict):
        return entries[-1].get("uuid")
    return None


def _boundary_messages(entries: Any, number: int, parsed: _Parsed) -> list[Message]:
    """The messages a boundary line carries; one it cannot read is left out, not the rest."""
    messages = []
    for k, entry in enumerate(entries):
        try:
            messages.append(entry_message(entry))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            parsed.skip(number, f"message {k} could not be read ({exc!r})")
    return messages


def message_index(path: Path) -> dict[str, Message]:
    """Every message the file holds, by uuid, whichever boundary it sits behind now: what a
    rewind needs to rebuild the history of an earlier moment. A message written again (in a
    boundary a resume wrote) is taken in its latest form. Raises OSError like read_transcript."""
    found: dict[str, Message] = {}
    upgrade = _Upgrader()
    for _, raw in _Parsed(path.name, []).lines(path.read_bytes()):
        try:
            line = upgrade(raw)
            kind = None if line is None else line.get("type")
            if line is None or kind not in ("user", "assistant", "system"):
                continue
            entries = line["messages"] if kind == "system" else [line]
            if kind == "system" and line.get("subtype") != COMPACT_BOUNDARY:
                continue
            for entry in entries:
                message = entry_message(entry)
                found[message.uuid] = message
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return found


def assistant_message(
    message: Message,
    model: str,
    usage: Usage | None,
    stop_reason: str | None,
    response_id: str,
) -> Line:
    """An assistant message as the Messages API returned it: the shape transcripts and
    stream-json lines share."""
    return {
        "id": response_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": message_to_dict(message)["content"],
        "stop_reason": stop_reason,
        "usage": (usage or Usage()).to_dict(),
    }


def compact_metadata(boundary: CompactBoundary) -> Line:
    """What a compaction did, as the transcript's boundary line records it."""
    return {
        "trigger": boundary.trigger,
        "preTokens": boundary.tokens_before,
        "postTokens": boundary.tokens_after,
        "messagesSummarized": boundary.messages_replaced - len(boundary.kept),
        "kept": list(boundary.kept),
        "summary": boundary.summary,
        "toolResults": [r.to_dict() for r in boundary.results],
    }


def _meta(message: Message) -> Line:
    return {"isMeta": True} if message.is_meta else {}


def _entry_json(message: Message) -> bytes:
    """A message as a boundary line lists it, its JSON spliced in."""
    return spliced({"uuid": message.uuid} | _meta(message), {"message": message_json(message)})


def entry_message(entry: Line) -> Message:
    """The message a transcript line (or an entry of a boundary line) holds."""
    body = entry["message"]
    if body["role"] not in ("user", "assistant"):
        raise ValueError(f"unknown role {body['role']!r}")
    data = {
        "role": body["role"],
        "content": body["content"],
        "uuid": str(entry["uuid"]),
        "is_meta": bool(entry.get("isMeta")),
    }
    return message_from_dict(data)


class _Parsed:
    """Reads a transcript's lines as JSON objects, and counts what could not be read whole.

    Bytes that are not UTF-8 (a flipped bit, a disk error) are replaced (U+FFFD) rather than
    losing the line's message; a line that is not a JSON object is skipped, with a warning."""

    def __init__(self, name: str, warnings: list[str]) -> None:
        self._name = name
        self._warnings = warnings
        self.skipped = 0
        self.mended = 0

    def lines(self, data: bytes) -> Iterator[tuple[int, Line]]:
        pieces = data.split(b"\n")
        for number, raw in enumerate(pieces, 1):
            if not raw.strip():
                continue
            try:
                text = raw.decode()
            except UnicodeDecodeError:
                text = raw.decode(errors="replace")
                self.mended += 1
                self._warnings.append(
                    f"{self._name}: line {number} has bytes that are not UTF-8; read with "
                    "them replaced by U+FFFD"
                )
            try:
                line = json.loads(text)
            except ValueError:
                line = None
            if isinstance(line, dict):
                yield number, line
            elif number == len(pieces):  # no newline after it: the writer was stopped mid-line
                self.skip(number, "is cut short (a crash while writing)")
            else:
                self.skip(number, "is not a JSON object")

    def skip(self, number: int, why: str) -> None:
        self.skipped += 1
        self._warnings.append(f"{self._name}: line {number} {why}; skipped")


class _FromV0:
    """Version 0 → 1: ids become uuids chained by parentUuid, epoch times become ISO stamps, the
    header's session and cwd move onto every line, the message nests under "message"."""

    def __init__(self) -> None:
        self.session = ""
        self.cwd: str | None = None
        self.parent: str | None = None

    def __call__(self, line: Line) -> Line | None:
        kind = line.get("kind")
        if kind == "header":
            self.session = str(line.get("session") or "")
            self.cwd = line.get("cwd")
            return None
        if kind != "message":
            return None
        uuid, role = str(line["id"]), line["role"]
        message: Line = {"role": role, "content": line["content"]}
        if role == "assistant":
            message |= {
                "id": "",
                "type": "message",
                "model": line.get("model") or "",
                "stop_reason": line.get("stop"),
                "usage": line.get("usage") or {},
            }
        upgraded: Line = {
            "type": role,
            "uuid": uuid,
            "parentUuid": self.parent,
            "timestamp": _iso(float(line.get("time") or 0)),
            "sessionId": self.session,
            "cwd": self.cwd,
            "gitBranch": None,
            "version": 1,
        }
        if line.get("meta"):
            upgraded["isMeta"] = True
        upgraded["message"] = message
        self.parent = uuid
        return upgraded


# _UPGRADES[v] turns a line of version v into one of version v + 1 (stateful, one per file).
_UPGRADES: tuple[Callable[[], Callable[[Line], Line | None]], ...] = (_FromV0,)


class _Upgrader:
    """Brings each line of one file to FORMAT_VERSION. Lines of a newer codeloop are read as
    far as this version understands them."""

    def __init__(self) -> None:
        self._steps = [make() for make in _UPGRADES]

    def __call__(self, line: Line) -> Line | None:
        version = line.get("version", 0)
        if not isinstance(version, int) or version < 0:
            raise ValueError(f"bad format version {version!r}")
        upgraded: Line | None = line
        while upgraded is not None and version < FORMAT_VERSION:
            upgraded = self._steps[version](upgraded)
            version += 1
        return upgraded


def _iso(epoch: float) -> str:
    """UTC to the millisecond, as in `2025-06-10T08:13:20.500Z` (no datetime import)."""
    seconds, millis = divmod(round(epoch * 1000), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _iso_now() -> str:
    return _iso(time.time())


def _fsync_dir(directory: Path) -> None:
    """A new file's name is durable only once its directory is synced."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
