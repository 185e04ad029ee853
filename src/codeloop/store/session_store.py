"""A project's saved sessions: finding one to resume, and summing each up for a listing.

Transcripts live in `<data dir>/projects/<project slug>/<session id>.jsonl` (see data_paths.py);
the newest is the one written last.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from codeloop.errors import SessionNotFound
from codeloop.store.data_paths import project_dir, projects_dir
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

_ID_TEXT = LazyPattern(r"[0-9a-fA-F-]{1,36}")


@valueclass
class SessionSummary:
    session_id: str
    path: Path
    last_active: float  # seconds since the epoch: when the transcript was last written
    first_prompt: str
    turns: int
    cost_usd: float


class SessionStore:
    def __init__(self, project: Path, env: Mapping[str, str]) -> None:
        self.project = project
        self.directory = project_dir(project, env)
        self._env = env

    def path_for(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.jsonl"

    def paths(self) -> list[Path]:
        """This project's transcripts, newest first."""
        try:
            found = [(p.stat().st_mtime_ns, p) for p in self.directory.glob("*.jsonl")]
        except OSError:
            return []
        return [p for _, p in sorted(found, reverse=True)]

    def latest(self) -> Path:
        paths = self.paths()
        if not paths:
            raise SessionNotFound(f"no session to continue in {self.project}")
        return paths[0]

    def find(self, ref: str) -> Path:
        """The transcript of session `ref`: a whole id, or enough of its start to be unique."""
        ref = ref.strip().lower()
        if not _ID_TEXT.fullmatch(ref):
            raise SessionNotFound(f"{ref!r} is not a session id (codeloop sessions lists them)")
        matches = [p for p in self.paths() if p.stem.startswith(ref)]
        exact = [p for p in matches if p.stem == ref]
        if len(exact) == 1 or len(matches) == 1:
            return (exact or matches)[0]
        if matches:
            raise SessionNotFound(f"{len(matches)} sessions start with {ref!r}: give more of it")
        raise SessionNotFound(self._elsewhere(ref) or f"no session {ref} in {self.project}")

    def _elsewhere(self, ref: str) -> str | None:
        """Name the project a session belongs to, for one started in another directory."""
        found = sorted(projects_dir(self._env).glob(f"*/{ref}*.jsonl"))
        if not found:
            return None
        return f"session {found[0].stem} belongs to {_project_of(found[0])}: run codeloop there"

    def summaries(self) -> list[SessionSummary]:
        return [summarize(path) for path in self.paths()]


def summarize(path: Path) -> SessionSummary:
    """Turns are the main agent's answers; the cost is every request's, sub-agents and
    compaction summaries included."""
    from codeloop.usage.ledger import read_ledger  # only listings need it: not at start-up

    ledger = read_ledger(path)
    return SessionSummary(
        session_id=ledger.session_id,
        path=path,
        last_active=path.stat().st_mtime,
        first_prompt=ledger.prompts[0] if ledger.prompts else "",
        turns=sum(r.agent_id is None and r.purpose == "turn" for r in ledger.requests),
        cost_usd=ledger.cost_usd,
    )


def _project_of(path: Path) -> str:
    """The working directory recorded in the transcript's first line, or its folder name."""
    try:
        with path.open("rb") as file:
            cwd = json.loads(file.readline()).get("cwd")
    except (OSError, ValueError, AttributeError):
        cwd = None
    return str(cwd) if cwd else f"the project folder {path.parent.name}"
