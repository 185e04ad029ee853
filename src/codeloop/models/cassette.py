"""Record and replay whole sessions: every model request, and the stream that answered it.

`RecordingModel` wraps any ModelClient and writes one JSON line per call to a cassette;
`ReplayModel` serves those calls back with no model and no server, so an agent built on
codeloop can be tested in CI for free. A replayed request must equal a recorded one once its
volatile values are normalized (ids, UUIDs, dates, the working directory, temporary paths);
when none does, the error names the first field that differs, as a JSON path.

The working directory is stored as `<cwd>` in requests and answers alike, and put back on
replay, so a cassette recorded in one checkout replays in another.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TextIO

from codeloop.errors import UsageError
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    Fatal,
    KeepAlive,
    MediaError,
    MessageDelta,
    MessageStart,
    MessageStop,
    ModelClient,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    RateLimited,
    StreamErrorEvent,
    StreamEvent,
    StreamIdle,
    Transient,
)
from codeloop.types import Usage, block_from_dict, block_to_dict, message_to_dict

FORMAT = "codeloop-cassette/1"
CWD = "<cwd>"

_EVENTS: dict[str, type[StreamEvent]] = {
    "message_start": MessageStart,
    "block_start": BlockStart,
    "block_delta": BlockDelta,
    "block_stop": BlockStop,
    "message_delta": MessageDelta,
    "message_stop": MessageStop,
}
_ERRORS: dict[str, type[ModelError]] = {
    cls.__name__: cls
    for cls in (
        ModelError,
        PromptTooLong,
        Overloaded,
        RateLimited,
        Transient,
        StreamErrorEvent,
        StreamIdle,
        MediaError,
        Fatal,
    )
}
_UUID = re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
)
_ID_KEYS = re.compile(r"(?:^|_)id$")


class CassetteMismatch(Fatal):
    """A request the cassette does not hold: the session went somewhere the recording did not."""


class Normalizer:
    """Volatile values out of a request, so that two runs of one session compare equal."""

    def __init__(self, cwd: Path | None = None) -> None:
        self.cwd = (cwd or Path.cwd()).resolve()
        temp = re.escape(str(Path(tempfile.gettempdir()).resolve()))
        self._temp_path = re.compile(temp + r"(?:/[^\s\"'`:;,)\]}>]*)?(?![\w.-])")

    def request(self, request: ModelRequest) -> dict[str, Any]:
        """The request as a JSON object, volatile values replaced by placeholders."""
        normalized: dict[str, Any] = self._walk(request_dict(request), "", {})
        return normalized

    def _walk(self, value: Any, key: str, ids: dict[str, str]) -> Any:
        if isinstance(value, dict):
            return {k: self._walk(v, k, ids) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v, key, ids) for v in value]
        if not isinstance(value, str):
            return value
        if _ID_KEYS.search(key):
            # Ids differ between runs; which blocks share one does not.
            return ids.setdefault(value, f"<id {len(ids) + 1}>")
        text = self.put_placeholder(value)
        text = self._temp_path.sub("<tmp>", text)
        return _DATE.sub("<date>", _UUID.sub("<uuid>", text))

    def put_placeholder(self, text: str) -> str:
        return text.replace(str(self.cwd), CWD)

    def put_back(self, text: str) -> str:
        return text.replace(CWD, str(self.cwd))


def request_dict(request: ModelRequest) -> dict[str, Any]:
    """Every field of a request, in Messages API shapes (codeloop-only fields left out)."""
    return {
        "model": request.model,
        "system": request.system,
        "messages": [message_to_dict(m) for m in request.messages],
        "tools": [dataclasses.asdict(t) for t in request.tools],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "thinking_budget": request.thinking_budget,
        "stop_sequences": list(request.stop_sequences),
        "stream": request.stream,
        # Only when set: the cassettes recorded before the field existed still match.
        **({"tool_choice": request.tool_choice} if request.tool_choice != "auto" else {}),
        "extra": request.extra,
    }


def event_to_dict(event: StreamEvent) -> dict[str, Any]:
    data = dataclasses.asdict(event)
    if isinstance(event, BlockStart):
        data["block"] = block_to_dict(event.block)
    return data


def event_from_dict(data: dict[str, Any]) -> StreamEvent:
    fields = dict(data)
    kind = fields.pop("type")
    if "usage" in fields:
        fields["usage"] = Usage.from_dict(fields["usage"])
    if "block" in fields:
        fields["block"] = block_from_dict(fields["block"])
    event: StreamEvent = _EVENTS[kind](**fields)
    return event


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        return {k: _map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    return change(value) if isinstance(value, str) else value


# --- recording -----------------------------------------------------------------------------


class RecordingModel:
    """Passes every call through to `inner` and appends it to the cassette at `path` (one
    line per call, written when its stream ends, however it ends)."""

    def __init__(self, inner: ModelClient, path: Path, *, cwd: Path | None = None) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.path = path
        self._normalizer = Normalizer(cwd)
        try:
            self._file: TextIO = path.open("w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot record to {path}: {exc.strerror or exc}") from None
        self._write({"format": FORMAT, "provider": inner.provider})

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        record: dict[str, Any] = {"request": self._normalizer.request(request), "events": []}
        try:
            async for event in self.inner.stream(request):
                if not isinstance(event, KeepAlive):  # timing, not content: not replayed
                    data = _map_strings(event_to_dict(event), self._normalizer.put_placeholder)
                    record["events"].append(data)
                yield event
        except ModelError as exc:
            record["error"] = _error_to_dict(exc)
            raise
        except BaseException:
            # Closed or cancelled by the caller: abandoned, unless the answer was complete.
            if record["events"][-1:] != [{"type": "message_stop"}]:
                record["abandoned"] = True
            raise
        finally:
            self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    async def aclose(self) -> None:
        self._file.close()
        await self.inner.aclose()


def _error_to_dict(error: ModelError) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type(error).__name__, "message": error.message}
    for name in ("status", "retry_after", "actual", "limit"):
        if getattr(error, name, None) is not None:
            data[name] = getattr(error, name)
    return data


def _error_from_dict(data: dict[str, Any]) -> ModelError:
    cls = _ERRORS.get(data.get("type", ""), ModelError)
    fields = {k: data[k] for k in ("status", "retry_after", "actual", "limit") if k in data}
    return cls(data.get("message", ""), **fields)


# --- replay --------------------------------------------------------------------------------


class ReplayModel:
    """Serves a cassette: each request gets the recorded answer of an equal recorded request
    not served yet (so concurrent callers may come in any order)."""

    def __init__(self, path: Path, *, cwd: Path | None = None) -> None:
        self.path = path
        self._normalizer = Normalizer(cwd)
        header, self._calls = _load(path)
        self.provider: str = header.get("provider", "replay")
        self._served = [False] * len(self._calls)
        self.requests = 0

    @property
    def model(self) -> str:
        """The model of the first recorded request (what the session should say it runs)."""
        return str(self._calls[0]["request"].get("model", "")) if self._calls else "replay"

    @property
    def remaining(self) -> int:
        """Recorded calls not served yet: 0 once a session replayed in full."""
        return self._served.count(False)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        # Matched when the request is made, as a server would see it, not at first iteration.
        self.requests += 1
        return self._serve(self._take(self._normalizer.request(request)))

    def _take(self, live: dict[str, Any]) -> dict[str, Any]:
        waiting = [i for i, served in enumerate(self._served) if not served]
        for i in waiting:
            if self._calls[i]["request"] == live:
                self._served[i] = True
                return self._calls[i]
        if not waiting:
            return {
                "mismatch": f"cassette {self.path}: request {self.requests} was not recorded "
                f"(all {len(self._calls)} recorded calls were served)"
            }
        expected = self._calls[waiting[0]]["request"]
        where, recorded, got = first_difference(expected, live)
        return {
            "mismatch": f"cassette {self.path}: request {self.requests} differs from recorded "
            f"call {waiting[0] + 1} at {where}: recorded {recorded}, got {got}"
        }

    async def _serve(self, call: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        if "mismatch" in call:
            raise CassetteMismatch(call["mismatch"])
        for data in call["events"]:
            yield event_from_dict(_map_strings(data, self._normalizer.put_back))
        if "error" in call:
            raise _error_from_dict(call["error"])
        if call.get("abandoned"):
            raise Transient(f"cassette {self.path}: the recording of this call stops here")

    async def aclose(self) -> None:
        """Nothing to release; present for the ModelClient protocol."""


def _load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cassette {path}: {exc.strerror or exc}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise UsageError(f"cassette {path}, line {number}: not JSON ({exc.msg})") from None
    if not records or records[0].get("format") != FORMAT:
        raise UsageError(f"cassette {path}: not a codeloop cassette (no {FORMAT} header)")
    return records[0], records[1:]


# --- comparing -----------------------------------------------------------------------------


def first_difference(recorded: Any, live: Any, path: str = "$") -> tuple[str, str, str]:
    """Where two JSON values first differ (a JSON path), and both values there, shortened.
    Call only on values that differ."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in [*recorded, *(k for k in live if k not in recorded)]:
            if recorded.get(key, _ABSENT) != live.get(key, _ABSENT):
                return first_difference(
                    recorded.get(key, _ABSENT), live.get(key, _ABSENT), _child(path, key)
                )
    if isinstance(recorded, list) and isinstance(live, list):
        for index, (old, new) in enumerate(zip(recorded, live, strict=False)):
            if old != new:
                return first_difference(old, new, f"{path}[{index}]")
        shorter = min(len(recorded), len(live))
        return (
            f"{path}[{shorter}]",
            _show(recorded[shorter] if shorter < len(recorded) else _ABSENT),
            _show(live[shorter] if shorter < len(live) else _ABSENT),
        )
    if isinstance(recorded, str) and isinstance(live, str):
        return (path, *_show_strings(recorded, live))
    return path, _show(recorded), _show(live)


class _Absent:
    def __repr__(self) -> str:
        return "(nothing)"


_ABSENT: Any = _Absent()
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_CONTEXT = 30


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if _IDENTIFIER.match(key) else f"{path}[{json.dumps(key)}]"


def _show(value: Any) -> str:
    if value is _ABSENT:
        return repr(value)
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 2 * _CONTEXT else text[: 2 * _CONTEXT] + "…"


def _show_strings(recorded: str, live: str) -> tuple[str, str]:
    """Both strings around the first character where they part."""
    common = 0
    while common < min(len(recorded), len(live)) and recorded[common] == live[common]:
        common += 1
    start = max(0, common - _CONTEXT)

    def excerpt(text: str) -> str:
        shown = json.dumps(text[start : common + _CONTEXT], ensure_ascii=False)
        return ("…" if start else "") + shown + ("…" if common + _CONTEXT < len(text) else "")

    return excerpt(recorded), excerpt(live)
