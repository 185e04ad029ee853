"""The turn gap of `codeloop -p` with tool-use summaries on and off, side by side.

Issue 38 wants the two within 2 ms of each other.

A 50-turn session, each turn one `echo N`, then the answer; with
CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES=1 every batch also sends its side request (the fake
server answers it after `--label-delay`, as a small model would, while the next turn runs).
The gap is from the end of one main response to the arrival of the next main request; the
runs alternate off and on, under the same load, and the table gives the median over every
turn of every run, each side, and the difference. Two kinds of main responses: whole at once
(the worst case: nothing to hide the side request behind), and streamed as a model writes
(~50 tokens/s, as bench/session_overhead.py paces them).

`--baseline DIR` runs another checkout's codeloop (DIR/src, e.g. main before a change) in the
same alternation: before and after side by side, under the same load.

    python -m bench.tool_summaries [--runs 5] [--turns 50] [--label-delay 0.05] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

from bench.common import CliMeasurement, median, ms, run_cli
from codeloop.side_requests import TOOL_SUMMARY_PROMPT
from codeloop.testing.scenario import Scenario, tool_use, turn

TASK = "echo-them-all"
LABELS = TOOL_SUMMARY_PROMPT.split(".")[0]


def conversations(turns: int, label_delay: float, *, paced: bool) -> dict[str, Scenario]:
    chunk, delay = (4, 0.02) if paced else (None, 0.0)
    steps = [
        turn(tool_use("Bash", {"command": f"echo {n}"}), chunk_chars=chunk, delay=delay)
        for n in range(turns)
    ]
    labels = [turn(f"Echoed {n}", delay=label_delay) for n in range(turns)]
    return {TASK: Scenario(turns=(*steps, turn("done"))), LABELS: Scenario(turns=tuple(labels))}


def main_gaps(m: CliMeasurement) -> list[float]:
    """The gaps between the main conversation's requests (the side requests left out)."""
    main = [r for r in m.requests if r.conversation == TASK]
    pairs = itertools.pairwise(main)
    return [b.arrived - a.finished for a, b in pairs if a.finished is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--label-delay", type=float, default=0.05)
    parser.add_argument("--baseline", type=Path, help="another checkout, run alike")
    args = parser.parse_args()
    sources: dict[str, dict[str, str]] = {"this": {}}
    if args.baseline is not None:
        sources[args.baseline.name] = {"PYTHONPATH": str(args.baseline.resolve() / "src")}
    gaps: dict[tuple[bool, str, bool], list[float]] = {}
    labels: dict[tuple[bool, str, bool], int] = {}
    for _ in range(args.runs):
        for key in itertools.product((False, True), sources, (False, True)):
            paced, source, on = key
            env = {"CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES": "1"} if on else {}
            m = run_cli(
                conversations(args.turns, args.label_delay, paced=paced),
                ["-p", f"{TASK} please", "--allowedTools", "Bash", "--output-format", "json"],
                env=env | sources[source],
            )
            if m.returncode != 0:
                sys.exit(f"run failed (exit {m.returncode}): {m.stderr}")
            gaps.setdefault(key, []).extend(main_gaps(m))
            labels[key] = labels.get(key, 0) + sum(r.conversation == LABELS for r in m.requests)
    print(f"codeloop -p, {args.turns} turns of `echo N`, {args.runs} runs each, alternating")
    print(
        "  turn gap (median)          codeloop   summaries off   summaries on    on - off   labels"
    )
    for paced, name in ((False, "answered at once"), (True, "streamed ~50 tok/s")):
        for source in sources:
            without, with_labels = (
                median(gaps[paced, source, False]),
                median(gaps[paced, source, True]),
            )
            count = labels[paced, source, True]
            extra = ms(with_labels - without)
            print(
                f"  {name:22} {source:>12} {ms(without):>15} {ms(with_labels):>14} {extra:>11}"
                f"   {count:>6}"
            )
    print("  target: on within 2 ms of off")


if __name__ == "__main__":
    main()
