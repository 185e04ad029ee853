"""The environment a git command runs in when it must only read: command-scope config that
beats every file (`core.fsmonitor=false`, no hooks, `safe.bareRepository=explicit`,
`core.pager=cat`, the default gpg and ssh programs, no lazy fetch) and `GIT_OPTIONAL_LOCKS=0`,
so `git status` does not even refresh the index. Its own module, without git_check's grammar:
the session's start (context/environment.py) runs git under it before any Bash command, and a
Bash line without git loads no grammar to learn that it needs none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

PROTECTIVE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),  # no hook can live under /dev/null
    ("safe.bareRepository", "explicit"),
    ("core.pager", "cat"),
    ("core.sshCommand", "ssh"),
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("protocol.allow", "never"),  # a partial clone would fetch missing objects
    ("core.askPass", ""),
)
_PROTECTIVE_VARIABLES = {"GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def protective_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` plus the protective configuration, after any command-scope config it has."""
    env = dict(base)
    try:
        start = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    for n, (key, value) in enumerate(PROTECTIVE_CONFIG, start):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    env["GIT_CONFIG_COUNT"] = str(start + len(PROTECTIVE_CONFIG))
    env.pop("GIT_EXTERNAL_DIFF", None)
    return env | _PROTECTIVE_VARIABLES
