"""Issue 20's acceptance: three sub-agents started in one response, each running a 1 s Bash;
how long after that response ends the main model's next request comes (target < 2 s; run one
after another it would be over 3 s). Beside it the same with one sub-agent: on a loaded
machine both grow, and their ratio shows whether the three ran side by side (about 1x) or
not (about 3x). A real `codeloop -p` against the fake model server, the scenario of
tests/e2e/test_subagents_parallel.py.

    python bench/subagents.py [--runs 5]
"""

from __future__ import annotations

import argparse
import sys

from bench.common import median, run_cli
from codeloop.testing.scenario import Scenario, tool_use, turn

JOBS = ("job-alpha", "job-beta", "job-gamma")
MAIN = "start the three jobs"


def scenarios(jobs: tuple[str, ...]) -> dict[str, Scenario]:
    calls = [
        tool_use("Agent", {"description": f"run {j}", "prompt": f"{j}: sleep, then report"})
        for j in jobs
    ]
    # The answer's text names the main conversation ahead of the agents' prompts (the fake
    # server picks the key earliest in the latest message naming one).
    opening = turn(f"Starting them: {MAIN}.", *calls)
    found = {MAIN: Scenario(turns=(opening, turn("All reported.")))}
    for job in jobs:
        found[f"{job}:"] = Scenario(
            turns=(turn(tool_use("Bash", {"command": "sleep 1"})), turn(f"report from {job}"))
        )
    return found


def gaps(jobs: tuple[str, ...], runs: int) -> list[float]:
    found = []
    for _ in range(runs):
        m = run_cli(scenarios(jobs), ["-p", MAIN, "--allowedTools", "Bash"])
        main_requests = [r for r in m.requests if r.conversation == MAIN]
        if m.returncode != 0 or len(main_requests) != 2:
            sys.exit(f"run failed (exit {m.returncode}): {m.stderr}")
        first, second = main_requests
        assert first.finished is not None
        found.append(second.arrived - first.finished)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"sub-agents x 1 s Bash, {runs} runs each: response end -> next main request")
    one, three = gaps(JOBS[:1], runs), gaps(JOBS, runs)
    for label, found in (("1 agent ", one), ("3 agents", three)):
        shown = ", ".join(f"{g:.2f}" for g in found)
        print(f"  {label} median {median(found):.2f} s (runs: {shown})")
    print(f"  ratio 3/1: {median(three) / median(one):.2f}x   target: 3 agents < 2 s, ratio ~1x")


if __name__ == "__main__":
    main()
