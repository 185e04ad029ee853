"""What checkpoints cost: per writing turn (time and disk) on a 10,000-file repository, and
how long a rewind takes.

A git repository of FILES source files (~45 MB) is made in a temporary folder. Measured with
the real `Checkpoints` (the session's own code path, worker thread aside):

- the first checkpoint, which reads every file (a session's first writing turn);
- a writing turn: the checkpoint before it plus the snapshot after it, the turn editing a few
  files (median and p90 of TURNS turns), and the disk each turn adds;
- the same from a new process (the stat cache seeded from the journal, as after a crash);
- a dry run and a rewind to the first checkpoint, undoing every turn; and the undo of it;
- in the real CLI against the fake server: the gap from each answer to the next request in a
  session of writing turns (Bash appending to a file), with checkpoints on and off.

Printed, never asserted.

    python -m bench.checkpoints [--files 10000] [--turns 20] [--cli-turns 10]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bench.common import median, run_cli
from codeloop.checkpoints.manager import Checkpoints
from codeloop.testing.scenario import Scenario, tool_use, turn
from codeloop.testing.tree import tree_digest

T = TypeVar("T")


def make_repo(root: Path, files: int, rng: random.Random) -> None:
    for i in range(files):
        folder = root / f"pkg{i % 50}" / f"mod{(i // 50) % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.py").write_text(f"value_{i} = {i}\n" * rng.randint(10, 400))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root.parent)}
    env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        git = ["git", "-c", "gc.auto=0", "-c", "user.name=b", "-c", "user.email=b@b", *args]
        subprocess.run(git, cwd=root, env=env, check=True)


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - started) * 1000


def store_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())


def edit_some(root: Path, rng: random.Random, turn: int) -> None:
    """What a writing turn does: edit three files, add one, remove one."""
    paths = sorted(root.glob("pkg*/mod*/file*.py"))
    for path in rng.sample(paths, 3):
        with path.open("a") as f:
            f.write(f"# turn {turn}\n")
    (root / f"pkg{turn % 50}" / f"added{turn}.py").write_text(f"added = {turn}\n")
    rng.choice(paths).unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--cli-turns", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(21)
    with tempfile.TemporaryDirectory() as tmp:
        repo, store = Path(tmp) / "repo", Path(tmp) / "store"
        make_repo(repo, args.files, rng)
        size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
        print(f"repository: {args.files:,} files, {size / 1e6:.1f} MB (with .git)")
        original = tree_digest(repo)

        cps = Checkpoints(store, [repo])
        first, first_ms = timed(lambda: cps.take([], label="first"))
        stored = store_bytes(store) / 1e6
        print(f"first checkpoint (reads every file): {first_ms:.0f} ms, store {stored:.1f} MB")
        cps.finish(first.number)

        turn_ms: list[float] = []
        turn_bytes: list[int] = []
        for turn in range(args.turns):
            before = store_bytes(store)
            cp, take_ms = timed(functools.partial(cps.take, [], label=f"turn {turn}"))
            edit_some(repo, rng, turn)
            _, finish_ms = timed(functools.partial(cps.finish, cp.number))
            turn_ms.append(take_ms + finish_ms)
            turn_bytes.append(store_bytes(store) - before)
        changed = tree_digest(repo)
        cps.close()
        median, disk = statistics.median(turn_ms), statistics.median(turn_bytes) / 1024
        print(
            f"writing turn (checkpoint before + snapshot after): median {median:.0f} ms, "
            f"p90 {_p90(turn_ms):.0f} ms, disk {disk:.1f} KiB per turn"
        )

        fresh = Checkpoints(store, [repo])  # a new process: cache from the journal
        cp, cold_ms = timed(lambda: fresh.take([], label="after restart"))
        print(f"checkpoint from a new process (cache seeded from the journal): {cold_ms:.0f} ms")

        dry, dry_ms = timed(lambda: fresh.rewind(first.number, history=[], dry_run=True))
        print(
            f"dry run to checkpoint 1 ({len(dry.plan.changes)} paths to set back): {dry_ms:.0f} ms"
        )
        done, rewind_ms = timed(lambda: fresh.rewind(first.number, history=[]))
        same = "identical" if tree_digest(repo) == original else "DIFFERENT"
        print(f"rewind to checkpoint 1, undoing {args.turns} turns: {rewind_ms:.0f} ms ({same})")
        assert done.undo is not None
        _, undo_ms = timed(functools.partial(fresh.rewind, done.undo.number, history=[]))
        same = "identical" if tree_digest(repo) == changed else "DIFFERENT"
        print(f"undo of that rewind: {undo_ms:.0f} ms ({same})")
        fresh.close()
        stored = store_bytes(store) / 1e6
        print(f"store after all: {stored:.1f} MB for {len(fresh.list())} checkpoints")
        cli_gaps(repo, args.cli_turns)


def cli_gaps(repo: Path, turns: int) -> None:
    """Answer-to-next-request gaps of a headless session whose every turn writes."""
    calls = [
        turn(f"Step {i}.", tool_use("Bash", {"command": f"echo {i} >> pkg{i}/log.txt"}))
        for i in range(turns)
    ]
    scenario = Scenario(turns=(*calls, turn("Done.")))
    flags = ["-p", "append", "--permission-mode", "bypassPermissions"]
    for label, value in (("off", "0"), ("on", "1")):
        with tempfile.TemporaryDirectory() as data:
            env = {"CODELOOP_CHECKPOINTS": value, "CODELOOP_HOME": data}
            run = run_cli(scenario, flags, cwd=repo, env=env)
        gaps = run.gaps()
        if run.returncode != 0 or not gaps:
            print(f"cli run with checkpoints {label} failed: {run.stderr.strip()[:200]}")
            return
        print(
            f"cli, checkpoints {label:>3}: first writing turn's gap {gaps[0] * 1000:.0f} ms, "
            f"later ones median {median(gaps[1:]) * 1000:.0f} ms ({len(gaps)} gaps)"
        )


def _p90(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9) - 1] if len(values) >= 10 else max(values)


if __name__ == "__main__":
    main()
