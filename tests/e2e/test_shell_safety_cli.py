"""Shell safety through the real CLI: every write path of issue 12 leaves its marker unmade, and
the everyday read-only idioms run unasked with their output reaching the model.

`codeloop -p` runs in the default mode against the FakeModelServer, with only `git status` and
`ls` allowed (the rules the issue measured). The project is a real git repository that arrived
by `git clone` and brought a buried bare repository whose config names an fsmonitor hook; the
project's own config names one too, and a nested repository's config names an external diff,
a textconv and a clean filter. Every such program, and every command, would create a marker
file if it ran; controls run the same git commands directly to show the markers do get made.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from codeloop.testing.shell_cases import IDIOMS
from tests import needs
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli

GIT_ID = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_ID, *args], cwd=cwd, check=True, capture_output=True, text=True
    )
    return done.stdout


def hook(path: Path, marker: Path) -> Path:
    """An executable that leaves `marker` behind when anything runs it."""
    path.write_text(f'#!/bin/sh\ntouch {marker}\ncat "$1" 2>/dev/null\n')
    path.chmod(0o755)
    return path


def world(root: Path) -> tuple[Path, Path]:
    """(project, markers): a clone carrying a buried bare repository, configured hostilely."""
    markers, tools = root / "markers", root / "tools"
    markers.mkdir()
    tools.mkdir()
    source = root / "source"
    buried = source / "buried"
    for d in ("objects/info", "refs/heads"):
        (buried / d).mkdir(parents=True)
        (buried / d / ".keep").write_text("")
    (buried / "HEAD").write_text("ref: refs/heads/main\n")
    fsmonitor = hook(tools / "bare-fsmonitor", markers / "bare-fsmonitor")
    (buried / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f"\tfsmonitor = {fsmonitor}\n"
    )
    (source / "f").write_text("a x\nb y\nc z\n")
    (source / "-o").write_text("a file named -o\n")
    git(source.parent, "init", "-q", "-b", "main", str(source))
    git(source, "add", ".")
    git(source, "commit", "-qm", "init")
    project = root / "project"
    git(root, "clone", "-q", str(source), str(project))
    assert (project / "buried" / "config").is_file()  # the clone brought it
    git(project, "config", "core.fsmonitor", str(hook(tools / "fsmonitor", markers / "fsmonitor")))
    git(project, "config", "core.hooksPath", str(tools))
    git(project, "remote", "set-url", "origin", "https://example.invalid/repo.git")
    nested = project / "nested"
    nested.mkdir()
    git(nested, "init", "-q", "-b", "main")
    (nested / "g").write_text("one\n")
    (nested / ".gitattributes").write_text("g diff=conv filter=clean\n")
    git(nested, "add", ".")
    git(nested, "commit", "-qm", "one")
    (nested / "g").write_text("two\n")
    git(nested, "config", "diff.conv.textconv", str(hook(tools / "textconv", markers / "textconv")))
    git(nested, "config", "filter.clean.clean", str(hook(tools / "clean", markers / "clean")))
    git(nested, "config", "diff.external", str(hook(tools / "external", markers / "external")))
    return project, markers


def attempts(m: Path) -> list[str]:
    return [
        f"uniq -- -f {m}/uniq",
        f"git blame --output={m}/blame f",
        f"git status --short > {m}/status-redirect",
        f"ls > {m}/ls-redirect",
        "git status",  # the project's own core.fsmonitor must not run
        "git status --short",
        "git log -1 --stat",
        "cd buried && git status",
        "git -C buried status",
        "git -C buried log",
        "git -C nested diff",
        "cd nested && git log -p -1",
        "git -C nested show HEAD",
        "git -C nested status",
        "git branch --abbrev NAME",
        f"find . -fls {m}/find",
        f"sed 's/a/b/w {m}/sed' f",
        f"awk '{{print > \"{m}/awk\"}}' f",
        f"sort -o {m}/sort f",
        f"sort -ro {m}/sort2 f",
        f"git diff --output={m}/diff",
        f"tree -o {m}/tree",
        f"echo x | tee {m}/tee",
        f"env ls > {m}/env-ls",
    ]


def run(project: Path, root: Path, commands: list[str], *flags: str) -> list[dict[str, Any]]:
    turns = [turn(f"Step {i}.", tool_use("Bash", {"command": c})) for i, c in enumerate(commands)]
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = provider_env(None, "anthropic", home) | {"CODELOOP_HOME": str(root / "data")}
    with FakeModelServer(Scenario(turns=(*turns, turn("Done.")))) as server:
        env |= provider_env(server, "anthropic", home)
        done = run_cli(
            [
                "-p",
                "go",
                "--model",
                PROVIDER_MODELS["anthropic"],
                "--output-format",
                "json",
                *flags,
            ],
            cwd=project,
            env=env,
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    results = [r.body["messages"][-1]["content"][0] for r in requests[1:]]
    assert len(results) == len(commands)
    return results


def test_no_write_path_leaves_its_marker(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    project, markers = world(root)
    results = run(
        project, root, attempts(markers), "--allowedTools", "Bash(git status:*),Bash(ls:*)"
    )
    assert sorted(os.listdir(markers)) == []
    assert git(project, "branch", "--list", "NAME") == ""
    by_command = dict(zip(attempts(markers), results, strict=True))
    for command, result in by_command.items():
        text = str(result["content"])
        if command in ("git status", "git status --short", "git log -1 --stat"):
            assert not result.get("is_error"), (command, text)  # ran, protected
        else:
            assert result.get("is_error") and "denied" in text, (command, text)
            assert "\n" not in text.split("denied", 1)[1], text
    assert "buried" in str(by_command["cd buried && git status"]["content"])


def test_controls_the_markers_do_appear_when_git_runs_unprotected(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    project, markers = world(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for cwd, args in (
        (project / "buried", ["status"]),
        (project, ["status"]),
        (project / "nested", ["log", "-p", "-1"]),
        (project / "nested", ["diff"]),
        (project / "nested", ["status"]),
    ):
        subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False)
    assert {"bare-fsmonitor", "fsmonitor", "textconv", "external", "clean"} <= set(
        os.listdir(markers)
    )


def test_the_read_only_idioms_run_unasked_and_their_output_reaches_the_model(
    tmp_path: Path,
) -> None:
    root = tmp_path.resolve()
    project, _ = world(root)
    results = run(project, root, IDIOMS)
    expected = {
        "sed -n '2,3p' f": "b y\nc z",
        "sed 's/a/b/' f": "b x",
        "awk '{print $1}' f": "a\nb\nc",
        "base64 f": "YSB4CmIgeQpjIHoK",
        "numfmt --to=iec 2048": "2.0K",
        "git --version": "git version",
        "git remote get-url origin": "https://example.invalid/repo.git",
        "/usr/bin/grep -n x f": "1:a x",
        "sort -- -o": "a file named -o",
        "tac f": "c z\nb y\na x",
    }
    assert set(expected) == set(IDIOMS)
    for command, result in zip(IDIOMS, results, strict=True):
        assert not result.get("is_error"), (command, result)
        assert expected[command] in str(result["content"]), (command, result)


CANARY = "canary-0d9c"


def searchable(root: Path) -> Path:
    """A project whose `.env` holds a token, and a vendored folder whose `.ignore` selects its
    own `.env` again: ripgrep skips the first unless told otherwise, and reads the second."""
    project = root / "project"
    (project / "src").mkdir(parents=True)
    git(root, "init", "-q", str(project))
    (project / "src" / "app.py").write_text("needle = load_env()\n")
    (project / ".env").write_text(f"needle={CANARY}\n")
    vendored = project / "vendored"
    vendored.mkdir()
    (vendored / "lib.py").write_text("needle = 2\n")
    (vendored / ".env").write_text(f"needle={CANARY}\n")
    (vendored / ".ignore").write_text("!.env\n")
    return project


def test_searches_run_unasked_and_none_shows_the_credential(tmp_path: Path) -> None:
    """Everyday searches beside a `.env` run; every line that would print one is refused."""
    needs.program("rg", "the searches run ripgrep")
    root = tmp_path.resolve()
    project = searchable(root)
    done = subprocess.run(["rg", "needle"], cwd=project, capture_output=True, text=True)
    assert CANARY in done.stdout  # the control: the `!.env` line makes ripgrep read that one
    runs = ["rg needle src", "rg -n -g '*.py' needle", "rg -t py needle", "FOO=bar", "git --help"]
    refused = [
        "rg needle",
        "rg needle vendored",
        "rg --hidden needle",
        "rg -uu needle",
        "rg -g '*' needle",
        "rg -g .env needle",
        "rg needle .env",
        "grep -r needle .",
        "D=.env; cat $D",
        "git log --help",
    ]
    results = run(project, root, [*runs, *refused])
    for command, result in zip([*runs, *refused], results, strict=True):
        text = str(result["content"])
        assert CANARY not in text, command
        if command in runs:
            assert not result.get("is_error"), (command, text)
        else:
            assert result.get("is_error") and "denied" in text, (command, text)
    assert "src/app.py" in str(results[1]["content"])
    assert "vendored/lib.py" in str(results[1]["content"])
