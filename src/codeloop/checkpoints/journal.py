"""The journal: one JSON line per checkpoint, and one when the turn it guards has finished.

    {"type": "checkpoint", "number", "kind": "turn" | "rewind", "created", "taken", "roots":
     {root: tree id}, "history": [message uuid, ...], "prompt", "label", "rewoundTo"?,
     "git"?: {root: "BRANCH COMMIT"}}
    {"type": "after", "number", "taken", "roots": {root: tree id}}

"roots" is the workspace before the turn (or the rewind) ran, "history" the conversation at
that moment; an "after" line is the workspace once the turn's tools finished, so that what
changed later, between turns, is known to be the user's. A checkpoint line is written (and
synced) after its objects, and before the tool it guards runs; a torn last line is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Literal

from codeloop.system.valueclass import valueclass

JOURNAL = "checkpoints.jsonl"
Kind = Literal["turn", "rewind"]


@valueclass
class Checkpoint:
    """One checkpoint as the journal holds it (its "after" joined in once the turn ended)."""

    number: int
    kind: Kind
    created: float  # seconds since the epoch
    taken_ns: int  # when its snapshot started: the stat cache's reference time
    roots: Mapping[str, str]
    history: tuple[str, ...]
    prompt: str = ""  # the user's request the turn worked on, shortened
    label: str = ""  # the call that needed it: "Edit src/app.py", "Bash: sed -i ..."
    rewound_to: int | None = None  # for a rewind's own checkpoint: where it went
    # What git's HEAD pointed to in each root that is in a repository ("main 1a2b…"): a rewind
    # never touches .git, but says so when HEAD has moved since.
    git: Mapping[str, str] = field(default_factory=dict)
    after: Mapping[str, str] | None = None
    after_ns: int = 0


class Journal:
    def __init__(self, directory: Path) -> None:
        self.path = directory / JOURNAL
        self._fd: int | None = None

    def read(self) -> list[Checkpoint]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        found: dict[int, Checkpoint] = {}
        for raw in data.split(b"\n"):
            try:
                line = json.loads(raw)
                if line["type"] == "checkpoint":
                    cp = _checkpoint(line)
                    found[cp.number] = cp
                elif line["type"] == "after" and line["number"] in found:
                    number = line["number"]
                    found[number] = replace(
                        found[number], after=dict(line["roots"]), after_ns=int(line["taken"])
                    )
            except (ValueError, KeyError, TypeError):
                continue  # a torn or foreign line
        return [found[n] for n in sorted(found)]

    def add(self, cp: Checkpoint) -> None:
        line: dict[str, Any] = {
            "type": "checkpoint",
            "number": cp.number,
            "kind": cp.kind,
            "created": cp.created,
            "taken": cp.taken_ns,
            "roots": dict(cp.roots),
            "history": list(cp.history),
            "prompt": cp.prompt,
            "label": cp.label,
        }
        if cp.rewound_to is not None:
            line["rewoundTo"] = cp.rewound_to
        if cp.git:
            line["git"] = dict(cp.git)
        self._write(line)

    def finish(self, number: int, roots: Mapping[str, str], taken_ns: int) -> None:
        self._write({"type": "after", "number": number, "taken": taken_ns, "roots": dict(roots)})

    def _write(self, line: Mapping[str, Any]) -> None:
        if self._fd is None:
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self._fd = os.open(self.path, flags, 0o600)
            size = os.fstat(self._fd).st_size
            if size and os.pread(self._fd, 1, size - 1) != b"\n":
                os.write(self._fd, b"\n")  # a torn line stays on its own
        data = memoryview((json.dumps(line, separators=(",", ":")) + "\n").encode())
        while data:
            data = data[os.write(self._fd, data) :]
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def _checkpoint(line: Mapping[str, Any]) -> Checkpoint:
    kind = line["kind"]
    if kind not in ("turn", "rewind"):
        raise ValueError(kind)
    return Checkpoint(
        number=int(line["number"]),
        kind=kind,
        created=float(line["created"]),
        taken_ns=int(line["taken"]),
        roots={str(k): str(v) for k, v in line["roots"].items()},
        history=tuple(str(u) for u in line["history"]),
        prompt=str(line.get("prompt", "")),
        label=str(line.get("label", "")),
        rewound_to=line.get("rewoundTo"),
        git={str(k): str(v) for k, v in line.get("git", {}).items()},
    )
