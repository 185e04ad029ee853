"""Kill `codeloop -p` with SIGKILL at random moments of a scripted session, continue each with
`codeloop -p --continue`, and count what the continued run's first request lost or got wrong.

The session: eight tool turns (some with two calls; tools take a few tens of milliseconds),
paced streaming, then an answer. A kill point is drawn at random among: the Nth request
arrived (kill mid-stream), the Nth answer was sent (kill while it is saved or its tools run),
the Nth stream-json line was printed. Both totals must be 0.

    python -m bench.crash_resume [--points 20] [--seed 8]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from codeloop.testing.crash import CrashOutcome, KillPoint, crash_and_resume
from codeloop.testing.scenario import Scenario, Turn, tool_use, turn

STEPS = 8


def scenario() -> Scenario:
    turns: list[Turn] = []
    for i in range(STEPS):
        calls = [tool_use("Bash", {"command": f"sleep 0.0{i % 5 + 1}; echo step {i}"})]
        if i % 3 == 1:
            calls.append(tool_use("Bash", {"command": f"echo second call {i}"}))
        turns.append(turn(f"Step {i}: running it.", *calls, chunk_chars=4, delay=0.002))
    turns.append(turn("All steps done.", chunk_chars=4, delay=0.002))
    return Scenario(turns=tuple(turns))


def random_point(rng: random.Random) -> KillPoint:
    """Requests and answers 1..STEPS+1; stream-json lines: init, then assistant and user lines
    for each tool turn."""
    return rng.choice(
        (
            KillPoint("request", rng.randint(1, STEPS + 1)),
            KillPoint("response", rng.randint(1, STEPS + 1)),
            KillPoint("line", rng.randint(1, 2 * STEPS + 1)),
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: list[CrashOutcome] = []
    started = time.monotonic()
    print(
        f"{'kill point':<14} {'killed':>6} {'saved':>5} {'repaired':>8} {'lost':>4} {'dup':>3}  ok"
    )
    for _ in range(args.points):
        point = random_point(rng)
        with tempfile.TemporaryDirectory() as work:
            outcome = crash_and_resume(Path(work), scenario(), point)
        outcomes.append(outcome)
        ok = not (outcome.problems or outcome.resumed_exit)
        print(
            f"{point!s:<14} {outcome.killed!s:>6} {outcome.written:>5} {outcome.repaired:>8} "
            f"{len(outcome.lost):>4} {outcome.duplicated:>3}  {'yes' if ok else outcome.problems}"
        )
    lost = sum(len(o.lost) for o in outcomes)
    invalid = sum(1 for o in outcomes if o.problems or o.resumed_exit)
    duplicated = sum(o.duplicated for o in outcomes)
    killed = sum(o.killed for o in outcomes)
    print(
        f"{len(outcomes)} kill points ({killed} killed mid-run), seed {args.seed}, "
        f"{time.monotonic() - started:.1f} s"
    )
    print(f"  lost messages      {lost}   (must be 0)")
    print(f"  invalid requests   {invalid}   (must be 0)")
    print(f"  duplicated         {duplicated}   (must be 0)")
    if lost or invalid or duplicated:
        sys.exit(1)


if __name__ == "__main__":
    main()
