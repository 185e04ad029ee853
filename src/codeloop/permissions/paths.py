"""Where a path really points, whether it is inside the workspace, and which files are guarded.

Every path is resolved the way the kernel will: `~` expanded, relative to the right directory,
`..` and symlinks followed (a dangling link resolves to where it would write). Matching rules or
roots against the spelling instead would let `ws/../x` or `ws/link-to-home/x` walk out.
"""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Iterable, Sequence
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
    home = Path(os.path.realpath(home))
    if not path.is_relative_to(home) or path == home:
        return False
    rel = path.relative_to(home).as_posix()
    if rel in _CREDENTIAL_FILES:
        return True
    for directory in _CREDENTIAL_DIRS:
        if rel.startswith(directory + "/"):
            return not (name.endswith(".pub") or name in _PUBLIC_IN_CREDENTIAL_DIRS)
    return False


def credential_entry(path: Path, home: Path) -> bool:
    """A file met in a walk that holds credentials, or a symlink to one (`cat` follows it)."""
    if credential(path, home):
        return True
    return path.is_symlink() and credential(Path(os.path.realpath(path)), home)


def credentials_under(top: Path, home: Path) -> list[Path] | None:
    """The credentials a recursive read of `top` reaches, at any depth (a `.env` in a
    subfolder is read as surely as one at the top); None when the tree is too large to check,
    which callers must treat as reaching one."""
    home = Path(os.path.realpath(home))
    found: list[Path] = []
    seen = 0
    for folder, dirs, files in os.walk(top):
        seen += len(dirs) + len(files)
        if seen > WALK_LIMIT:
            return None
        base = Path(folder)
        dirs[:] = [d for d in dirs if d != ".git"]  # git's objects name no credential
        found += [base / f for f in files if credential_entry(base / f, home)]
    return found


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
