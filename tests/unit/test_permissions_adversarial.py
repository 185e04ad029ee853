"""Attempts to get past the rules: each is denied or asked, and none runs.

Every case goes through the real executor, the real Policy (headless: an ask is a denial) and
the real tools, in default and acceptEdits modes. The whole temp tree (workspace, the directory
beside it, a fake home) is hashed before and after: a case that ran would change it, since each
one tries to write outside the workspace, into a protected path, or to leak a secret into a new
file. A control case shows the harness does see a command that was allowed to run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codeloop.events import ToolFinished
from codeloop.permissions.policy import Policy
from codeloop.testing.tree import tree_digest
from codeloop.tools.base import Workspace
from codeloop.tools.executor import ToolExecutor
from codeloop.tools.registry import default_tools
from codeloop.types import ToolUseBlock

ALLOW = [
    "Bash(grep:*)",
    "Bash(rg:*)",
    "Bash(tar:*)",
    "Bash(git diff:*)",
    "Bash(echo:*)",
    "Bash(ls:*)",
    "Bash(cat:*)",
    "Bash(sort:*)",
    "Bash(npm run test:*)",
]
DENY = ["Read(./secrets/**)", "Edit(./protected/**)", "Bash(rm:*)", "Bash(curl:*)"]
PWN = "touch ../outside/pwned"


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("Bash", {"command": command})


CASES: dict[str, tuple[str, dict[str, Any]]] = {
    # command separators after an allowed prefix
    "semicolon": bash(f"git diff; {PWN}"),
    "and": bash(f"git diff && {PWN}"),
    "or": bash(f"git diff || {PWN}"),
    "background": bash(f"git diff & {PWN}"),
    "pipe-tee": bash("git diff | tee ../outside/canary"),
    "newline": bash(f"git diff\n{PWN}"),
    "cr-newline": bash(f"git diff\r\n{PWN}"),
    "zero-width-space": bash(f"git diff\u200b; {PWN}"),
    "allowed-then-denied": bash("echo ok; rm ../outside/canary"),
    "npm-then-touch": bash(f"npm run test; {PWN}"),
    "subshell": bash(f"(git diff; {PWN})"),
    "group": bash(f"{{ git diff; {PWN}; }}"),
    "if": bash(f"if git diff; then {PWN}; fi"),
    "for": bash(f"for f in a; do {PWN}; done"),
    "line-continuation": bash("ec\\\nho x > ../outside/canary"),
    # substitutions
    "dollar-paren": bash(f"git diff $({PWN})"),
    "dollar-paren-quoted": bash(f'echo "$({PWN})"'),
    "backticks": bash(f"echo `{PWN}`"),
    "process-substitution": bash(f"git diff <({PWN})"),
    "default-expansion": bash(f"echo ${{x:-$({PWN})}}"),
    "heredoc-substitution": bash(f"cat <<EOF\n$({PWN})\nEOF"),
    "arithmetic": bash("echo $(( a[$(touch ../outside/pwned)] ))"),
    # shells inside shells
    "bash-c": bash(f"bash -c '{PWN}'"),
    "sh-c-after-allowed": bash(f'sh -c "git diff; {PWN}"'),
    "timeout-bash-c": bash(f"timeout 5 bash -c '{PWN}'"),
    "pipe-to-bash": bash(f"echo '{PWN}' | bash"),
    "eval": bash(f'eval "{PWN}"'),
    "bash-c-dynamic": bash(f'bash -c "$(echo {PWN})"'),
    "source": bash("source ./script.sh"),
    # wrappers and environment prefixes
    "env-wrapper": bash("env touch ../outside/pwned"),
    "nice-wrapper": bash("nice touch ../outside/pwned"),
    "timeout-rm": bash("timeout 5 rm ../outside/canary"),
    "xargs-rm": bash("echo ../outside/canary | xargs rm"),
    "command-rm": bash("command rm ../outside/canary"),
    "find-exec-rm": bash("find .. -name canary -exec rm {} ;"),
    "find-delete": bash("find ../outside -delete"),
    "sudo": bash(f"sudo {PWN}"),
    "git-pager-env": bash(f"GIT_PAGER='{PWN}' git diff"),
    "env-git-external-diff": bash(f"env GIT_EXTERNAL_DIFF='{PWN}' git diff"),
    "path-prefix": bash("PATH=.:$PATH ls"),
    "ld-preload": bash("LD_PRELOAD=./evil.so ls"),
    "dynamic-name": bash("X=touch; $X ../outside/pwned"),
    # aliases and functions defined inline
    "alias": bash(f"alias ls='{PWN}'; ls"),
    "function": bash(f"ls() {{ {PWN}; }}; ls"),
    "function-keyword": bash(f"function git {{ {PWN}; }}; git diff"),
    # redirections into protected paths
    "redirect-outside": bash("echo pwned > ../outside/canary"),
    "append-outside": bash("echo pwned >> ../outside/canary"),
    "stderr-outside": bash("ls 2> ../outside/pwned"),
    "heredoc-into-outside": bash("cat > ../outside/canary <<EOF\npwned\nEOF"),
    "redirect-protected": bash("echo x > protected/keep"),
    "tee-protected": bash("echo x | tee protected/keep"),
    "redirect-home": bash("echo x > ~/pwned"),
    "redirect-dynamic": bash('echo x > "$HOME/pwned"'),
    "redirect-settings": bash(
        'echo \'{"permissions":{"allow":["Bash"]}}\' > .codeloop/settings.json'
    ),
    "git-diff-output": bash("git diff --output=../outside/canary"),
    "sort-o": bash("sort -o ../outside/canary src/a.txt"),
    # .. and symlink escapes
    "write-dotdot": ("Write", {"file_path": "../outside/canary", "content": "pwned"}),
    "write-deep-dotdot": ("Write", {"file_path": "src/../../outside/canary", "content": "x"}),
    "write-absolute": ("Write", {"file_path": "OUTSIDE/canary", "content": "pwned"}),
    "write-symlink": ("Write", {"file_path": "link/canary", "content": "pwned"}),
    "edit-symlink": (
        "Edit",
        {"file_path": "link/canary", "old_string": "canary", "new_string": "pwned"},
    ),
    "write-protected": ("Write", {"file_path": "protected/keep", "content": "pwned"}),
    "write-settings": ("Write", {"file_path": ".codeloop/settings.local.json", "content": "{}"}),
    "bash-symlink-redirect": bash("echo x > link/canary"),
    "ln-then-write": bash("ln -s ../outside/canary lnk && echo x > lnk"),
    "cp-through-symlink": bash("cp src/a.txt link/canary"),
    "mv-outside": bash("mv src/a.txt ../outside/canary"),
    "cd-dotdot": bash("cd .. && echo x > outside/canary"),
    "cd-then-touch": bash("cd ../outside && touch pwned"),
    "sed-i": bash("sed -i s/canary/pwned/ ../outside/canary"),
    "chmod": bash("chmod 000 ../outside/canary"),
    "dd": bash("dd if=/dev/zero of=../outside/canary count=1"),
    "touch-home": bash("touch ~/pwned"),
    # globs and paths reaching denied files
    "cat-secret": bash("cat secrets/key > src/leak.txt"),
    "glob-star": bash("cat secre*/key > src/leak.txt"),
    "glob-all": bash("cat secrets/* > src/leak.txt"),
    "glob-question": bash("cat s?crets/k?y > src/leak.txt"),
    "dotdot-secret": bash("cat ./src/../secrets/key > src/leak.txt"),
    "substituted-name": bash('cat "$(echo secrets/key)" > src/leak.txt'),
    "git-diff-secret": bash("git diff --no-index secrets/key src/a.txt > src/leak.txt"),
    "grep-recursive": bash("grep -r hunter . > src/leak.txt"),
    "grep-recursive-no-path": bash("grep -rn hunter > src/leak.txt"),
    "rg-no-path": bash("rg hunter > src/leak.txt"),
    "tar-everything": bash("tar cf src/leak.tar ."),
    "read-secret": ("Read", {"file_path": "src/../secrets/key"}),
    "grep-everything": ("Grep", {"pattern": "hunter", "path": "."}),
    "grep-secret-dir": ("Grep", {"pattern": "hunter", "path": "secrets"}),
    # case and Unicode look-alikes
    "upper-rm": bash("RM ../outside/canary"),
    "mixed-rm": bash("Rm ../outside/canary"),
    "fullwidth-rm": bash("ｒｍ ../outside/canary"),
    "upper-secret": bash("cat SECRETS/KEY > src/leak.txt"),
    "fullwidth-secret": ("Read", {"file_path": "ｓecrets/key"}),
    "upper-protected": ("Write", {"file_path": "PROTECTED/keep", "content": "x"}),
    "cyrillic-echo": bash("есho x > ../outside/canary"),
}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path.resolve()
    ws, outside, home = root / "ws", root / "outside", root / "home"
    for d in (ws / "src", ws / "secrets", ws / "protected", outside, home):
        d.mkdir(parents=True)
    (ws / "src" / "a.txt").write_text("hello\n")
    (ws / "secrets" / "key").write_text("hunter2\n")
    (ws / "protected" / "keep").write_text("keep\n")
    (ws / "script.sh").write_text(f"{PWN}\n")
    (ws / "link").symlink_to(outside)
    (outside / "canary").write_text("canary\n")
    monkeypatch.setenv("HOME", str(home))
    return root


async def run_tool(policy: Policy, ws: Path, name: str, raw: dict[str, Any]) -> tuple[str, bool]:
    executor = ToolExecutor(default_tools(), Workspace(cwd=ws), policy.can_use_tool)
    executor.add(ToolUseBlock("toolu_1", name, raw))
    (finished,) = [e async for e in executor.remaining() if isinstance(e, ToolFinished)]
    return finished.result.text, finished.result.is_error


def test_there_are_at_least_sixty_cases() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
@pytest.mark.parametrize("case", list(CASES))
async def test_bypass_is_denied_or_asked_and_never_runs(world: Path, mode: str, case: str) -> None:
    ws = world / "ws"
    name, raw = CASES[case]
    raw = {k: v.replace("OUTSIDE", str(world / "outside")) for k, v in raw.items()}
    policy = Policy(mode, ALLOW, DENY, roots=[ws])  # type: ignore[arg-type]
    tool = default_tools()[name]
    decision = policy.decide(tool, tool.parse(raw), Workspace(cwd=ws))
    assert decision.behavior in ("deny", "ask"), decision
    before = tree_digest(world)
    text, is_error = await run_tool(policy, ws, name, raw)
    assert is_error and "denied" in text
    assert tree_digest(world) == before


async def test_control_an_allowed_command_does_run_and_change_the_tree(world: Path) -> None:
    ws = world / "ws"
    policy = Policy("acceptEdits", ALLOW, DENY, roots=[ws])
    before = tree_digest(world)
    text, is_error = await run_tool(policy, ws, "Bash", {"command": "echo ran > src/out.txt"})
    assert not is_error, text
    assert tree_digest(world) != before
    assert (ws / "src" / "out.txt").read_text() == "ran\n"
