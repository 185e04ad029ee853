"""Shell safety over the project's table (codeloop/testing/shell_cases.py): how many read-only
lines run unasked, how many writes are caught, in default mode with no rules, and with only
`git status` and `ls` allowed (the rules issue 12 measured); and how long a decision takes.

    python -m bench.shell_safety
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from codeloop.permissions.policy import Policy
from codeloop.testing import shell_cases as cases
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools

BASH = default_tools()["Bash"]


def decide(repo: Path, home: Path, command: str, allow: list[str]) -> tuple[str, float]:
    policy = Policy("default", allow, roots=[repo], home=home)
    start = time.perf_counter()
    decision = policy.decide(BASH, BASH.parse({"command": command}), Workspace(cwd=repo))
    return decision.behavior, time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        repo = cases.shell_world(root)
        home = root / "home"
        home.mkdir()
        writes = [*cases.WORKSPACE_WRITES, *cases.MUST_ASK]
        for allow in ([], cases.ALLOWED_BY_RULES):
            ran = [decide(repo, home, c, allow) for c in cases.READ_ONLY]
            caught = [decide(repo, home, c, allow) for c in writes]
            unasked = sum(b == "allow" for b, _ in ran)
            stopped = sum(b != "allow" for b, _ in caught)
            times = [t for _, t in ran + caught]
            rules = ", ".join(allow) or "no rules"
            print(f"default mode, {rules}:")
            print(f"  read-only lines run unasked: {unasked}/{len(ran)}")
            print(f"  writes and programs caught:  {stopped}/{len(caught)}")
            print(
                f"  decision time: median {statistics.median(times) * 1000:.2f} ms, "
                f"max {max(times) * 1000:.1f} ms"
            )
        idioms = sum(decide(repo, home, c, [])[0] == "allow" for c in cases.IDIOMS)
        print(f"issue 12's read-only idioms run unasked: {idioms}/{len(cases.IDIOMS)}")


if __name__ == "__main__":
    main()
