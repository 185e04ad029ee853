"""How much of each request a prompt cache could reuse (issue 37): a session of Reads of
distinct files and Bash calls through the real CLI against the fake server (which refuses, as
a server would, any request over the window), at several windows; each request compared with
the one before it as the server received it (codeloop.testing.prefix_reuse).

llama.cpp keeps its KV cache for the byte-identical beginning of the prompt and processes the
rest: "processed" is the first request whole plus what each later one does not share with
the one before, at 4 characters a token. A second checkout (`--before`, e.g. one of main made
with `git worktree add --detach /tmp/before main`) runs the same session for a side-by-side.

    python bench/prefix_reuse.py [--before /tmp/before] [--windows 8192,16384,32768]
        [--turns 13] [--file-bytes 6000] [--provider openai|anthropic] [--per-turn]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.long_session import summary_turns
from codeloop.testing.prefix_reuse import PROMPT, Step, prompt_tokens, reuse, write_workload
from codeloop.testing.scenario import Scenario

MODELS = {"openai": "openai:gpt-6.2-sol", "anthropic": "anthropic:claude-sonnet-4-5"}


@dataclass
class Session:
    first: int  # tokens of the first request
    steps: list[Step]  # each later main request against the one before
    summaries: int
    refused: int
    returncode: int

    @property
    def processed(self) -> int:
        return self.first + sum(step.processed for step in self.steps)

    @property
    def extending(self) -> int:
        return sum(step.extends for step in self.steps)


def run(source: Path | None, window: int, turns: int, file_bytes: int, provider: str) -> Session:
    """One session with the codeloop of `source` (a checkout; None: this one)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        script = write_workload(root, turns, file_bytes)
        with FakeModelServer(
            Scenario(turns=tuple(script)), max_prompt_tokens=window, summaries=summary_turns(50)
        ) as server:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(root),
                "CODELOOP_HOME": str(root / "home"),
                "CODELOOP_CONTEXT_WINDOW": str(window),
            }
            if source is not None:
                env["PYTHONPATH"] = str(source / "src")
            if provider == "openai":
                env |= {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "bench"}
            else:
                env |= {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "b"}
            argv = [sys.executable, "-m", "codeloop", "-p", PROMPT, "--model", MODELS[provider]]
            done = subprocess.run(
                argv, cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False
            )
            requests = server.requests
    main = [r for r in requests if r.conversation != "summaries" and r.status == 200]
    steps = reuse([r.body for r in main])
    return Session(
        prompt_tokens(main[0].body) if main else 0,
        steps,
        sum(r.conversation == "summaries" for r in requests),
        sum(r.status != 200 for r in requests),
        done.returncode,
    )


def _cell(step: Step | None) -> str:
    if step is None:
        return f"{'':>16}"
    mark = "" if step.extends else "*"
    return f"{step.tokens:>8,} {step.reused / step.tokens:>5.0%}{mark:<1} "


def per_turn(sessions: dict[str, Session]) -> None:
    names = list(sessions)
    print(f"  {'request':>7}" + "".join(f"{n + ' (tokens, reused)':>26}" for n in names))
    longest = max(len(s.steps) for s in sessions.values())
    for i in range(longest):
        cells = [_cell(s.steps[i] if i < len(s.steps) else None) for s in sessions.values()]
        print(f"  {i + 2:>7}" + "".join(f"{c:>26}" for c in cells))
    print("  (* the request does not extend the one before it byte for byte)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout to compare with")
    parser.add_argument("--windows", default="8192,16384,32768")
    parser.add_argument("--turns", type=int, default=13, help="tool-calling turns")
    parser.add_argument("--file-bytes", type=int, default=6_000)
    parser.add_argument("--provider", choices=sorted(MODELS), default="openai")
    parser.add_argument("--per-turn", action="store_true", help="every request's reuse")
    args = parser.parse_args()
    sources: dict[str, Path | None] = {"after": None}
    if args.before is not None:
        if not (args.before / "src" / "codeloop").is_dir():
            parser.error(f"--before {args.before}: not a codeloop checkout (no src/codeloop)")
        sources = {"before": args.before, "after": None}
    windows = [int(w) for w in args.windows.split(",")]
    print(
        f"{args.turns} tool turns (Read of a ~{args.file_bytes:,} B file / cat of a log, "
        f"alternating) and an answer; {args.provider} provider; tokens = characters / 4"
    )
    header = f"{'window':>8} {'':>6}{'processed':>11}{'extending':>11}{'summaries':>11}"
    rows = []
    for window in windows:
        sessions = {
            name: run(source, window, args.turns, args.file_bytes, args.provider)
            for name, source in sources.items()
        }
        rows.append((window, sessions))
        if args.per_turn:
            print(f"\nwindow {window:,}: each request against the one before")
            per_turn(sessions)
    print("\nper session: tokens the server processes (the first request whole, then what each")
    print("request does not share with the one before), requests extending the one before")
    print(header + f"{'refused':>9}{'exit':>6}")
    for window, sessions in rows:
        for name, s in sessions.items():
            print(
                f"{window:>8,} {name:>6}{s.processed:>11,}{s.extending:>7}/{len(s.steps):<3}"
                f"{s.summaries:>11}{s.refused:>9}{s.returncode:>6}"
            )
        if "before" in sessions:
            ratio = sessions["after"].processed / max(sessions["before"].processed, 1)
            print(f"{'':>8} {'ratio':>6}{ratio:>11.2f}")


if __name__ == "__main__":
    main()
