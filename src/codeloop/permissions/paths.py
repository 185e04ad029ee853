"""Where a path really points, whether it is inside the workspace, and which files are guarded.

Every path is resolved the way the kernel will: `~` expanded, relative to the right directory,
`..` and symlinks followed (a dangling link resolves to where it would write). Matching rules or
roots against the spelling instead would let `ws/../x` or `ws/link-to-home/x` walk out.
"""

from __future__ import annotations

import functools
import glob
import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

# Files inside a workspace that still need the user's say: they grant permissions, configure
# hooks or run code on their own (git hooks, shell start-up), so an edit is an escalation.
_GUARDED_NAMES = frozenset({".mcp.json", ".bashrc", ".bash_profile", ".profile", ".zshrc"})
_SETTINGS_DIRS = frozenset({".codeloop", ".claude"})
# Writing to these changes no file.
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
GLOB_LIMIT = 2000
WALK_LIMIT = 100_000  # entries a recursive read is checked through before it counts as unknown
# Where people keep credentials, under the home directory: directories, then single files.
_CREDENTIAL_DIRS = (".ssh", ".aws", ".gnupg", ".config/gh", ".config/gcloud", ".azure", ".kube")
_CREDENTIAL_FILES = frozenset(
    {".netrc", ".docker/config.json", ".git-credentials", ".pgpass", ".pypirc", ".npmrc"}
    | {".config/hub", ".cargo/credentials", ".cargo/credentials.toml", ".kube/config"}
    | {".bash_history", ".zsh_history"}  # tokens typed on command lines
)
_SYSTEM_CREDENTIALS = frozenset({"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"})
_PUBLIC_IN_CREDENTIAL_DIRS = ("known_hosts", "known_hosts.old", "authorized_keys")
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})


def resolve(raw: str, cwd: Path, home: Path) -> Path:
    """The absolute, symlink-free path `raw` names when the shell is in `cwd`."""
    if raw == "~" or raw.startswith("~/"):
        raw = str(home) + raw[1:]
    return Path(os.path.realpath(os.path.join(cwd, raw)))


def within(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def is_device(path: Path) -> bool:
    return str(path) in _DEVICES or str(path).startswith("/dev/fd/")


def guarded(path: Path) -> bool:
    """Settings, hooks and start-up files: edits need approval even where edits are accepted."""
    parts = path.parts
    if path.name in _GUARDED_NAMES or path.name == ".gitconfig":
        return True
    if len(parts) > 1 and parts[-2] in _SETTINGS_DIRS and path.name.startswith("settings"):
        return True
    return any(a == ".git" and b in ("hooks", "config") for a, b in itertools.pairwise(parts))


def credential(path: Path, home: Path) -> bool:
    """A file that holds secrets: keys and tokens under the home directory, `.env` files
    anywhere (their templates aside), the environment of a process."""
    name = path.name
    if name == ".env" or (name.startswith(".env.") and name not in _ENV_TEMPLATES):
        return True
    if str(path) in _SYSTEM_CREDENTIALS:
        return True
    if name == "environ" and str(path).startswith("/proc/"):
        return True  # /proc/PID/environ: a process's environment
    home = _real(home)
    if not path.is_relative_to(home) or path == home:
        return False
    rel = path.relative_to(home).as_posix()
    if rel in _CREDENTIAL_FILES:
        return True
    for directory in _CREDENTIAL_DIRS:
        if rel.startswith(directory + "/"):
            return not (name.endswith(".pub") or name in _PUBLIC_IN_CREDENTIAL_DIRS)
    return False


class TreeTooLarge(Exception):
    """A tree with more than WALK_LIMIT entries: too large to check, so it may hold anything."""


def walk(top: Path) -> Iterator[os.DirEntry[str]]:
    """Every entry under `top`, as a recursive read meets it (links not followed; git's own
    objects, which name no credential, skipped). Raises TreeTooLarge."""
    folders, seen = [str(top)], 0
    while folders:
        try:
            with os.scandir(folders.pop()) as listing:
                entries = list(listing)
        except OSError:
            continue  # unreadable: nothing read there either
        seen += len(entries)
        if seen > WALK_LIMIT:
            raise TreeTooLarge(top)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                folders.append(entry.path)
            yield entry


def credential_entry(entry: os.DirEntry[str], home: Path) -> bool:
    """An entry met in a walk that holds credentials, or a symlink to one (`cat` follows it)."""
    path = Path(entry.path)
    if credential(path, home):
        return True
    return entry.is_symlink() and credential(Path(os.path.realpath(path)), home)


def credentials_under(top: Path, home: Path) -> list[Path] | None:
    """The credentials a recursive read of `top` reaches, at any depth (a `.env` in a
    subfolder is read as surely as one at the top); None when the tree is too large to check,
    which callers must treat as reaching one."""
    try:
        return [Path(e.path) for e in walk(top) if credential_entry(e, home)]
    except TreeTooLarge:
        return None


@functools.lru_cache(maxsize=8)
def _real(home: Path) -> Path:
    return Path(os.path.realpath(home))


def expand_glob(pattern: str, cwd: Path, home: Path) -> list[Path] | None:
    """What a shell glob names: the matches, plus the literal word (bash keeps it when nothing
    matches). None when there are too many to check."""
    if pattern == "~" or pattern.startswith("~/"):
        pattern = str(home) + pattern[1:]
    full = os.path.join(cwd, pattern)
    found = list(itertools.islice(glob.iglob(full), GLOB_LIMIT + 1))
    if len(found) > GLOB_LIMIT:
        return None
    return list(dict.fromkeys(resolve(p, cwd, home) for p in [*found, full]))


def real_roots(roots: Sequence[Path]) -> list[Path]:
    """Roots as the kernel sees them (symlinks resolved), without duplicates."""
    return list(dict.fromkeys(Path(os.path.realpath(r)) for r in roots))
