"""What each API fault costs `codeloop -p`, next to the least time the fault allows.

Each scenario is one answer preceded by a fault, served by the fake model server; the wall
time of the whole run is compared with a clean run, and the extra time with the minimum the
fault imposes (a retry-after, a watchdog timeout, the first backoff step).

    python bench/faults.py [--runs 3]
"""

from __future__ import annotations

import argparse
import sys

from bench.common import median, run_cli
from codeloop.testing.scenario import Fault, Scenario, fault, turn

WATCHDOG = 5.0
SCENARIOS: dict[str, tuple[list[Fault], float, dict[str, str]]] = {
    "clean run": ([], 0.0, {}),
    "529 once": ([fault("overloaded")], 0.5, {}),
    "500 once": ([fault("server_error")], 0.5, {}),
    "429 retry-after 2": ([fault("rate_limited", retry_after=2)], 2.0, {}),
    "cut mid-text": ([fault("cut", after=3)], 0.5, {}),
    "SSE error event": ([fault("sse_error", after=2)], 0.5, {}),
    "40 s stall, watchdog 5 s": (
        [fault("stall", after=2, seconds=40)],
        WATCHDOG,
        {"CODELOOP_STREAM_IDLE_TIMEOUT": str(WATCHDOG)},
    ),
    "prompt too long (no history)": ([fault("prompt_too_long")], 0.0, {}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(f"codeloop -p under faults, {runs} runs each (median wall time)")
    print(f"  {'fault':30} {'wall':>8} {'extra':>8} {'least':>8}")
    clean = 0.0
    for name, (faults, least, env) in SCENARIOS.items():
        walls = []
        for _ in range(runs):
            scenario = Scenario(turns=(turn("The answer.", chunk_chars=3, faults=faults),))
            m = run_cli(scenario, ["-p", "go", "--output-format", "json"], env=env)
            expect_ok = name != "prompt too long (no history)"
            if (m.returncode == 0) != expect_ok:
                sys.exit(f"{name}: unexpected exit {m.returncode}: {m.stderr}")
            walls.append(m.ended - m.started)
        wall = median(walls)
        if not faults:
            clean = wall
        print(f"  {name:30} {wall:7.2f}s {wall - clean:7.2f}s {least:7.2f}s")


if __name__ == "__main__":
    main()
