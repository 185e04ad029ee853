"""Run Bash under bubblewrap: the file system read-only but for the workspace and a private /tmp,
no network unless allowed, and an environment reduced to an allowlist.

The permission policy decides what may run; the sandbox limits what a command that was allowed
can do, so a rule that was too broad, or a program that writes where its arguments did not say,
still cannot touch the rest of the machine. Processes stay in the caller's process group (no
`--new-session`, no pid namespace), so timeouts, aborts and background jobs behave as without it.

Where bwrap is missing or cannot create namespaces on this kernel, `sandbox_for` returns no
sandbox and one warning, and commands run under the permission policy alone.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from codeloop.system.valueclass import valueclass

ENV_ALLOWLIST = frozenset(
    {"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "USER", "LOGNAME", "SHELL", "TZ", "COLORTERM"}
    | {"NO_COLOR", "FORCE_COLOR", "CLICOLOR", "COLUMNS", "LINES", "PAGER", "GIT_PAGER"}
    | {"VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_VERSION"}
)
_PRIVATE_TMP = Path("/tmp")


# Inside each writable root, what only the user may change: settings, hooks, MCP servers.
PROTECTED_IN_ROOTS = (".claude", ".codeloop", ".mcp.json", ".git/hooks", ".git/config")


@valueclass
class Sandbox:
    """How to wrap one command; `roots` are the writable workspace roots."""

    roots: tuple[Path, ...]
    bwrap: str = "bwrap"
    allow_network: bool = False

    def argv(self, shell: str, script: str, *, cwd: Path, files: Sequence[str] = ()) -> list[str]:
        """`bwrap ... -- shell -c script`; `files` are host files the command must write (the
        cwd-tracking file), bound in place."""
        # --cap-drop ALL: run as root, bwrap would keep every capability, and the command could
        # simply remount / read-write.
        argv = [self.bwrap, "--die-with-parent", "--cap-drop", "ALL"]
        argv += ["--ro-bind", "/", "/", "--dev", "/dev"]
        argv += ["--tmpfs", str(_PRIVATE_TMP)]
        # /run holds the system's sockets (dbus, docker, the user's agents): a read-only mount
        # does not stop connect(), so it is hidden; DNS's stub resolver stays if network is on.
        argv += ["--tmpfs", "/run"]
        if self.allow_network:
            argv += ["--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve"]
        else:
            argv.append("--unshare-net")
        argv += ["--unshare-ipc", "--unshare-uts"]
        writable = sorted({os.path.realpath(r) for r in self.roots}, key=len)
        # Under the private /tmp, the real directories the workspace (and cwd) live in are shown
        # again read-only, so `touch ../x` fails instead of writing a throwaway copy.
        shown = [*writable, os.path.realpath(cwd), *files]
        for top in sorted({t for p in shown if (t := _tmp_child(p)) is not None}):
            argv += ["--ro-bind", str(top), str(top)]
        for root in writable:
            argv += ["--bind", root, root]
            # The agent's own configuration stays read-only inside the workspace: a command
            # must not switch the sandbox off, or add rules or hooks, for the next run.
            for protected in PROTECTED_IN_ROOTS:
                argv += ["--ro-bind-try", f"{root}/{protected}", f"{root}/{protected}"]
        for path in files:
            argv += ["--bind", path, path]
        return [*argv, "--chdir", str(cwd), "--", shell, "-c", script]

    def widened(self, roots: Sequence[Path]) -> Sandbox:
        """The same sandbox with these folders writable too (directories added mid-session)."""
        return replace(self, roots=tuple(dict.fromkeys((*self.roots, *roots))))

    @staticmethod
    def env(base: Mapping[str, str]) -> dict[str, str]:
        kept = {k: v for k, v in base.items() if k in ENV_ALLOWLIST or k.startswith("LC_")}
        return {**kept, "TMPDIR": str(_PRIVATE_TMP)}


def _tmp_child(path: str) -> Path | None:
    """/tmp/a/b/c → /tmp/a: the top directory to expose for a path under the private /tmp."""
    p = Path(path)
    if p.is_relative_to(_PRIVATE_TMP) and p != _PRIVATE_TMP:
        return _PRIVATE_TMP / p.relative_to(_PRIVATE_TMP).parts[0]
    return None


@functools.cache
def probe(bwrap: str | None = None) -> tuple[str | None, str]:
    """The bwrap binary if it can create this sandbox here, else None and why."""
    found = bwrap or shutil.which("bwrap")
    if found is None or not os.access(found, os.X_OK):
        return (
            None,
            "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)",
        )
    trial = Sandbox((Path("/"),), found).argv("/bin/sh", "true", cwd=Path("/"))
    try:
        done = subprocess.run(trial, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap could not run: {exc}"
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return None, f"bwrap cannot create a sandbox on this system: {why[0]}"
    return found, ""


def sandbox_for(
    roots: Sequence[Path], *, allow_network: bool = False, bwrap: str | None = None
) -> tuple[Sandbox | None, str | None]:
    """A sandbox over `roots`, or None and one warning for the user when bwrap cannot run."""
    found, why = probe(bwrap)
    if found is None:
        return None, f"Sandbox disabled: {why}. Bash commands run unsandboxed."
    return Sandbox(tuple(roots), found, allow_network), None
