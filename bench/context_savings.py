"""Tokens sent per turn over a 200-turn session, with and without L1 (result budget) and L2
(microcompact); autocompact (L3) is on in every run, since nothing else fits the window.

The session is issue 5's acceptance session: 4 prompts × 50 turns, tool results of 20-40 KB,
a 64K window (claude-sonnet-4-5 with CODELOOP_CONTEXT_WINDOW=64000). The real loop and tools
run against scripted models in-process; a request's size is its Anthropic JSON body / 4, the
fake server's rule. Summary calls are requests too, and are counted.

    python bench/context_savings.py [--window 64000] [--prompts 4] [--turns 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, fields
from pathlib import Path

from codeloop.context.compact import is_summary_request
from codeloop.context.pipeline import ContextSettings
from codeloop.context.tokens import context_limits
from codeloop.events import LoopEnd
from codeloop.loop import LoopParams
from codeloop.models.anthropic import request_body
from codeloop.models.base import ModelRequest, StreamEvent
from codeloop.testing.long_session import long_session, play, summary_turns
from codeloop.testing.scripted import ScriptedModel

MODEL = "claude-sonnet-4-5"
CONFIGS = {
    "L1+L2+L3": ContextSettings(),
    "L2+L3 (no L1)": ContextSettings(persist_results=False),
    "L1+L3 (no L2)": ContextSettings(microcompact=False),
    "L3 only": ContextSettings(persist_results=False, microcompact=False),
}
BASELINE = "L3 only"


@dataclass
class Run:
    turns: list[float] = field(default_factory=list)  # tokens of each main request
    summaries: list[float] = field(default_factory=list)  # tokens of each summary request

    @property
    def total(self) -> float:
        return sum(self.turns) + sum(self.summaries)


def tokens(request: ModelRequest) -> float:
    return len(json.dumps(request_body(request), separators=(",", ":"))) / 4


async def run_session(settings: ContextSettings, prompts: int, turns: int) -> Run:
    run = Run()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        script = long_session(root / "work", prompts=prompts, turns_per_prompt=turns)
        main, summarizer = ScriptedModel(script.turns), ScriptedModel(summary_turns(400))

        def route(request: ModelRequest) -> AsyncIterator[StreamEvent]:
            if is_summary_request(request):
                run.summaries.append(tokens(request))
                return summarizer.stream(request)
            run.turns.append(tokens(request))
            return main.stream(request)

        results = root / "tool-results"
        async for event in play(script, route, model=MODEL, settings=settings, results_dir=results):
            if isinstance(event, LoopEnd) and event.reason != "completed":
                raise SystemExit(f"the session ended {event.reason}: {event.error}")
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=64_000)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--turns", type=int, default=50, help="model turns per prompt")
    args = parser.parse_args()
    if "context" not in {f.name for f in fields(LoopParams)}:
        raise SystemExit("the context manager is not wired into loop.py yet (issue 5)")
    os.environ["CODELOOP_CONTEXT_WINDOW"] = str(args.window)
    limits = context_limits(MODEL)
    print(
        f"{args.prompts} prompts × {args.turns} turns, window {limits.window:,}: autocompact "
        f"at {limits.autocompact_at:,}, blocking at {limits.blocking_at:,} (estimated tokens)"
    )
    runs = {
        name: asyncio.run(run_session(s, args.prompts, args.turns)) for name, s in CONFIGS.items()
    }
    n = args.prompts * args.turns
    bucket = max(1, n // 8)
    print("\nmean tokens per request, by turns (summary calls not included):")
    print(f"{'turns':>12}" + "".join(f"{name:>16}" for name in runs))
    for start in range(0, n, bucket):
        cells = "".join(
            f"{statistics.mean(r.turns[start : start + bucket]):>16,.0f}" for r in runs.values()
        )
        print(f"{start + 1:>5}-{min(n, start + bucket):<6}" + cells)
    print(
        f"\n{'':16}{'median/turn':>12}{'max req':>9}{'summaries':>10}"
        f"{'in summaries':>14}{'all sent/turn':>15}{'saving':>8}"
    )
    base = runs[BASELINE].total
    for name, r in runs.items():
        print(
            f"{name:16}{statistics.median(r.turns):>12,.0f}{max(r.turns + r.summaries):>9,.0f}"
            f"{len(r.summaries):>10}{sum(r.summaries):>14,.0f}{r.total / n:>15,.0f}"
            f"{1 - r.total / base:>8.0%}"
        )
    print(f"\nsaving: tokens sent in all (summary calls included) against {BASELINE}")


if __name__ == "__main__":
    main()
