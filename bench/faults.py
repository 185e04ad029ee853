"""What each API fault costs `codeloop -p`, next to the least time the fault allows.

Each scenario is one answer preceded by a fault, served by the fake model server; the wall
time of the whole run is compared with a clean run, and the extra time with the minimum the
fault imposes (a retry-after, a watchdog timeout, the first backoff step).

    python bench/faults.py [--runs 3]
"""

from __future__ import annotations

import argparse
import sys

from bench.common import MODEL, median, run_cli
from codeloop.testing.scenario import Fault, Scenario, Turn, fault, tool_use, turn

WATCHDOG = 5.0
MODEL_NAME = MODEL.split(":", 1)[1]
BIG = "seq 1 4000"  # a tool output big enough that a summary is smaller than the history

# name: (turns before the answer, faults on the answer, least extra seconds, env, extra flags,
#        the exit status expected)
SCENARIOS: dict[str, tuple[list[Turn], list[Fault], float, dict[str, str], list[str], int]] = {
    "clean run": ([], [], 0.0, {}, [], 0),
    "529 once": ([], [fault("overloaded")], 0.5, {}, [], 0),
    "500 once": ([], [fault("server_error")], 0.5, {}, [], 0),
    "429 retry-after 2": ([], [fault("rate_limited", retry_after=2)], 2.0, {}, [], 0),
    "cut mid-text (resent at once)": ([], [fault("cut", after=3)], 0.0, {}, [], 0),
    "SSE error event": ([], [fault("sse_error", after=2)], 0.0, {}, [], 0),
    "40 s stall, watchdog 5 s": (
        [],
        [fault("stall", after=2, seconds=40)],
        WATCHDOG,
        {"CODELOOP_STREAM_IDLE_TIMEOUT": str(WATCHDOG)},
        [],
        0,
    ),
    "max_tokens (escalates)": ([turn("Part", stop_reason="max_tokens")], [], 0.0, {}, [], 0),
    "malformed tool JSON": (
        [turn(tool_use("Bash", raw_input='{"command": "ls"'))],
        [],
        0.0,
        {},
        [],
        0,
    ),
    "prompt too long (compacts)": (
        [turn(tool_use("Bash", {"command": f"{BIG} # {i}"})) for i in range(3)]
        + [turn("Summary of the work.", faults=[fault("prompt_too_long")])],
        [],
        0.0,
        {},
        [],
        0,
    ),
    "50 x 529, fallback model": (
        [],
        [fault("overloaded", times=50, model=MODEL_NAME)],
        0.5 + 1.0,  # backoff before the 2nd and 3rd tries, then the switch
        {},
        ["--fallback-model", "claude-haiku-4-5"],
        0,
    ),
    "50 x 529, no fallback (3 tries)": (
        [],
        [fault("overloaded", times=50)],
        0.5 + 1.0,
        {"CODELOOP_MAX_RETRIES": "3"},
        [],
        1,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(f"codeloop -p under faults, {runs} runs each (median wall time)")
    print(f"  {'fault':34} {'wall':>8} {'extra':>8} {'least':>8}")
    clean = 0.0
    for name, (before, faults, least, env, flags, status) in SCENARIOS.items():
        walls = []
        for _ in range(runs):
            answer = turn("The answer.", chunk_chars=3, faults=faults)
            scenario = Scenario(turns=(*before, answer))
            args = ["-p", "go", "--output-format", "json", "--allowedTools", "Bash", *flags]
            m = run_cli(scenario, args, env=env)
            if m.returncode != status:
                sys.exit(f"{name}: unexpected exit {m.returncode}: {m.stderr}")
            walls.append(m.ended - m.started)
        wall = median(walls)
        if name == "clean run":
            clean = wall
        print(f"  {name:34} {wall:7.2f}s {wall - clean:7.2f}s {least:7.2f}s")


if __name__ == "__main__":
    main()
