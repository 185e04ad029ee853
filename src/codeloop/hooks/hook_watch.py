"""The files whose changes fire hooks: FileChanged's watch list and ConfigChange's settings and
skill files.

FileChanged watches the names its matchers list (`.envrc|.env`: literal files in the working
folder) plus the `watchPaths` that SessionStart, CwdChanged and FileChanged hooks return.
ConfigChange watches the settings files (user, project, local, managed) and the project's
skills. Checked by their stat at the session's seams (after every tool batch, before every
prompt), not by a watcher thread: a change the model's own tools make shows right after the
call, anyone else's before the next model call; nothing runs while the session is idle.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Literal

from codeloop.system.valueclass import valueclass

Stamp = tuple[int, int, int] | None  # (mtime_ns, size, inode); None: no such file
FileEvent = Literal["add", "change", "unlink"]
# path -> ConfigChange source (user_settings, project_settings, local_settings,
# policy_settings, skills); called at every check, so files that appear are seen too.
ConfigFiles = Callable[[], Mapping[Path, str]]


def stamp(path: Path) -> Stamp:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def event_of(before: Stamp, after: Stamp) -> FileEvent | None:
    if before == after:
        return None
    if before is None:
        return "add"
    return "unlink" if after is None else "change"


def matcher_files(matchers: Iterable[str], cwd: Path) -> list[Path]:
    """FileChanged matchers as the files they name: each `|` part a literal file in `cwd`
    (an omitted matcher names none; it only filters)."""
    names = {part.strip() for m in matchers for part in re.split(r"\|", m) if part.strip()}
    return [cwd / name for name in sorted(names)]


@valueclass(frozen=False)
class FileWatch:
    """Stamps of the watched files, and what changed since the last look."""

    files: list[Path] = field(default_factory=list)
    config: ConfigFiles | None = None
    dynamic: list[Path] = field(default_factory=list)
    _stamps: dict[Path, Stamp] = field(default_factory=dict)
    _config_stamps: dict[Path, Stamp] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._stamps = {p: stamp(p) for p in self.files}
        self._config_stamps = {p: stamp(p) for p in (self.config() if self.config else {})}

    @property
    def active(self) -> bool:
        return bool(self.files or self.dynamic or self.config)

    def set_dynamic(self, paths: Iterable[str]) -> None:
        """A hook's `watchPaths`: replaces the dynamic list (absolute paths only)."""
        self.dynamic = [Path(p) for p in paths if Path(p).is_absolute()]
        for path in self.dynamic:
            self._stamps.setdefault(path, stamp(path))

    def file_changes(self) -> list[tuple[Path, FileEvent]]:
        changed = []
        for path in dict.fromkeys([*self.files, *self.dynamic]):
            now = stamp(path)
            if (event := event_of(self._stamps.get(path), now)) is not None:
                changed.append((path, event))
            self._stamps[path] = now
        return changed

    def config_changes(self) -> list[tuple[Path, str]]:
        if self.config is None:
            return []
        changed = []
        for path, source in self.config().items():
            now = stamp(path)
            if path not in self._config_stamps and now is None:
                continue
            if event_of(self._config_stamps.get(path), now) is not None:
                changed.append((path, source))
            self._config_stamps[path] = now
        return changed
