"""How well `codeloop -p` overlaps tool execution with the model and with other tools.

Three scenarios from PEERS.md, each a real CLI process against the fake model server:
  readers   4 × `sleep 1` (read-only) in one response: next request after the response ends
  writers   4 × `sleep 1; touch fN` in one response: must run one at a time, in order
  overlap   `sleep 2` streamed first, then 5 s of text: next request after the stream ends

    python bench/executor_overlap.py [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench.common import CliMeasurement, median, run_cli
from codeloop.testing.scenario import Scenario, text, tool_use, turn


def readers() -> Scenario:
    calls = [tool_use("Bash", {"command": f"sleep 1 # reader {i}"}) for i in range(4)]
    return Scenario(turns=(turn(*calls), turn("done")))


def writers() -> Scenario:
    calls = [tool_use("Bash", {"command": f"sleep 1; touch f{i}"}) for i in range(4)]
    return Scenario(turns=(turn(*calls), turn("done")))


def overlap() -> Scenario:
    # 250 chunks of 4 characters, 20 ms apart: five seconds of streamed text after the tool.
    long_text = text("word" * 250)
    first = turn(tool_use("Bash", {"command": "sleep 2"}), long_text, chunk_chars=4, delay=0.02)
    return Scenario(turns=(first, turn("done")))


SCENARIOS = {
    "readers": (readers, "<= 1.3 s (serial: 4 s); Claude Code 1.10 s"),
    "writers": (writers, "~4 s, serial and in order; Claude Code 4.27 s, Codex 1.08 s (unsafe)"),
    "overlap": (overlap, "<= 0.1 s; Claude Code 0.018 s"),
}


def next_request_delay(m: CliMeasurement) -> float:
    first, second = m.requests[0], m.requests[1]
    assert first.finished is not None
    return second.arrived - first.finished


def writers_in_order(work: Path) -> bool:
    stamps = [(work / f"f{i}").stat().st_mtime_ns for i in range(4)]
    return stamps == sorted(stamps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(f"codeloop -p tool overlap, {runs} runs each (median of response end → next request)")
    for name, (build, reference) in SCENARIOS.items():
        delays, ordered = [], True
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as work:
                m = run_cli(build(), ["-p", "go", "--allowedTools", "Bash"], cwd=Path(work))
                if m.returncode != 0 or len(m.requests) != 2:
                    sys.exit(f"{name}: run failed (exit {m.returncode}): {m.stderr}")
                delays.append(next_request_delay(m))
                if name == "writers":
                    ordered = ordered and writers_in_order(Path(work))
        extra = f"   in order: {ordered}" if name == "writers" else ""
        print(f"  {name:8} {median(delays):7.3f} s   target {reference}{extra}")


if __name__ == "__main__":
    main()
