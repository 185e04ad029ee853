"""Start-up, memory and per-turn overhead of `codeloop -p` against the fake model server.

A 20-turn session where each turn runs the trivial tool `echo N`, then a final answer.
Prints medians over several runs of: process start → first model request, peak RSS, and the
gap from the end of one response to the arrival of the next request.

    python bench/headless_turns.py [--runs 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from bench.common import median, ms, run_cli
from codeloop.testing.scenario import Scenario, tool_use, turn

TURNS = 20
PEERS = "Claude Code 0.69 s / 290 MB / 49 ms; Codex CLI 0.52 s / 183 MB / 59 ms"


def scenario() -> Scenario:
    steps = [turn(tool_use("Bash", {"command": f"echo {n}"})) for n in range(TURNS - 1)]
    return Scenario(turns=(*steps, turn("done")))


def python_floor() -> float:
    """Bare interpreter start-up on this machine, for scale."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    starts, rss, gaps, walls = [], [], [], []
    for _ in range(runs):
        m = run_cli(scenario(), ["-p", "go", "--allowedTools", "Bash", "--output-format", "json"])
        if m.returncode != 0 or len(m.requests) != TURNS:
            sys.exit(f"run failed (exit {m.returncode}, {len(m.requests)} requests): {m.stderr}")
        starts.append(m.to_first_request)
        rss.append(m.peak_rss_mb)
        gaps.extend(m.gaps())
        walls.append(m.ended - m.started)
    print(f"codeloop -p, {TURNS} turns of `echo N`, {runs} runs (medians)")
    print(f"  python -c pass (floor)        {ms(python_floor())}")
    print(f"  start → first model request   {ms(median(starts))}   target <= 250 ms")
    print(f"  peak RSS                      {median(rss):8.1f} MB   target <= 60 MB")
    print(f"  gap between turns             {ms(median(gaps))}   target <= 20 ms")
    print(f"  whole run, wall               {ms(median(walls))}")
    print(f"  peers on the same harness: {PEERS}")


if __name__ == "__main__":
    main()
