"""The oracle: every line the table judges read-only really changes nothing and runs nothing else.

Each READ_ONLY line of codeloop/testing/shell_cases.py runs through the real Bash tool inside
bubblewrap (the workspace is a fresh copy of a fingerprinted git repository, a home and a
folder beside it, all writable), under strace. The test fails if any file, mode, symlink, ref
or config changed, or if a program was started that the parse of the line does not name (or,
for egrep and fgrep, the grep they are scripts around). git's index counts by what it stages
(`git ls-files -s`): `git diff` refreshes its stat cache even without optional locks. It
also shows the oracle catching a guard removed from the read-only tables: with the guard gone
the check calls the line read-only, and the oracle sees what it does.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from codeloop.shell import argv_checks, git_check, scripts
from codeloop.shell.bash_parse import parse_command
from codeloop.shell.command_effects import command_name, unwrap
from codeloop.shell.readonly import is_read_only_command
from codeloop.shell.sandbox import Sandbox, probe
from codeloop.system.valueclass import valueclass
from codeloop.testing.shell_cases import READ_ONLY, shell_world
from codeloop.tools.base import ToolContext, Workspace
from codeloop.tools.bash import BashTool

STRACE = shutil.which("strace")


@pytest.fixture(scope="module", autouse=True)
def tools() -> None:
    found, why = probe()
    if found is None or STRACE is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs bubblewrap and strace, but: {why or 'no strace'}")
        pytest.skip(why or "strace is not installed")


@valueclass
class Traced(Sandbox):
    """The real sandbox, with the shell run under strace logging every program started."""

    log: str = ""

    def argv(self, shell: str, script: str, *, cwd: Path, files: Sequence[str] = ()) -> list[str]:
        argv = super().argv(shell, script, cwd=cwd, files=[*files, self.log])
        at = argv.index("--") + 1
        trace = [str(STRACE), "-f", "-qq", "-e", "trace=execve", "-e", "signal=none"]
        return [*argv[:at], *trace, "-o", self.log, *argv[at:]]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("oracle-template").resolve()
    shell_world(root)
    (root / "home").mkdir()
    (root / "beside").mkdir()
    (root / "beside" / "kept.txt").write_text("kept\n")
    (root / "repo" / "magic").write_text("0\tstring\thello\tgreeting\n")  # for `file -C`
    return root


def fingerprint(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under `root`: type, mode, and content hash or link target."""
    found: dict[str, tuple[object, ...]] = {}
    staged = subprocess.run(
        ["git", "ls-files", "-s"], cwd=root / "repo", capture_output=True, check=True
    )
    found["git ls-files -s"] = (staged.stdout,)
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(directory, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif rel == "repo/.git/index":
                found[rel] = ("index", st.st_mode)
            elif path.is_file():
                found[rel] = ("file", st.st_mode, hashlib.sha256(path.read_bytes()).hexdigest())
            else:
                found[rel] = ("dir", st.st_mode)
    return found


_EXECVE = re.compile(r'^\d+\s+execve\("([^"]+)", .*\) = 0$')


def started(log: Path) -> list[str]:
    """Names of the programs that were started (successful execve) after the shell."""
    names = [
        Path(m.group(1)).name for line in log.read_text().splitlines() if (m := _EXECVE.match(line))
    ]
    return names[1:]  # the first is the shell itself


def accounted(command: str) -> set[str]:
    """Programs the parse says the line runs: each command, the wrappers it goes through."""
    names = {"bash", "sh"}
    implied = {"egrep": "grep", "fgrep": "grep"}  # shell scripts around grep
    for cmd in parse_command(command).commands:
        inv = unwrap(cmd)
        for word in [*inv.wrapped[: len(inv.wrapped) - len(inv.argv)], *inv.argv[:1]]:
            name = command_name(word) or word
            names.add(Path(name).name)
            names.add(implied.get(Path(name).name, "bash"))
    return names


@pytest.fixture
def run_traced(template: Path, tmp_path: Path) -> Iterator[object]:
    async def run(command: str) -> tuple[dict[str, tuple[object, ...]], list[str], str]:
        root = tmp_path / "case"
        shutil.copytree(template, root, symlinks=True)
        before = fingerprint(root)
        log = tmp_path / "exec.log"
        log.write_text("")
        bwrap, _ = probe()
        assert bwrap is not None
        tool = BashTool(Traced((root,), bwrap, log=str(log)))
        ctx = ToolContext(Workspace(cwd=root / "repo"))
        result = await tool.call(tool.parse({"command": command}), ctx)
        after = fingerprint(root)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        unaccounted = [p for p in started(log) if p not in accounted(command)]
        shutil.rmtree(root)
        return {k: (before.get(k), after.get(k)) for k in changed}, unaccounted, str(result.content)

    yield run


@pytest.mark.parametrize("command", READ_ONLY)
async def test_every_read_only_line_changes_nothing_and_runs_nothing_else(
    run_traced: object, command: str
) -> None:
    assert is_read_only_command(command) or command.startswith(("cd ", "(cd "))
    changed, unaccounted, output = await run_traced(command)  # type: ignore[operator]
    assert changed == {}, (command, output)
    assert unaccounted == [], (command, output)


def _find_fls_harmless(monkeypatch: pytest.MonkeyPatch) -> None:
    effects = dict(argv_checks._FIND_EFFECTS)
    effects.pop("-fls")
    monkeypatch.setattr(argv_checks, "_FIND_EFFECTS", effects)
    monkeypatch.setattr(argv_checks, "_FIND_ONE_ARG", argv_checks._FIND_ONE_ARG | {"-fls"})


def _anything(args: Sequence[str]) -> str | None:
    """A check that lets any arguments through, as a program read-only with any would."""
    return None


def _sort_without_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(argv_checks.CHECKS, "sort", argv_checks._with(argv_checks._sort_spec))


def _uniq_any_operands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(argv_checks.CHECKS, "uniq", _anything)


def _sed_w_as_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scripts, "_SED_FILE_WRITE", frozenset())
    monkeypatch.setattr(scripts, "_SED_FILE_READ", frozenset("rRwW"))


def _git_output_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = {k: v for k, v in git_check._RUNS_OR_WRITES.items() if k != "--output"}
    monkeypatch.setattr(git_check, "_RUNS_OR_WRITES", kept)


def _awk_system_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(argv_checks.CHECKS, "awk", _anything)


def _file_compile_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(argv_checks.CHECKS, "file", argv_checks._with(argv_checks._file_spec))


GUARDS = {
    "find -fls": (_find_fls_harmless, "find . -fls ../beside/found.txt"),
    "sort -o": (_sort_without_judge, "sort -o sorted f"),
    "uniq OUTPUT": (_uniq_any_operands, "uniq f uniq.out"),
    "sed w": (_sed_w_as_read, "sed -n 'w sed.out' f"),
    "git --output": (_git_output_allowed, "git blame --output=blame.out f"),
    "awk system()": (_awk_system_allowed, "awk 'BEGIN { system(\"id -u\") }'"),
    "file -C": (_file_compile_allowed, "file -C -m magic"),
}


@pytest.mark.parametrize("guard", list(GUARDS))
async def test_the_oracle_catches_a_guard_removed_from_the_tables(
    run_traced: object, monkeypatch: pytest.MonkeyPatch, guard: str
) -> None:
    remove, command = GUARDS[guard]
    assert not is_read_only_command(command)
    remove(monkeypatch)
    assert is_read_only_command(command), "the guard was not what refused it"
    changed, unaccounted, output = await run_traced(command)  # type: ignore[operator]
    assert changed or unaccounted, (command, output)
